/* The bad-input table: each row is one thing a caller can get wrong and
 * the status it must get back — never a crash, an exit or a hang. After
 * the table: no handle, fd or callback was left behind by any refused call,
 * and every function answers HEV2_EHANDLE for a stale handle. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static struct server srv;
static char port[16];
static atomic_int callbacks;

static void on_done(hev2_conn c, int status, void *data)
{
	(void)c, (void)status, (void)data;
	atomic_fetch_add(&callbacks, 1);
}

/* base: valid options with a callback, so a refused connect that fired it
 * anyway would be seen. */
static hev2_options base(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.on_done = on_done;
	return o;
}

/* try connects with o and releases a handle if one was (wrongly) made. */
static int try(const char *host, const char *p, hev2_options o)
{
	hev2_conn c = 12345;
	int rc = hev2_connect(host, p, &o, &c);
	if (rc == HEV2_OK)
		hev2_release(c);
	else if (c != 0)
		return -1000; /* *out must be 0 on error */
	return rc;
}

static char long_host[10001];
static char host254[255];

/* ---- rows -------------------------------------------------------------- */
#define ROW(name, want, expr)                                                  \
	static int name(void)                                                  \
	{                                                                      \
		hev2_options o = base();                                       \
		(void)o;                                                       \
		return (expr);                                                 \
	}

