/*
 * hev2-connect's view of the establishment report (hev2_report): the
 * "report" field of --json and the summary line of -v. Only numbers, fixed
 * names and IP addresses are printed, so no JSON escaping is needed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "hev2.h"
#include "report.h"

/* The names core gives the report's constants (core.WinReason,
 * LookupState, AttemptOutcome: the bindings' generated tables hold the
 * same). */
static const char *reason_name(int r)
{
	static const char *const names[] = {
		[HEV2_REPORT_REASON_NONE] = "none",
		[HEV2_REPORT_REASON_FIRST_TO_CONNECT] = "first-to-connect",
		[HEV2_REPORT_REASON_OTHER_FAMILY_FAILED] = "other-family-failed",
		[HEV2_REPORT_REASON_ONLY_FAMILY_RESOLVED] = "only-family-resolved",
		[HEV2_REPORT_REASON_OTHER_FAMILY_NOT_TRIED] = "other-family-not-tried",
		[HEV2_REPORT_REASON_ONLY_FAMILY_ASKED] = "only-family-asked",
		[HEV2_REPORT_REASON_GIVEN_ADDRESSES] = "given-addresses",
	};
	return r >= 0 && r < (int)(sizeof names / sizeof *names) && names[r] ? names[r] : "unknown";
}

static const char *lookup_state_name(int s)
{
	static const char *const names[] = {
		[HEV2_REPORT_LOOKUP_NOT_ASKED] = "not-asked",
		[HEV2_REPORT_LOOKUP_ABANDONED] = "abandoned",
		[HEV2_REPORT_LOOKUP_ANSWERED] = "answered",
		[HEV2_REPORT_LOOKUP_FAILED] = "failed",
		[HEV2_REPORT_LOOKUP_TIMED_OUT] = "timed-out",
	};
	return s >= 0 && s < (int)(sizeof names / sizeof *names) && names[s] ? names[s] : "unknown";
}

static const char *outcome_name(int o)
{
	static const char *const names[] = {
		[HEV2_REPORT_ATTEMPT_CONNECTED] = "connected",
		[HEV2_REPORT_ATTEMPT_FAILED] = "failed",
		[HEV2_REPORT_ATTEMPT_TIMED_OUT] = "timed-out",
		[HEV2_REPORT_ATTEMPT_LOST] = "lost",
		[HEV2_REPORT_ATTEMPT_CANCELED] = "canceled",
	};
	return o >= 0 && o < (int)(sizeof names / sizeof *names) && names[o] ? names[o] : "unknown";
}

static const char *fam(int af) { return af == AF_INET6 ? "ipv6" : af == AF_INET ? "ipv4" : ""; }

static const char *timeout_text(int t)
{
	switch (t) {
	case HEV2_TIMEOUT_RESOLV: return "resolv_timeout";
	case HEV2_TIMEOUT_CONNECT: return "connect_timeout";
	case HEV2_TIMEOUT_OPEN: return "open_timeout";
	}
	return "";
}

static const char *errno_text(int e)
{
	const char *n = e ? strerrorname_np(e) : NULL;
	return n ? n : "";
}

static void json_phase(FILE *f, const char *name, const hev2_report_phase *p)
{
	fprintf(f, "\"%s\":", name);
	if (!p->happened)
		fputs("null", f);
	else
		fprintf(f, "{\"start_ms\":%.3f,\"end_ms\":%.3f,\"ms\":%.3f}", p->start_ms, p->end_ms,
		        p->end_ms - p->start_ms);
}

