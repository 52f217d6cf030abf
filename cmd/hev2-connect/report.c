/*
 * hev2-connect's view of the establishment report (hev2_report): the
 * "report" field of --json and the summary line of -v. Numbers, fixed
 * names and IP addresses are printed as they are; the HTTPS part's names
 * and reasons go through json_text.
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

static const char *origin_name(int o)
{
	static const char *const names[] = {
		[HEV2_ORIGIN_DNS] = "dns",
		[HEV2_ORIGIN_STATIC] = "static",
		[HEV2_ORIGIN_SYNTHESIZED] = "synthesized",
		[HEV2_ORIGIN_HINT] = "hint",
		[HEV2_ORIGIN_SERVICE] = "service",
	};
	return o > 0 && o < (int)(sizeof names / sizeof *names) && names[o] ? names[o] : "";
}

/* The HTTPS query's states as core names them (hev2_service's words, and
 * "pending": the race ended before the answer). */
static const char *https_state_text(int s)
{
	static const char *const names[] = {
		[HEV2_HTTPS_ANSWERED] = "answered",   [HEV2_HTTPS_NODATA] = "nodata",
		[HEV2_HTTPS_NXDOMAIN] = "nxdomain",   [HEV2_HTTPS_FAILED] = "failed",
		[HEV2_HTTPS_TIMEOUT] = "timeout",     [HEV2_HTTPS_MALFORMED] = "malformed",
		[HEV2_HTTPS_ALIAS_LIMIT] = "alias-limit", [HEV2_HTTPS_PENDING] = "pending",
	};
	return s > 0 && s < (int)(sizeof names / sizeof *names) && names[s] ? names[s] : "unknown";
}

static const char *service_lookup_state_name(int s)
{
	static const char *const names[] = {
		[HEV2_REPORT_SERVICE_LOOKUP_PENDING] = "pending",
		[HEV2_REPORT_SERVICE_LOOKUP_ANSWERED] = "answered",
		[HEV2_REPORT_SERVICE_LOOKUP_FAILED] = "failed",
		[HEV2_REPORT_SERVICE_LOOKUP_CANCELED] = "canceled",
	};
	return s >= 0 && s < (int)(sizeof names / sizeof *names) && names[s] ? names[s] : "unknown";
}

static const char *query_name(int q)
{
	switch (q) {
	case HEV2_REPORT_QUERY_A: return "A";
	case HEV2_REPORT_QUERY_AAAA: return "AAAA";
	case HEV2_REPORT_QUERY_HTTPS: return "HTTPS";
	}
	return "unknown";
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
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

/* print_https_json writes the report's `,"https":` part: null without the
 * HTTPS query, else its state, lookups, services, set-aside records and
 * replaced hints. */
static int print_https_json(FILE *f, hev2_conn c, const hev2_report_info *r,
                            const char *(*eai_text)(int))
{
	int rc;
	if (r->https_state == HEV2_HTTPS_NONE) {
		fputs(",\"https\":null", f);
		return HEV2_OK;
	}
	fprintf(f, ",\"https\":{\"state\":\"%s\",\"lookups\":[", https_state_text(r->https_state));
	for (int i = 0; i < r->n_service_lookups; i++) {
		hev2_report_service_lookup_info l = {.size = sizeof l};
		if ((rc = hev2_report_service_lookup(c, i, &l)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"query\":\"%s\",\"name\":", i ? "," : "", query_name(l.query));
		json_string(f, l.name);
		fprintf(f, ",\"state\":\"%s\",\"start_ms\":%.3f,\"end_ms\":%.3f,\"ms\":%.3f,"
		           "\"records\":%d,\"addresses\":%d,\"eai\":\"%s\",\"errno\":\"%s\"}",
		        service_lookup_state_name(l.state), l.start_ms, l.end_ms, l.end_ms - l.start_ms,
		        l.n_records, l.n_addrs, eai_text(l.eai), errno_text(l.sys_errno));
	}
	fputs("],\"services\":[", f);
	for (int i = 0; i < r->n_services; i++) {
		hev2_report_service_info s = {.size = sizeof s};
		if ((rc = hev2_report_service(c, i, &s)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"number\":%d,\"priority\":%d,\"target\":", i ? "," : "", s.number,
		        s.priority);
		json_string(f, s.target);
		fprintf(f, ",\"port\":%d,\"alpn\":[", s.port);
		const char *p = s.alpn;
		for (int first = 1; *p; first = 0) {
			size_t n = strcspn(p, ",");
			char one[256];
			snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), p);
			if (!first)
				fputc(',', f);
			json_string(f, one);
			p += n;
			if (*p == ',')
				p++;
		}
		fprintf(f, "],\"ech\":%s,\"hints\":%d}", s.ech ? "true" : "false", s.n_hints);
	}
	fputs("],\"skipped\":[", f);
	for (int i = 0; i < r->n_skipped; i++) {
		hev2_report_skipped_info k = {.size = sizeof k};
		if ((rc = hev2_report_skipped(c, i, &k)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"priority\":%d,\"target\":", i ? "," : "", k.priority);
		json_string(f, k.target);
		fprintf(f, ",\"port\":%d,\"reason\":", k.port);
		json_string(f, k.reason);
		fprintf(f, ",\"at_ms\":%.3f}", k.at_ms);
	}
	fputs("],\"replaced\":[", f);
	for (int i = 0; i < r->n_replaced; i++) {
		hev2_report_replaced_info h = {.size = sizeof h};
		if ((rc = hev2_report_replaced(c, i, &h)) != HEV2_OK)
			return rc;
		fprintf(f, "%s{\"service\":%d,\"address\":\"%s\",\"family\":\"%s\",\"port\":%d,"
		           "\"at_ms\":%.3f}",
		        i ? "," : "", h.service, h.address, fam(h.family), h.port, h.at_ms);
	}
	fputs("]}", f);
	return HEV2_OK;
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
		           "\"synthesized_from\":\"%s\",\"service\":%d,\"origin\":\"%s\"}",
		        i ? "," : "", a.address, fam(a.family), a.port, outcome_name(a.outcome),
		        errno_text(a.error), a.bind_failed ? "true" : "false", a.start_ms, a.end_ms,
		        a.end_ms - a.start_ms, a.synthesized_from, a.service, origin_name(a.origin));
	}
	fputc(']', f);
	if ((rc = print_https_json(f, c, &r, eai_text)) != HEV2_OK)
		return rc;
	fputc('}', f);
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
		if (a.service)
			fprintf(f, " (service %d, %s)", a.service, origin_name(a.origin));
	}
	if (r.https_state != HEV2_HTTPS_NONE)
		fprintf(f, "; HTTPS %s: services %d, records skipped %d, hints replaced %d",
		        https_state_text(r.https_state), r.n_services, r.n_skipped, r.n_replaced);
	fputc('\n', f);
	return HEV2_OK;
}