ROW(host_null, HEV2_EHOST, try(NULL, port, o))
ROW(host_empty, HEV2_EHOST, try("", port, o))
ROW(host_254, HEV2_EHOST, try(host254, port, o))
ROW(host_10000, HEV2_EHOST, try(long_host, port, o))
ROW(host_brackets_only, HEV2_EHOST, try("[]", port, o))
static int host_nul_inside(void)
{
	hev2_options o = base();
	hev2_conn c = 1;
	return hev2_connect_len("127.0.0.1\0evil.test", 19, port, &o, &c);
}
static int host_len_zero(void)
{
	hev2_conn c = 1;
	return hev2_connect_len("127.0.0.1", 0, port, NULL, &c);
}
static int host_len_null(void)
{
	hev2_conn c = 1;
	return hev2_connect_len(NULL, 5, port, NULL, &c);
}
ROW(port_null, HEV2_EPORT, try("127.0.0.1", NULL, o))
ROW(port_empty, HEV2_EPORT, try("127.0.0.1", "", o))
ROW(port_zero, HEV2_EPORT, try("127.0.0.1", "0", o))
ROW(port_65536, HEV2_EPORT, try("127.0.0.1", "65536", o))
ROW(port_negative, HEV2_EPORT, try("127.0.0.1", "-1", o))
ROW(port_unknown_service, HEV2_EPORT, try("127.0.0.1", "no-such-service-hev2", o))
ROW(port_trailing_junk, HEV2_EPORT, try("127.0.0.1", "80x", o))
ROW(port_huge_number, HEV2_EPORT, try("127.0.0.1", "99999999999999999999", o))
static int out_null(void) { return hev2_connect("127.0.0.1", port, NULL, NULL); }
ROW(size_zero, HEV2_EOPTIONS, (o.size = 0, try("127.0.0.1", port, o)))
ROW(size_one_short, HEV2_EOPTIONS, (o.size = sizeof o - 1, try("127.0.0.1", port, o)))
ROW(size_garbage, HEV2_EOPTIONS, (o.size = (size_t)1 << 40, try("127.0.0.1", port, o)))
ROW(resolv_timeout_negative, HEV2_EOPTIONS, (o.resolv_timeout_ms = -1, try("127.0.0.1", port, o)))
ROW(connect_timeout_over_a_day, HEV2_EOPTIONS, (o.connect_timeout_ms = HEV2_MAX_TIMEOUT_MS + 1, try("127.0.0.1", port, o)))
ROW(open_timeout_int_min, HEV2_EOPTIONS, (o.open_timeout_ms = INT_MIN, try("127.0.0.1", port, o)))
ROW(open_with_connect_timeout, HEV2_EOPTIONS, (o.open_timeout_ms = 100, o.connect_timeout_ms = 100, try("127.0.0.1", port, o)))
ROW(resolution_delay_negative, HEV2_EOPTIONS, (o.resolution_delay_ms = -5, try("127.0.0.1", port, o)))
ROW(attempt_delay_int_max, HEV2_EOPTIONS, (o.connection_attempt_delay_ms = INT_MAX, try("127.0.0.1", port, o)))
ROW(keepalive_negative, HEV2_EOPTIONS, (o.keepalive_ms = -1, try("127.0.0.1", port, o)))
ROW(first_count_negative, HEV2_EOPTIONS, (o.first_address_family_count = -1, try("127.0.0.1", port, o)))
ROW(first_count_65, HEV2_EOPTIONS, (o.first_address_family_count = 65, try("127.0.0.1", port, o)))
ROW(family_unknown, HEV2_EOPTIONS, (o.family = 99, try("127.0.0.1", port, o)))
ROW(fast_fallback_2, HEV2_EOPTIONS, (o.fast_fallback = 2, try("127.0.0.1", port, o)))
ROW(nodelay_negative, HEV2_EOPTIONS, (o.nodelay = -1, try("127.0.0.1", port, o)))
ROW(blocking_7, HEV2_EOPTIONS, (o.blocking = 7, try("127.0.0.1", port, o)))
ROW(record_events_3, HEV2_EOPTIONS, (o.record_events = 3, try("127.0.0.1", port, o)))
ROW(local_not_ip, HEV2_EOPTIONS, (o.local_host = "not-an-ip", try("127.0.0.1", port, o)))
ROW(local_port_70000, HEV2_EOPTIONS, (o.local_port = 70000, try("127.0.0.1", port, o)))
ROW(local_port_negative, HEV2_EOPTIONS, (o.local_port = -1, try("127.0.0.1", port, o)))
ROW(local_v6_family_4, HEV2_EOPTIONS, (o.local_host = "::1", o.family = AF_INET, try("127.0.0.1", port, o)))
ROW(resolver_unknown, HEV2_EOPTIONS, (o.resolver = 9, try("127.0.0.1", port, o)))
ROW(nameserver_malformed, HEV2_EOPTIONS, (o.nameservers = "not-a-server", try("127.0.0.1", port, o)))
ROW(nameserver_port_zero, HEV2_EOPTIONS, (o.nameservers = "127.0.0.1:0", try("127.0.0.1", port, o)))
ROW(nameserver_with_system, HEV2_EOPTIONS, (o.resolver = HEV2_RESOLVER_SYSTEM, o.nameservers = "127.0.0.1", try("127.0.0.1", port, o)))
ROW(static_no_colon, HEV2_EOPTIONS, (o.static_hosts = "name.test", try("127.0.0.1", port, o)))
ROW(static_bad_addr, HEV2_EOPTIONS, (o.static_hosts = "name.test:999.1.1.1", try("127.0.0.1", port, o)))
ROW(static_empty, HEV2_EOPTIONS, (o.static_hosts = "", try("127.0.0.1", port, o)))
ROW(static_empty_list, HEV2_EOPTIONS, (o.static_hosts = "name.test:", try("127.0.0.1", port, o)))
ROW(job_out_of_range, HEV2_EOPTIONS, (o.job = HEV2_MAX_JOBS + 1, try("127.0.0.1", port, o)))
ROW(job_unregistered, HEV2_EOPTIONS, (o.job = HEV2_MAX_JOBS, try("127.0.0.1", port, o)))
ROW(history_2, HEV2_EOPTIONS, (o.history = 2, try("127.0.0.1", port, o)))
ROW(history_lifetime_negative, HEV2_EOPTIONS, (o.history_lifetime_ms = -1, try("127.0.0.1", port, o)))
ROW(history_lifetime_huge, HEV2_EOPTIONS, (o.history_lifetime_ms = INT_MAX, try("127.0.0.1", port, o)))
ROW(https_rr_2, HEV2_EOPTIONS, (o.https_rr = 2, try("127.0.0.1", port, o)))
ROW(ech_negative, HEV2_EOPTIONS, (o.ech = -1, try("127.0.0.1", port, o)))
ROW(ech_wait_negative, HEV2_EOPTIONS, (o.ech_wait_ms = -5, try("127.0.0.1", port, o)))
ROW(ech_wait_huge, HEV2_EOPTIONS, (o.ech_wait_ms = INT_MAX, try("127.0.0.1", port, o)))
ROW(alpn_empty, HEV2_EOPTIONS, (o.alpn = "", try("127.0.0.1", port, o)))
ROW(alpn_empty_entry, HEV2_EOPTIONS, (o.alpn = "h2,,http/1.1", try("127.0.0.1", port, o)))
ROW(alpn_too_many, HEV2_EOPTIONS, (o.alpn = "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", try("127.0.0.1", port, o)))
ROW(alpn_control, HEV2_EOPTIONS, (o.alpn = "h2\n", try("127.0.0.1", port, o)))