int print_report_json(FILE *f, hev2_conn c, const char *(*eai_text)(int))
{
	hev2_report_info r = {.size = sizeof r};
	int rc = hev2_report(c, &r);
	if (rc != HEV2_OK)
		return rc;
	fprintf(f, ",\"report\":{\"connected\":%s,\"winner\":%d,\"family\":\"%s\",\"reason\":\"%s\","
	           "\"timeout\":\"%s\",\"elapsed_ms\":%.3f,\"phases\":{",
	        r.connected ? "true" : "false", r.winner, fam(r.family), reason_name(r.reason),
	        timeout_text(r.timeout), r.elapsed_ms);
	json_phase(f, "resolving", &r.resolving);
	fputc(',', f);
	json_phase(f, "resolution_delay", &r.resolution_delay);
	fputc(',', f);
	json_phase(f, "connecting", &r.connecting);
	fprintf(f, "},\"resolution_delay_expired\":%s,\"lookups\":[",
	        r.resolution_delay_expired ? "true" : "false");
	for (int i = 0; i < 2; i++) {
		hev2_report_lookup_info l = {.size = sizeof l};
		if ((rc = hev2_report_lookup(c, i, &l)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"family\":\"%s\",\"state\":\"%s\",\"start_ms\":%.3f,\"end_ms\":%.3f,"
		           "\"ms\":%.3f,\"addresses\":%d,\"eai\":\"%s\",\"errno\":\"%s\"}",
		        i ? "," : "", fam(l.family), lookup_state_name(l.state), l.start_ms, l.end_ms,
		        l.end_ms - l.start_ms, l.n_addrs, eai_text(l.eai), errno_text(l.sys_errno));
	}
	fputs("],\"attempts\":[", f);
	for (int i = 0; i < r.n_attempts; i++) {
		hev2_report_attempt_info a = {.size = sizeof a};
		if ((rc = hev2_report_attempt(c, i, &a)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"address\":\"%s\",\"family\":\"%s\",\"port\":%d,\"outcome\":\"%s\","
		           "\"errno\":\"%s\",\"bind_failed\":%s,\"start_ms\":%.3f,\"end_ms\":%.3f,\"ms\":%.3f,"
		           "\"synthesized_from\":\"%s\"}",
		        i ? "," : "", a.address, fam(a.family), a.port, outcome_name(a.outcome),
		        errno_text(a.error), a.bind_failed ? "true" : "false", a.start_ms, a.end_ms,
		        a.end_ms - a.start_ms, a.synthesized_from);
	}
	fputs("]}", f);
	return HEV2_OK;
}

static void phase_text(FILE *f, const char *name, const hev2_report_phase *p)
{
	if (p->happened)
		fprintf(f, "%s %.3f ms (%.3f-%.3f)", name, p->end_ms - p->start_ms, p->start_ms, p->end_ms);
	else
		fprintf(f, "%s -", name);
}

int print_report_summary(FILE *f, hev2_conn c)
{
	hev2_report_info r = {.size = sizeof r};
	int rc = hev2_report(c, &r);
	if (rc != HEV2_OK)
		return rc;
	if (r.connected)
		fprintf(f, "report: %s won (%s) in %.3f ms; ", fam(r.family), reason_name(r.reason),
		        r.elapsed_ms);
	else
		fprintf(f, "report: nothing connected in %.3f ms; ", r.elapsed_ms);
	phase_text(f, "resolving", &r.resolving);
	fputs(", ", f);
	phase_text(f, "resolution delay", &r.resolution_delay);
	if (r.resolution_delay.happened && r.resolution_delay_expired)
		fputs(" expired", f);
	fputs(", ", f);
	phase_text(f, "connecting", &r.connecting);
	for (int i = 0; i < r.n_attempts; i++) {
		hev2_report_attempt_info a = {.size = sizeof a};
		if ((rc = hev2_report_attempt(c, i, &a)) != HEV2_OK)
			return rc;
		fprintf(f, "%s #%d %s", i ? "," : "; attempts", i, outcome_name(a.outcome));
		if (a.error)
			fprintf(f, " %s", errno_text(a.error));
		fprintf(f, " %.3f ms", a.end_ms - a.start_ms);
	}
	fputc('\n', f);
	return HEV2_OK;
}
