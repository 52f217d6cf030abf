/* Static texts for status codes and event kinds: pure C, no allocation, so
 * async-signal-safe and usable in a fork child. */
#include "internal.h"

const char *hev2_strerror(int status)
{
	switch (status) {
	case HEV2_OK: return "success";
	case HEV2_EINVAL: return "invalid argument";
	case HEV2_EHOST: return "invalid host (NULL, empty, NUL byte, or over 253 characters)";
	case HEV2_EPORT: return "invalid or unknown port";
	case HEV2_EOPTIONS: return "invalid options";
	case HEV2_EHANDLE: return "invalid handle (never issued or already released)";
	case HEV2_EAGAIN: return "not done yet";
	case HEV2_ECAPACITY: return "over capacity: too many connections in flight";
	case HEV2_EFORKED: return "called in a fork child: hev2 cannot be used after fork(); load it in the child";
	case HEV2_ENOTSUP: return "not supported by this build";
	case HEV2_ESYSTEM: return "system resource failure";
	case HEV2_EINTERNAL: return "internal error in hev2";
	case HEV2_ECONNECT: return "connection failed";
	case HEV2_ERESOLVE: return "name resolution failed";
	case HEV2_ETIMEOUT: return "timed out";
	case HEV2_ECANCELED: return "canceled";
	}
	return "unknown hev2 status";
}

const char *hev2_event_name(int kind)
{
	switch (kind) {
	case HEV2_EV_LOOKUP_STARTED: return "lookup-started";
	case HEV2_EV_LOOKUP_ANSWERED: return "lookup-answered";
	case HEV2_EV_LOOKUP_FAILED: return "lookup-failed";
	case HEV2_EV_LOOKUP_CANCELED: return "lookup-canceled";
	case HEV2_EV_RESOLUTION_DELAY: return "resolution-delay";
	case HEV2_EV_ATTEMPT_STARTED: return "attempt-started";
	case HEV2_EV_ATTEMPT_FAILED: return "attempt-failed";
	case HEV2_EV_ATTEMPT_WON: return "attempt-won";
	case HEV2_EV_ATTEMPT_CLOSED: return "attempt-closed";
	case HEV2_EV_TIMEOUT: return "timeout";
	case HEV2_EV_CANCELED: return "canceled";
	case HEV2_EV_DONE: return "done";
	case HEV2_EV_ATTEMPT_DELAY: return "attempt-delay";
	case HEV2_EV_NAT64_DISCOVERY: return "nat64-discovery";
	case HEV2_EV_NAT64_PREFIX: return "nat64-prefix";
	case HEV2_EV_SYNTHESIZED: return "synthesized";
	case HEV2_EV_HISTORY: return "history";
	case HEV2_EV_SERVICE_LOOKUP_STARTED: return "service-lookup-started";
	case HEV2_EV_SERVICE_LOOKUP_ANSWERED: return "service-lookup-answered";
	case HEV2_EV_SERVICE_LOOKUP_FAILED: return "service-lookup-failed";
	case HEV2_EV_SERVICE_LOOKUP_CANCELED: return "service-lookup-canceled";
	case HEV2_EV_SERVICE_STATE: return "service-state";
	case HEV2_EV_SERVICE_ADDED: return "service-added";
	case HEV2_EV_SERVICE_SKIPPED: return "service-skipped";
	case HEV2_EV_ENDPOINT_REMOVED: return "endpoint-removed";
	}
	return "unknown";
}