static int wait_handle_zero(void) { return hev2_wait(0, 0); }
static int wait_never_issued(void) { return hev2_wait(0xdeadbeefcafeULL, 0); }
static int wait_timeout_minus_2(void) { return hev2_wait(1, -2); }
static int wait_timeout_huge(void) { return hev2_wait(1, INT_MAX); }
static int fd_handle_zero(void) { return hev2_fd(0); }
static int cancel_never_issued(void) { return hev2_cancel(UINT64_MAX); }
static int release_never_issued(void) { return hev2_release(777777777); }
static int release_zero_is_ok(void) { return hev2_release(0); }
static int result_null(void) { return hev2_result(1, NULL); }
static int result_size_zero(void)
{
	hev2_result_info r = {.size = 0};
	return hev2_result(1, &r);
}
static int result_size_garbage(void)
{
	hev2_result_info r;
	memset(&r, 0xff, sizeof r);
	return hev2_result(1, &r);
}
static int result_never_issued(void)
{
	hev2_result_info r = {.size = sizeof r};
	return hev2_result(424242424242ULL, &r);
}
static int attempt_null(void) { return hev2_get_attempt(1, 0, NULL); }
static int event_size_small(void)
{
	hev2_event_info e = {.size = sizeof e - 8};
	return hev2_get_event(1, 0, &e);
}
static int stats_null(void) { return hev2_stats(NULL); }
static int stats_size_small(void)
{
	hev2_stats_info s = {.size = 4};
	return hev2_stats(&s);
}
static int options_init_null(void) { return (hev2_options_init)(NULL); }
static int options_init_size_null(void) { return hev2_options_init_size(NULL, sizeof(hev2_options)); }
static int options_init_size_small(void)
{
	hev2_options o;
	return hev2_options_init_size(&o, 8);
}
static int options_init_size_absurd(void)
{
	hev2_options o;
	return hev2_options_init_size(&o, (size_t)-1);
}
static int options_drive_unknown(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.drive = 7;
	hev2_conn c;
	return hev2_connect("127.0.0.1", "80", &o, &c);
}
static int options_nat64_unknown(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.nat64 = 2;
	hev2_conn c;
	return hev2_connect("127.0.0.1", "80", &o, &c);
}
/* A size between 1.2's struct (up to drive) and 1.3's is no header's. */
static int options_size_between(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.size = offsetof(hev2_options, nat64) + 1;
	hev2_conn c;
	return hev2_connect("127.0.0.1", "1", &o, &c);
}
static int max_handles_zero(void) { return hev2_set_max_handles(0); }
static int max_handles_negative(void) { return hev2_set_max_handles(-5); }
static int max_handles_absurd(void) { return hev2_set_max_handles(2000000); }
static int set_history_2(void) { return hev2_set_history(2); }
static int set_history_negative(void) { return hev2_set_history(-1); }
static void nop_job(void *d) { (void)d; }
static int job_register_null_fn(void)
{
	hev2_job j;
	return hev2_job_register(NULL, NULL, 0, &j);
}
static int job_register_null_out(void) { return hev2_job_register(nop_job, NULL, 0, NULL); }
static int report_null(void) { return hev2_report(1, NULL); }
static int report_size_zero(void)
{
	hev2_report_info r = {.size = 0};
	return hev2_report(1, &r);
}
static int report_size_garbage(void)
{
	hev2_report_info r;
	memset(&r, 0xff, sizeof r);
	return hev2_report(1, &r);
}
static int report_handle_zero(void)
{
	hev2_report_info r = {.size = sizeof r};
	return hev2_report(0, &r);
}
static int report_never_issued(void)
{
	hev2_report_info r = {.size = sizeof r};
	return hev2_report(313373133731ULL, &r);
}
static int report_lookup_null(void) { return hev2_report_lookup(1, 0, NULL); }
static int report_lookup_size_small(void)
{
	hev2_report_lookup_info l = {.size = sizeof l - 8};
	return hev2_report_lookup(1, 0, &l);
}
static int report_lookup_never_issued(void)
{
	hev2_report_lookup_info l = {.size = sizeof l};
	return hev2_report_lookup(313373133731ULL, 0, &l);
}
static int report_attempt_null(void) { return hev2_report_attempt(1, 0, NULL); }
static int report_attempt_size_garbage(void)
{
	hev2_report_attempt_info a;
	memset(&a, 0xff, sizeof a);
	return hev2_report_attempt(1, 0, &a);
}
static int report_attempt_handle_zero(void)
{
	hev2_report_attempt_info a = {.size = sizeof a};
	return hev2_report_attempt(0, 0, &a);
}
static int job_register_bad_flags(void)
{
	hev2_job j;
	return hev2_job_register(nop_job, NULL, 0x80, &j);
}
static int job_trigger_zero(void) { return hev2_job_trigger(0); }
static int job_trigger_out_of_range(void) { return hev2_job_trigger(HEV2_MAX_JOBS + 1); }
static int job_trigger_unregistered(void) { return hev2_job_trigger(HEV2_MAX_JOBS); }

/* hev2_write_trace (1.3): a handle that is done and recorded, one that
 * is done and not recorded, one still running (driven by a waiter that
 * never came). */
