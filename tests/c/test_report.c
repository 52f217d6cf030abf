/* The establishment report through the C ABI (hev2_report,
 * hev2_report_lookup, hev2_report_attempt) on real loopback races: ::1
 * refused or silent against a listening 127.0.0.1, a refused literal, a
 * timed-out connect; both drives; size versioning; the HTTPS part's
 * accessors on a race without it (their bad input too; the HTTPS part of
 * a real HTTPS race is the bindings' tests', against hev2-testdns). Bad
 * input of the 1.3 functions is in test_badinput.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static struct server srv4;
/* srv4's port on ::1, bound and not listening (refused) until
 * test_ipv6_silent makes it drop SYNs; -1 from then on. */
static int srv4_v6 = -1;

static hev2_options recorded(int drive)
{
	hev2_options o;
	hev2_options_init(&o);
	o.record_events = 1;
	o.drive = drive;
	return o;
}

/* run connects, waits and returns the handle (its fd closed if it won). */
static hev2_conn run(const char *host, int port, hev2_options *o)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	hev2_conn c = 0;
	CHECK_RC(hev2_connect(host, p, o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	if (r.fd >= 0)
		close(r.fd);
	return c;
}

static void check_no_lookups(hev2_conn c)
{
	for (int i = 0; i < 2; i++) {
		hev2_report_lookup_info l = {.size = sizeof l};
		CHECK_RC(hev2_report_lookup(c, i, &l), HEV2_OK);
		CHECK_INT(l.family, i == 0 ? AF_INET6 : AF_INET);
		CHECK_INT(l.state, HEV2_REPORT_LOOKUP_NOT_ASKED);
		CHECK(l.start_ms == 0 && l.end_ms == 0 && l.n_addrs == 0 && l.eai == 0);
	}
}

/* ::1 refuses at once, 127.0.0.1 listens: IPv4 wins because IPv6 failed. */
static void test_ipv6_refused(int drive)
{
	hev2_options o = recorded(drive);
	o.static_hosts = "dual.test:::1,127.0.0.1";
	hev2_conn c = run("dual.test", srv4.port, &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK_INT(r.connected, 1);
	CHECK_INT(r.winner, 1);
	CHECK_INT(r.family, AF_INET);
	CHECK_INT(r.reason, HEV2_REPORT_REASON_OTHER_FAMILY_FAILED);
	CHECK_INT(r.timeout, HEV2_TIMEOUT_NONE);
	CHECK_INT(r.resolving.happened, 0);
	CHECK_INT(r.resolution_delay.happened, 0);
	CHECK_INT(r.resolution_delay_expired, 0);
	CHECK_INT(r.connecting.happened, 1);
	CHECK(r.connecting.start_ms == 0 && r.connecting.end_ms == r.elapsed_ms && r.elapsed_ms > 0);
	CHECK_INT(r.n_attempts, 2);
	check_no_lookups(c);

	hev2_report_attempt_info a6 = {.size = sizeof a6}, a4 = {.size = sizeof a4};
	CHECK_RC(hev2_report_attempt(c, 0, &a6), HEV2_OK);
	CHECK_RC(hev2_report_attempt(c, 1, &a4), HEV2_OK);
	CHECK(strcmp(a6.address, "::1") == 0 && a6.family == AF_INET6 && a6.port == srv4.port);
	CHECK_INT(a6.outcome, HEV2_REPORT_ATTEMPT_FAILED);
	CHECK_INT(a6.error, ECONNREFUSED);
	CHECK_INT(a6.bind_failed, 0);
	CHECK(a6.synthesized_from[0] == '\0' && a4.synthesized_from[0] == '\0'); /* no NAT64 here */
	CHECK(strcmp(a4.address, "127.0.0.1") == 0 && a4.family == AF_INET);
	CHECK_INT(a4.outcome, HEV2_REPORT_ATTEMPT_CONNECTED);
	CHECK_INT(a4.error, 0);
	/* IPv4 starts the moment IPv6 fails, and its connect ends the race. */
	CHECK(a6.start_ms == 0 && a4.start_ms == a6.end_ms && a4.end_ms == r.elapsed_ms);

	/* Asked twice, the same answer (built once, kept with the handle). */
	hev2_report_info again = {.size = sizeof again};
	CHECK_RC(hev2_report(c, &again), HEV2_OK);
	CHECK(memcmp(&again, &r, sizeof r) == 0);
	CHECK_RC(hev2_release(c), HEV2_OK);
}

/* ::1 drops SYNs (the demo's race): 127.0.0.1 starts after the attempt
 * delay and wins while ::1 is still in flight. */
static void test_ipv6_silent(void)
{
	struct blackhole bh;
	int fd6 = srv4_v6;
	srv4_v6 = -1; /* the blackhole's now */
	if (blackhole_start_on(&bh, fd6) < 0) {
		CHECK(!"a ::1 listener on 127.0.0.1's port");
		return;
	}
	hev2_options o = recorded(HEV2_DRIVE_LIBRARY);
	o.static_hosts = "dual.test:::1,127.0.0.1";
	o.connection_attempt_delay_ms = 20;
	hev2_conn c = run("dual.test", srv4.port, &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_INT(r.connected, 1);
	CHECK_INT(r.family, AF_INET);
	CHECK_INT(r.reason, HEV2_REPORT_REASON_FIRST_TO_CONNECT);
	CHECK_INT(r.n_attempts, 2);
	hev2_report_attempt_info a6 = {.size = sizeof a6}, a4 = {.size = sizeof a4};
	CHECK_RC(hev2_report_attempt(c, 0, &a6), HEV2_OK);
	CHECK_RC(hev2_report_attempt(c, 1, &a4), HEV2_OK);
	CHECK_INT(a6.outcome, HEV2_REPORT_ATTEMPT_LOST);
	CHECK_INT(a6.error, 0);
	CHECK(a6.end_ms == r.elapsed_ms && a4.end_ms == r.elapsed_ms);
	CHECK(a4.start_ms >= 20); /* the attempt delay, not a failure, started it */
	CHECK_INT(a4.outcome, HEV2_REPORT_ATTEMPT_CONNECTED);
	CHECK_RC(hev2_release(c), HEV2_OK);
	blackhole_stop(&bh);
}

/* A refused literal: no winner, the attempt failed with its errno. */
static void test_refused_literal(void)
{
	hev2_options o = recorded(HEV2_DRIVE_WAITER);
	int held;
	hev2_conn c = run("127.0.0.1", refused_port(&held), &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECONNECT);
	CHECK_INT(r.connected, 0);
	CHECK_INT(r.winner, -1);
	CHECK_INT(r.family, 0);
	CHECK_INT(r.reason, HEV2_REPORT_REASON_NONE);
	CHECK_INT(r.n_attempts, 1);
	check_no_lookups(c);
	hev2_report_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_OK);
	CHECK_INT(a.outcome, HEV2_REPORT_ATTEMPT_FAILED);
	CHECK_INT(a.error, ECONNREFUSED);
	CHECK(a.end_ms == r.elapsed_ms);
	CHECK_RC(hev2_release(c), HEV2_OK);
	close(held);
}

/* A literal that wins: its family won with nothing else given. */
static void test_literal_wins(void)
{
	hev2_options o = recorded(HEV2_DRIVE_LIBRARY);
	hev2_conn c = run("127.0.0.1", srv4.port, &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_INT(r.connected, 1);
	CHECK_INT(r.winner, 0);
	CHECK_INT(r.reason, HEV2_REPORT_REASON_GIVEN_ADDRESSES);
	CHECK_RC(hev2_release(c), HEV2_OK);
}

/* connect_timeout on a silent address: the attempt timed out. */
static void test_timed_out(void)
{
	struct blackhole bh;
	if (blackhole_start(&bh, AF_INET) < 0) {
		CHECK(!"a 127.0.0.1 blackhole listener");
		return;
	}
	hev2_options o = recorded(HEV2_DRIVE_WAITER);
	o.connect_timeout_ms = 30;
	hev2_conn c = run("127.0.0.1", bh.port, &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ETIMEOUT);
	CHECK_INT(r.timeout, HEV2_TIMEOUT_CONNECT);
	hev2_report_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_OK);
	CHECK_INT(a.outcome, HEV2_REPORT_ATTEMPT_TIMED_OUT);
	CHECK_INT(a.error, ETIMEDOUT);
	CHECK(a.end_ms == r.elapsed_ms && r.elapsed_ms >= 30);
	CHECK_RC(hev2_release(c), HEV2_OK);
	blackhole_stop(&bh);
}

/* A race without the HTTPS query: no HTTPS part (https_state NONE, no
 * service lookup), each attempt the origin's (service 0) with its origin;
 * the HTTPS part's accessors refuse every index. Their bad input: NULL,
 * a size too small, an index out of range, a stale handle. The 1.3 sizes
 * of hev2_report_info and hev2_report_attempt_info are still accepted. */
static void test_https_part_absent(void)
{
	hev2_options o = recorded(HEV2_DRIVE_LIBRARY);
	hev2_conn c = run("127.0.0.1", srv4.port, &o);
	hev2_report_info r = {.size = sizeof r};
	CHECK_RC(hev2_report(c, &r), HEV2_OK);
	CHECK_INT(r.https_state, HEV2_HTTPS_NONE);
	CHECK(r.n_service_lookups == 0 && r.n_services == 0 && r.n_skipped == 0 && r.n_replaced == 0);
	hev2_report_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_report_attempt(c, 0, &a), HEV2_OK);
	CHECK_INT(a.service, 0);
	CHECK_INT(a.origin, HEV2_ORIGIN_STATIC);

	/* The 1.3 layouts: everything up to n_attempts, up to synthesized_from. */
	struct {
		hev2_report_info r;
		unsigned char canary[64];
	} old;
	memset(&old, 0xa5, sizeof old);
	old.r.size = offsetof(hev2_report_info, https_state);
	CHECK_RC(hev2_report(c, &old.r), HEV2_OK);
	CHECK_INT(old.r.n_attempts, 1);
	CHECK_INT(old.r.connected, 1);
	CHECK(((unsigned char *)&old.r)[offsetof(hev2_report_info, https_state)] == 0xa5); /* untouched */
	struct {
		hev2_report_attempt_info a;
		unsigned char canary[64];
	} olda;
	memset(&olda, 0xa5, sizeof olda);
	olda.a.size = offsetof(hev2_report_attempt_info, service);
	CHECK_RC(hev2_report_attempt(c, 0, &olda.a), HEV2_OK);
	CHECK_INT(olda.a.outcome, HEV2_REPORT_ATTEMPT_CONNECTED);
	CHECK(((unsigned char *)&olda.a)[offsetof(hev2_report_attempt_info, service)] == 0xa5);
	/* Smaller than 1.3's: refused. */
	old.r.size = offsetof(hev2_report_info, https_state) - 4;
	CHECK_RC(hev2_report(c, &old.r), HEV2_EINVAL);

	hev2_report_service_lookup_info l = {.size = sizeof l};
	hev2_report_service_info s = {.size = sizeof s};
	hev2_report_skipped_info k = {.size = sizeof k};
	hev2_report_replaced_info p = {.size = sizeof p};
	CHECK_RC(hev2_report_service_lookup(c, 0, &l), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_service_lookup: service lookup index 0 out of range (the race made no HTTPS query)") != NULL);
	CHECK_RC(hev2_report_service(c, 0, &s), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_service: service index 0 out of range") != NULL);
	CHECK_RC(hev2_report_skipped(c, -1, &k), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "skipped record index -1 out of range") != NULL);
	CHECK_RC(hev2_report_replaced(c, 3, &p), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "replaced hint index 3 out of range") != NULL);

	CHECK_RC(hev2_report_service_lookup(c, 0, NULL), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_service_lookup: l is NULL") != NULL);
	CHECK_RC(hev2_report_service(c, 0, NULL), HEV2_EINVAL);
	CHECK_RC(hev2_report_skipped(c, 0, NULL), HEV2_EINVAL);
	CHECK_RC(hev2_report_replaced(c, 0, NULL), HEV2_EINVAL);
	l.size = sizeof l - 8;
	CHECK_RC(hev2_report_service_lookup(c, 0, &l), HEV2_EINVAL);
	CHECK(strstr(hev2_last_error(), "hev2_report_service_lookup: l->size ") != NULL);
	s.size = 4;
	CHECK_RC(hev2_report_service(c, 0, &s), HEV2_EINVAL);
	k.size = (size_t)-1;
	CHECK_RC(hev2_report_skipped(c, 0, &k), HEV2_EINVAL);
	p.size = 0;
	CHECK_RC(hev2_report_replaced(c, 0, &p), HEV2_EINVAL);
	l.size = sizeof l;
	CHECK_RC(hev2_report_service_lookup(0, 0, &l), HEV2_EHANDLE);

	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_RC(hev2_report_service_lookup(c, 0, &l), HEV2_EHANDLE);
	CHECK(strstr(hev2_last_error(), "unknown (never issued, or released)") != NULL);
	s.size = sizeof s;
	CHECK_RC(hev2_report_service(c, 0, &s), HEV2_EHANDLE);
}

/* A caller built against a newer header (a larger struct) gets the tail
 * zeroed and its size kept. */
static void test_larger_struct(void)
{
	hev2_options o = recorded(HEV2_DRIVE_LIBRARY);
	hev2_conn c = run("127.0.0.1", srv4.port, &o);
	struct {
		hev2_report_attempt_info a;
		unsigned char tail[32];
	} big;
	memset(&big, 0xa5, sizeof big);
	big.a.size = sizeof big;
	CHECK_RC(hev2_report_attempt(c, 0, &big.a), HEV2_OK);
	CHECK(big.a.size == sizeof big);
	CHECK_INT(big.a.outcome, HEV2_REPORT_ATTEMPT_CONNECTED);
	int zero = 1;
	for (size_t i = 0; i < sizeof big.tail; i++)
		zero = zero && big.tail[i] == 0;
	CHECK(zero);
	CHECK_RC(hev2_release(c), HEV2_OK);
}

int main(void)
{
	/* srv4's port is held on ::1 too: the two-family races need ::1 to
	 * refuse there, not to reach another test's listener. */
	int fd4;
	if (have_ipv6_loopback() ? reserve_both(&fd4, &srv4_v6) < 0 || server_start_on(&srv4, fd4) < 0
	                         : server_start(&srv4, AF_INET) < 0)
		return 1;
	warm_up(srv4.port);
	/* Each race here starts from RFC 8305's defaults, however often a name
	 * is reused: the history is test_history.c's. */
	CHECK_RC(hev2_set_history(0), HEV2_OK);
	int fds = count_fds();
	test_refused_literal();
	test_literal_wins();
	test_timed_out();
	test_larger_struct();
	test_https_part_absent();
	if (have_ipv6_loopback()) {
		test_ipv6_refused(HEV2_DRIVE_LIBRARY);
		test_ipv6_refused(HEV2_DRIVE_WAITER);
		test_ipv6_silent();
	} else {
		printf("test_report: no ::1 on lo, the two-family races are skipped\n");
	}
	CHECK(wait_idle(10000));
	CHECK_FDS(fds);
	server_stop(&srv4);
	return check_done("test_report");
}