static int traced_handles; /* handles these rows made on purpose */
static hev2_conn traced(int record, int drive)
{
	hev2_options o;
	hev2_options_init(&o);
	o.record_events = record;
	o.drive = drive;
	hev2_conn c = 0;
	if (hev2_connect("127.0.0.1", port, &o, &c) != HEV2_OK)
		return 0;
	traced_handles++;
	if (drive == HEV2_DRIVE_LIBRARY)
		hev2_wait(c, 5000);
	return c;
}
static int trace_with(hev2_conn c, int format, int fd, const char *path)
{
	int rc = hev2_write_trace(c, format, fd, path);
	char keep[HEV2_ERRMSGLEN];
	snprintf(keep, sizeof keep, "%s", hev2_last_error());
	hev2_release(c);
	/* the row's text must survive the release above */
	if (strcmp(keep, hev2_last_error()) != 0)
		return -2000;
	return rc;
}
static int trace_handle_zero(void) { return hev2_write_trace(0, HEV2_TRACE_SVG, -1, "/dev/null"); }
static int trace_never_issued(void) { return hev2_write_trace(99999999999ULL, HEV2_TRACE_QLOG, -1, "/dev/null"); }
static int trace_format_zero(void) { return trace_with(traced(1, HEV2_DRIVE_LIBRARY), 0, -1, "/dev/null"); }
static int trace_format_4(void) { return trace_with(traced(1, HEV2_DRIVE_LIBRARY), 4, -1, "/dev/null"); }
static int trace_format_negative(void) { return hev2_write_trace(1, -1, -1, "/dev/null"); }
static int trace_neither(void) { return trace_with(traced(1, HEV2_DRIVE_LIBRARY), HEV2_TRACE_SVG, -1, NULL); }
static int trace_both(void) { return trace_with(traced(1, HEV2_DRIVE_LIBRARY), HEV2_TRACE_SVG, 1, "/dev/null"); }
static int trace_fd_negative(void) { return hev2_write_trace(1, HEV2_TRACE_CHROME, -7, NULL); }
static int trace_path_empty(void) { return trace_with(traced(1, HEV2_DRIVE_LIBRARY), HEV2_TRACE_SVG, -1, ""); }
static int trace_not_recorded(void) { return trace_with(traced(0, HEV2_DRIVE_LIBRARY), HEV2_TRACE_SVG, -1, "/dev/null"); }
static int trace_running(void) { return trace_with(traced(1, HEV2_DRIVE_WAITER), HEV2_TRACE_QLOG, -1, "/dev/null"); }

/* text: what hev2_last_error() must contain after the row ("function:
 * detail"); NULL for a row that succeeds, which must leave it unchanged. */
static const struct row {
	const char *name;
	int (*fn)(void);
	int want;
	const char *text;
} rows[] = {
#define R(name, want, text) {#name, name, want, text}
	R(host_null, HEV2_EHOST, "hev2_connect: host is NULL"),
	R(host_empty, HEV2_EHOST, "hev2_connect: invalid host: empty"),
	R(host_254, HEV2_EHOST, "hev2_connect: invalid host: longer than 253 characters"),
	R(host_10000, HEV2_EHOST, "hev2_connect: invalid host: longer than 253 characters"),
	R(host_brackets_only, HEV2_EHOST, "hev2_connect: invalid host: empty"),
	R(host_nul_inside, HEV2_EHOST, "hev2_connect_len: invalid host: contains a NUL byte"),
	R(host_len_zero, HEV2_EHOST, "hev2_connect_len: invalid host: empty"),
	R(host_len_null, HEV2_EHOST, "hev2_connect_len: host is NULL"),
	R(port_null, HEV2_EPORT, "hev2_connect: port is NULL"),
	R(port_empty, HEV2_EPORT, "hev2_connect: invalid port: empty"),
	R(port_zero, HEV2_EPORT, "hev2_connect: invalid port: 0 cannot be connected to"),
	R(port_65536, HEV2_EPORT, "hev2_connect: invalid port: \"65536\" is neither a port number (1-65535) nor a known TCP service"),
	R(port_negative, HEV2_EPORT, "hev2_connect: invalid port: \"-1\" is neither"),
	R(port_unknown_service, HEV2_EPORT, "hev2_connect: invalid port: \"no-such-service-hev2\" is neither"),
	R(port_trailing_junk, HEV2_EPORT, "hev2_connect: invalid port: \"80x\" is neither"),
	R(port_huge_number, HEV2_EPORT, "hev2_connect: invalid port: \"99999999999999999999\" is neither"),
	R(out_null, HEV2_EINVAL, "hev2_connect: out is NULL"),
	R(size_zero, HEV2_EOPTIONS, "hev2_connect: options size 0 out of range"),
	R(size_one_short, HEV2_EOPTIONS, "hev2_connect: options size "),
	R(size_garbage, HEV2_EOPTIONS, "hev2_connect: options size 1099511627776 out of range"),
	R(resolv_timeout_negative, HEV2_EOPTIONS, "hev2_connect: invalid resolv_timeout: -1ms out of range [0, 24h]"),
	R(connect_timeout_over_a_day, HEV2_EOPTIONS, "hev2_connect: invalid connect_timeout: 24h0m0.001s out of range [0, 24h]"),
	R(open_timeout_int_min, HEV2_EOPTIONS, "hev2_connect: invalid open_timeout: -596h31m23.648s out of range"),
	R(open_with_connect_timeout, HEV2_EOPTIONS, "hev2_connect: invalid open_timeout: cannot be combined with resolv_timeout or connect_timeout"),
	R(resolution_delay_negative, HEV2_EOPTIONS, "hev2_connect: invalid resolution_delay: -5ms out of range"),
	R(attempt_delay_int_max, HEV2_EOPTIONS, "hev2_connect: invalid connection_attempt_delay: 596h31m23.647s out of range"),
	R(keepalive_negative, HEV2_EOPTIONS, "hev2_connect: invalid keepalive: -1ms out of range"),
	R(first_count_negative, HEV2_EOPTIONS, "hev2_connect: invalid first_address_family_count: -1 out of range [0, 64]"),
	R(first_count_65, HEV2_EOPTIONS, "hev2_connect: invalid first_address_family_count: 65 out of range [0, 64]"),
	R(family_unknown, HEV2_EOPTIONS, "hev2_connect: family 99 is not AF_UNSPEC"),
	R(fast_fallback_2, HEV2_EOPTIONS, "hev2_connect: fast_fallback must be 0 or 1, not 2"),
	R(nodelay_negative, HEV2_EOPTIONS, "hev2_connect: nodelay must be 0 or 1, not -1"),
	R(blocking_7, HEV2_EOPTIONS, "hev2_connect: blocking must be 0 or 1, not 7"),
	R(record_events_3, HEV2_EOPTIONS, "hev2_connect: record_events must be 0 or 1, not 3"),
	R(local_not_ip, HEV2_EOPTIONS, "hev2_connect: local_host \"not-an-ip\" is not an IP address"),
	R(local_port_70000, HEV2_EOPTIONS, "hev2_connect: local_port 70000 is not a port number"),
	R(local_port_negative, HEV2_EOPTIONS, "hev2_connect: local_port -1 is not a port number"),
	R(local_v6_family_4, HEV2_EOPTIONS, "hev2_connect: invalid local_host: ::1 is not an address of family ipv4"),
	R(resolver_unknown, HEV2_EOPTIONS, "hev2_connect: resolver 9 is not"),
	R(nameserver_malformed, HEV2_EOPTIONS, "hev2_connect: nameserver \"not-a-server\" is not"),
	R(nameserver_port_zero, HEV2_EOPTIONS, "hev2_connect: nameserver \"127.0.0.1:0\" is not"),
	R(nameserver_with_system, HEV2_EOPTIONS, "hev2_connect: nameservers need the built-in resolver"),
	R(static_no_colon, HEV2_EOPTIONS, "hev2_connect: static_hosts entry \"name.test\" is not NAME:ADDR"),
	R(static_bad_addr, HEV2_EOPTIONS, "\"999.1.1.1\" is not an IP address"),
	R(static_empty, HEV2_EOPTIONS, "hev2_connect: static_hosts \"\" has no entry"),
	R(static_empty_list, HEV2_EOPTIONS, "hev2_connect: static_hosts entry \"name.test:\" is not"),
	R(job_out_of_range, HEV2_EOPTIONS, "hev2_connect: job 257 is not a registered job"),
	R(job_unregistered, HEV2_EOPTIONS, "hev2_connect: job 256 is not a registered job"),
	R(wait_handle_zero, HEV2_EHANDLE, "hev2_wait: handle 0 is never valid"),
	R(wait_never_issued, HEV2_EHANDLE, "hev2_wait: handle 244837814094590 unknown (never issued, or released)"),
	R(wait_timeout_minus_2, HEV2_EINVAL, "hev2_wait: timeout_ms -2 out of range"),
	R(wait_timeout_huge, HEV2_EINVAL, "hev2_wait: timeout_ms 2147483647 out of range"),
	R(fd_handle_zero, HEV2_EHANDLE, "hev2_fd: handle 0 is never valid"),
	R(cancel_never_issued, HEV2_EHANDLE, "hev2_cancel: handle 18446744073709551615 unknown"),
	R(release_never_issued, HEV2_EHANDLE, "hev2_release: handle 777777777 unknown"),
	R(release_zero_is_ok, HEV2_OK, NULL),
	R(result_null, HEV2_EINVAL, "hev2_result: r is NULL"),
	R(result_size_zero, HEV2_EINVAL, "hev2_result: r->size 0 out of range"),
	R(result_size_garbage, HEV2_EINVAL, "hev2_result: r->size 18446744073709551615 out of range"),
	R(result_never_issued, HEV2_EHANDLE, "hev2_result: handle 424242424242 unknown"),
	R(attempt_null, HEV2_EINVAL, "hev2_get_attempt: a is NULL"),
	R(event_size_small, HEV2_EINVAL, "hev2_get_event: e->size "),
	R(stats_null, HEV2_EINVAL, "hev2_stats: s is NULL"),
	R(stats_size_small, HEV2_EINVAL, "hev2_stats: s->size 4 out of range"),
	R(options_init_null, HEV2_EINVAL, "hev2_options_init: o is NULL"),
	R(options_init_size_null, HEV2_EINVAL, "hev2_options_init_size: o is NULL"),
	R(options_init_size_small, HEV2_EINVAL, "hev2_options_init_size: size 8 out of range"),
	R(options_init_size_absurd, HEV2_EINVAL, "hev2_options_init_size: size 18446744073709551615 out of range"),
	R(options_drive_unknown, HEV2_EOPTIONS, "hev2_connect: drive 7 is not HEV2_DRIVE_LIBRARY"),
	R(options_nat64_unknown, HEV2_EOPTIONS, "hev2_connect: nat64 2 is not HEV2_NAT64_AUTO"),
	R(options_size_between, HEV2_EOPTIONS, "is not the size of any header's struct"),
	R(max_handles_zero, HEV2_EINVAL, "hev2_set_max_handles: max 0 out of range"),
	R(max_handles_negative, HEV2_EINVAL, "hev2_set_max_handles: max -5 out of range"),
	R(max_handles_absurd, HEV2_EINVAL, "hev2_set_max_handles: max 2000000 out of range"),
	R(history_2, HEV2_EOPTIONS, "hev2_connect: history must be 0 or 1, not 2"),
	R(history_lifetime_negative, HEV2_EOPTIONS, "hev2_connect: invalid history_lifetime: -1ms out of range"),
	R(history_lifetime_huge, HEV2_EOPTIONS, "hev2_connect: invalid history_lifetime: 596h31m23.647s out of range"),
	R(https_rr_2, HEV2_EOPTIONS, "hev2_connect: https_rr must be 0 or 1, not 2"),
	R(ech_negative, HEV2_EOPTIONS, "hev2_connect: ech must be 0 or 1, not -1"),
	R(ech_wait_negative, HEV2_EOPTIONS, "hev2_connect: invalid ech_wait: -5ms out of range"),
	R(ech_wait_huge, HEV2_EOPTIONS, "hev2_connect: invalid ech_wait: 596h31m23.647s out of range"),
	R(alpn_empty, HEV2_EOPTIONS, "hev2_connect: alpn is empty"),
	R(alpn_empty_entry, HEV2_EOPTIONS, "hev2_connect: alpn has an empty protocol name"),
	R(alpn_too_many, HEV2_EOPTIONS, "hev2_connect: invalid alpn: 17 protocols, at most 16"),
	R(alpn_control, HEV2_EOPTIONS, "hev2_connect: alpn holds a control character"),
	R(set_history_2, HEV2_EINVAL, "hev2_set_history: on must be 0 or 1, not 2"),
	R(set_history_negative, HEV2_EINVAL, "hev2_set_history: on must be 0 or 1, not -1"),
	R(job_register_null_fn, HEV2_EINVAL, "hev2_job_register: fn is NULL"),
	R(job_register_null_out, HEV2_EINVAL, "hev2_job_register: out is NULL"),
	R(job_register_bad_flags, HEV2_EINVAL, "hev2_job_register: unknown flags 0x80"),
	R(job_trigger_zero, HEV2_EINVAL, "hev2_job_trigger: job id out of range"),
	R(job_trigger_out_of_range, HEV2_EINVAL, "hev2_job_trigger: job id out of range"),
	R(job_trigger_unregistered, HEV2_EINVAL, "hev2_job_trigger: job id not registered"),
	R(report_null, HEV2_EINVAL, "hev2_report: r is NULL"),
	R(report_size_zero, HEV2_EINVAL, "hev2_report: r->size 0 out of range"),
	R(report_size_garbage, HEV2_EINVAL, "hev2_report: r->size 18446744073709551615 out of range"),
	R(report_handle_zero, HEV2_EHANDLE, "hev2_report: handle 0 is never valid"),
	R(report_never_issued, HEV2_EHANDLE, "hev2_report: handle 313373133731 unknown"),
	R(report_lookup_null, HEV2_EINVAL, "hev2_report_lookup: l is NULL"),
	R(report_lookup_size_small, HEV2_EINVAL, "hev2_report_lookup: l->size "),
	R(report_lookup_never_issued, HEV2_EHANDLE, "hev2_report_lookup: handle 313373133731 unknown"),
	R(report_attempt_null, HEV2_EINVAL, "hev2_report_attempt: a is NULL"),
	R(report_attempt_size_garbage, HEV2_EINVAL, "hev2_report_attempt: a->size 18446744073709551615 out of range"),
	R(report_attempt_handle_zero, HEV2_EHANDLE, "hev2_report_attempt: handle 0 is never valid"),
	R(trace_handle_zero, HEV2_EHANDLE, "hev2_write_trace: handle 0 is never valid"),
	R(trace_never_issued, HEV2_EHANDLE, "hev2_write_trace: handle 99999999999 unknown"),
	R(trace_format_zero, HEV2_EINVAL, "hev2_write_trace: format 0 unknown"),
	R(trace_format_4, HEV2_EINVAL, "hev2_write_trace: format 4 unknown"),
	R(trace_format_negative, HEV2_EINVAL, "hev2_write_trace: format -1 unknown"),
	R(trace_neither, HEV2_EINVAL, "hev2_write_trace: path is NULL and fd -1 is not a file descriptor"),
	R(trace_both, HEV2_EINVAL, "hev2_write_trace: both a path and fd 1"),
	R(trace_fd_negative, HEV2_EINVAL, "hev2_write_trace: path is NULL and fd -7"),
	R(trace_path_empty, HEV2_EINVAL, "hev2_write_trace: path is empty"),
	R(trace_not_recorded, HEV2_EINVAL, "hev2_write_trace: handle "),
	R(trace_running, HEV2_EAGAIN, "hev2_write_trace: handle "),
#undef R
};

#define MARKER_TEXT "hev2_set_max_handles: max -12345 out of range [1, 1000000]"

/* check_last_error: after a refused call, the thread's last error names the
 * function and the detail (never the marker left before, never just the
 * status's generic text), with no errno; after a success, it is unchanged. */
static void check_last_error(const struct row *r)
{
	const char *got = hev2_last_error();
	const char *want = r->text ? r->text : MARKER_TEXT;
	check_count++;
	if (!got || !strstr(got, want) || (r->text && strcmp(got, MARKER_TEXT) == 0)) {
		check_failures++;
		fprintf(stderr, "bad input %-28s last error \"%s\", want it to contain \"%s\"\n",
		        r->name, got ? got : "(NULL)", want);
	}
	CHECK_INT(hev2_last_errno(), 0);
}

/* A 1.2 caller's options end before nat64: that size is accepted, and its
 * connect works (NAT64 at its default). */
static void test_options_size_1_2(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.size = offsetof(hev2_options, nat64);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", port, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_INT(r.status, HEV2_OK);
	CHECK(r.synthesized_from[0] == 0); /* an IPv4 route: nothing synthesized */
	if (r.fd >= 0)
		close(r.fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
}

/* The report of handles that cannot give one: still running, not
 * recorded, released; and indexes out of range of one that can. */
static void test_report_handles(void)
{
	hev2_report_info r = {.size = sizeof r};
	hev2_report_lookup_info l = {.size = sizeof l};
	hev2_report_attempt_info a = {.size = sizeof a};
	hev2_options o;
	hev2_options_init(&o);
	o.record_events = 1;

	/* Running: a connect to a listener that drops SYNs. */
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	char bport[16];
	snprintf(bport, sizeof bport, "%d", bh.port);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", bport, &o, &c), HEV2_OK);
	CHECK_RC(hev2_report(c, &r), HEV2_EAGAIN);
	CHECK(strstr(hev2_last_error(), "hev2_report: handle ") == hev2_last_error());
	CHECK(strstr(hev2_last_error(), "is still running") != NULL);
	CHECK_RC(hev2_report_lookup(c, 0, &l), HEV2_EAGAIN);
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_EAGAIN);
	CHECK_RC(hev2_release(c), HEV2_OK);
	blackhole_stop(&bh);

	/* Done, but recorded nothing: record_events was 0. */
	CHECK_RC(hev2_connect("127.0.0.1", port, NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_report(c, &r), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report: handle ") == hev2_last_error());
	CHECK(strstr(hev2_last_error(), "has no recorded events (made with record_events = 0") != NULL);
	CHECK_RC(hev2_report_lookup(c, 0, &l), HEV2_EINVAL);
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_attempt: handle ") == hev2_last_error());
	CHECK_RC(hev2_release(c), HEV2_OK);

	/* Recorded and done: indexes out of range. */
	CHECK_RC(hev2_connect("127.0.0.1", port, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_INT(r.n_attempts, 1);
	CHECK_RC(hev2_report_lookup(c, -1, &l), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_lookup: lookup index -1 out of range") != NULL);
	CHECK_RC(hev2_report_lookup(c, 2, &l), HEV2_EINVAL);
	CHECK_RC(hev2_report_attempt(c, 1, &a), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_attempt: attempt index 1 out of range") != NULL);
	CHECK_RC(hev2_report_attempt(c, -1, &a), HEV2_EINVAL);
	hev2_result_info res = {.size = sizeof res};
	CHECK_RC(hev2_result(c, &res), HEV2_OK);
	close(res.fd);

	/* Released: stale. */
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_RC(hev2_report(c, &r), HEV2_EHANDLE);
	CHECK_RC(hev2_report_lookup(c, 0, &l), HEV2_EHANDLE);
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_EHANDLE);
	CHECK(strstr(hev2_last_error(), "unknown (never issued, or released)") != NULL);
}

/* hev2_service: its struct checked, a running handle refused, a handle
 * without an HTTPS query says so, a stale one is refused. */
static void test_service(void)
{
	hev2_service_info s = {.size = sizeof s};
	CHECK_RC(hev2_service(1, NULL), HEV2_EINVAL);
	hev2_service_info small = {.size = 4};
	CHECK_RC(hev2_service(1, &small), HEV2_EINVAL);
	unsigned char buf[8];
	hev2_service_info no_buf = {.size = sizeof no_buf, .ech = NULL, .ech_size = 8};
	CHECK_RC(hev2_service(1, &no_buf), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "s->ech is NULL") != NULL);

	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	char bport[16];
	snprintf(bport, sizeof bport, "%d", bh.port);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", bport, NULL, &c), HEV2_OK);
	CHECK_RC(hev2_service(c, &s), HEV2_EAGAIN);
	CHECK_RC(hev2_release(c), HEV2_OK);
	blackhole_stop(&bh);

	/* https_rr on, but a literal: no query. */
	hev2_options o;
	hev2_options_init(&o);
	o.https_rr = 1;
	o.alpn = "h2";
	CHECK_RC(hev2_connect("127.0.0.1", port, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_service_info t = {.size = sizeof t, .ech = buf, .ech_size = sizeof buf};
	CHECK_RC(hev2_service(c, &t), HEV2_OK);
	CHECK_INT(t.state, HEV2_HTTPS_NONE);
	CHECK_INT(t.has_service, 0);
	CHECK(t.ech == buf && t.ech_size == sizeof buf && t.ech_len == 0);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	close(r.fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_RC(hev2_service(c, &t), HEV2_EHANDLE);
}

/* Every handle function on a released (stale) handle: HEV2_EHANDLE. */
static void test_stale_handle(void)
{
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", port, NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_release(c), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	hev2_attempt_info a = {.size = sizeof a};
	hev2_event_info e = {.size = sizeof e};
	CHECK_RC(hev2_wait(c, 0), HEV2_EHANDLE);
	CHECK_RC(hev2_wait(c, -1), HEV2_EHANDLE);
	CHECK_RC(hev2_fd(c), HEV2_EHANDLE);
	CHECK_RC(hev2_cancel(c), HEV2_EHANDLE);
	CHECK_RC(hev2_result(c, &r), HEV2_EHANDLE);
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_EHANDLE);
	CHECK_RC(hev2_get_event(c, 0, &e), HEV2_EHANDLE);
	CHECK_RC(hev2_write_trace(c, HEV2_TRACE_SVG, -1, "/dev/null"), HEV2_EHANDLE);
	hev2_service_info s = {.size = sizeof s};
	CHECK_RC(hev2_service(c, &s), HEV2_EHANDLE);
	CHECK_RC(hev2_release(c), HEV2_EHANDLE);
	CHECK(strcmp(hev2_errmsg(c), hev2_strerror(HEV2_EHANDLE)) == 0);
	CHECK(strstr(hev2_last_error(), "hev2_release: handle ") == hev2_last_error());
	CHECK(strstr(hev2_last_error(), "unknown (never issued, or released)") != NULL);
	/* A newer handle is never reached through the old id. */
	hev2_conn d;
	CHECK_RC(hev2_connect("127.0.0.1", port, NULL, &d), HEV2_OK);
	CHECK(d != c);
	CHECK_RC(hev2_cancel(c), HEV2_EHANDLE);
	CHECK_RC(hev2_release(d), HEV2_OK);
}

int main(void)
{
	if (server_start(&srv, AF_INET) < 0)
		return 1;
	snprintf(port, sizeof port, "%d", srv.port);
	memset(long_host, 'a', sizeof long_host - 1);
	memset(host254, 'b', sizeof host254 - 1);
	warm_up(srv.port);

	int fds = count_fds();
	hev2_stats_info s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
	CHECK_RC(hev2_stats(&s0), HEV2_OK);
	int n = (int)(sizeof rows / sizeof *rows);
	for (int i = 0; i < n; i++) {
		/* A known failure first, so that each row's text is its own. */
		CHECK_RC(hev2_set_max_handles(-12345), HEV2_EINVAL);
		CHECK(strcmp(hev2_last_error(), MARKER_TEXT) == 0);
		int got = rows[i].fn();
		check_count++;
		if (got != rows[i].want) {
			check_failures++;
			fprintf(stderr, "bad input %-28s -> %d (%s), want %d (%s)\n", rows[i].name, got,
			        hev2_strerror(got), rows[i].want, hev2_strerror(rows[i].want));
		}
		check_last_error(&rows[i]);
	}
	printf("bad-input table: %d rows\n", n);
	CHECK(n >= 30);
	CHECK(wait_idle(10000));
	usleep(50000);
	CHECK_RC(hev2_stats(&s1), HEV2_OK);
	/* nothing started but the trace rows' own (released) handles */
	CHECK_INT(s1.handles_created, s0.handles_created + (uint64_t)traced_handles);
	CHECK_INT(s1.handles_live, s0.handles_live);
	CHECK_INT(atomic_load(&callbacks), 0);
	CHECK_FDS(fds);
	test_stale_handle();
	test_options_size_1_2();
	test_report_handles();
	test_service();
	return check_done("test_badinput");
}
