/* Every function of hev2.h against real loopback sockets: the outcomes,
 * the result fields, fd ownership, socket options, completion (wait, fd,
 * callback, job), cancel and release, timeouts, capacity, size versioning. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static struct server srv4, srv6;
static int ipv6;

/* ---- callback bookkeeping --------------------------------------------- */

#define MAX_IDS 4096
static atomic_int cb_count[MAX_IDS];
static atomic_int cb_status[MAX_IDS];
static atomic_int cb_total;
static atomic_int cb_violations; /* fired on the connecting thread mid-call */
static pthread_t connecting_thread;
static atomic_int in_connect;

static void on_done(hev2_conn c, int status, void *data)
{
	if (atomic_load(&in_connect) && pthread_equal(pthread_self(), connecting_thread))
		atomic_fetch_add(&cb_violations, 1);
	if (data != (void *)0x5eed)
		atomic_fetch_add(&cb_violations, 1);
	if (c < MAX_IDS) {
		atomic_fetch_add(&cb_count[c], 1);
		atomic_store(&cb_status[c], status);
	}
	atomic_fetch_add(&cb_total, 1);
}

static int connect_cb(const char *host, const char *port, hev2_options *o, hev2_conn *c)
{
	o->on_done = on_done;
	o->on_done_data = (void *)0x5eed;
	connecting_thread = pthread_self();
	atomic_store(&in_connect, 1);
	int rc = hev2_connect(host, port, o, c);
	atomic_store(&in_connect, 0);
	return rc;
}

static char *portstr(int port)
{
	static __thread char buf[4][16];
	static __thread int k;
	char *s = buf[k++ % 4];
	snprintf(s, 16, "%d", port);
	return s;
}

/* ---- tests ------------------------------------------------------------- */

static void test_pure_c(void)
{
	CHECK_INT(hev2_version(), HEV2_VERSION_NUM);
	for (int st = 0; st >= HEV2_ECANCELED; st--) {
		const char *s = hev2_strerror(st);
		CHECK(s && *s && strcmp(s, hev2_strerror(-999)) != 0);
		for (int other = 0; other > st; other--)
			CHECK(strcmp(s, hev2_strerror(other)) != 0);
	}
	CHECK(strcmp(hev2_strerror(12345), "unknown hev2 status") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_ATTEMPT_WON), "attempt-won") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_LOOKUP_STARTED), "lookup-started") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_DONE), "done") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_ATTEMPT_DELAY), "attempt-delay") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_NAT64_DISCOVERY), "nat64-discovery") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_NAT64_PREFIX), "nat64-prefix") == 0);
	CHECK(strcmp(hev2_event_name(HEV2_EV_SYNTHESIZED), "synthesized") == 0);
	CHECK(strcmp(hev2_event_name(0), "unknown") == 0);
	CHECK(strcmp(hev2_event_name(99), "unknown") == 0);

	hev2_options o;
	memset(&o, 0xab, sizeof o);
	CHECK_RC(hev2_options_init(&o), HEV2_OK);
	CHECK_INT(o.size, sizeof o);
	CHECK_INT(o.fast_fallback, 1);
	CHECK_INT(o.family, AF_UNSPEC);
	CHECK_INT(o.resolver, HEV2_RESOLVER_DEFAULT);
	CHECK(o.on_done == NULL && o.local_host == NULL && o.static_hosts == NULL);
	CHECK_INT(o.connect_timeout_ms, 0);
	CHECK_INT(o.job, 0);
	CHECK_RC(hev2_init(), HEV2_OK);
	CHECK_RC(hev2_init(), HEV2_OK);
}

/* A successful connect: every result field, and the fd is the caller's. */
static void test_success(int af)
{
	struct server *s = af == AF_INET6 ? &srv6 : &srv4;
	const char *host = af == AF_INET6 ? "[::1]" : "127.0.0.1";
	int fds_before = count_fds();
	hev2_options o;
	hev2_options_init(&o);
	hev2_conn c = 0;
	CHECK_RC(connect_cb(host, portstr(s->port), &o, &c), HEV2_OK);
	CHECK(c != 0);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_wait(c, 0), HEV2_OK);

	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK(r.fd >= 0);
	CHECK_INT(r.family, af);
	CHECK_INT(r.port, s->port);
	CHECK(strcmp(r.address, af == AF_INET6 ? "::1" : "127.0.0.1") == 0);
	CHECK_INT(r.error, 0);
	CHECK_INT(r.eai, 0);
	CHECK_INT(r.timeout, HEV2_TIMEOUT_NONE);
	CHECK(r.elapsed_ms >= 0 && r.elapsed_ms < 5000);
	CHECK_INT(r.n_attempts, 1);
	CHECK_INT(r.n_events, 0); /* not asked for */
	CHECK_INT(r.lookups[0].state, HEV2_LOOKUP_NOT_STARTED); /* a literal */
	CHECK_INT(r.lookups[0].family, AF_INET6);
	CHECK_INT(r.lookups[1].family, AF_INET);

	/* sockaddr is the peer of the fd */
	struct sockaddr_storage peer;
	socklen_t plen = sizeof peer;
	CHECK(getpeername(r.fd, (struct sockaddr *)&peer, &plen) == 0);
	CHECK_INT(r.sockaddr_len, plen);
	CHECK(memcmp(&peer, &r.sockaddr, plen) == 0);
	CHECK_INT(r.sockaddr.ss_family, af);

	/* defaults: non-blocking, close-on-exec, no TCP_NODELAY, no keep-alive */
	CHECK(fcntl(r.fd, F_GETFL) & O_NONBLOCK);
	CHECK(fcntl(r.fd, F_GETFD) & FD_CLOEXEC);
	int v = -1;
	socklen_t vl = sizeof v;
	getsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl);
	CHECK_INT(v, 0);
	getsockopt(r.fd, SOL_SOCKET, SO_KEEPALIVE, &v, &vl);
	CHECK_INT(v, 0);

	hev2_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_OK);
	CHECK_INT(a.won, 1);
	CHECK_INT(a.error, 0);
	CHECK_INT(a.port, s->port);
	CHECK_INT(a.family, af);
	CHECK(strcmp(a.address, r.address) == 0);
	CHECK(a.end_ms >= a.start_ms);
	CHECK_RC(hev2_get_attempt(c, 1, &a), HEV2_EINVAL);
	CHECK(strncmp(hev2_errmsg(c), "connected to ", 13) == 0);

	/* A second hev2_result reports the same fd; release does not close it. */
	hev2_result_info r2 = {.size = sizeof r2};
	CHECK_RC(hev2_result(c, &r2), HEV2_OK);
	CHECK_INT(r2.fd, r.fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK(fcntl(r.fd, F_GETFD) >= 0);
	CHECK(write(r.fd, "x", 1) == 1 || errno == EPIPE || errno == ECONNRESET);
	close(r.fd);
	CHECK_FDS(fds_before);
	CHECK_RC(hev2_result(c, &r), HEV2_EHANDLE);
}

/* Release without hev2_result closes the winner: nothing leaks. */
static void test_release_closes_winner(void)
{
	int fds_before = count_fds();
	for (int i = 0; i < 50; i++) {
		hev2_conn c;
		CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), NULL, &c), HEV2_OK);
		CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
		CHECK_RC(hev2_release(c), HEV2_OK);
		CHECK_RC(hev2_release(c), HEV2_EHANDLE); /* double release */
	}
	CHECK_FDS(fds_before);
}

static void test_socket_options(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.blocking = 1;
	o.nodelay = 1;
	o.keepalive_ms = 5000;
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK(!(fcntl(r.fd, F_GETFL) & O_NONBLOCK));
	int v = 0;
	socklen_t vl = sizeof v;
	getsockopt(r.fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl);
	CHECK_INT(v, 1);
	getsockopt(r.fd, SOL_SOCKET, SO_KEEPALIVE, &v, &vl);
	CHECK_INT(v, 1);
	getsockopt(r.fd, IPPROTO_TCP, TCP_KEEPIDLE, &v, &vl);
	CHECK_INT(v, 5);
	close(r.fd);
	hev2_release(c);

	/* local address: the fd is bound to it */
	hev2_options_init(&o);
	o.local_host = "127.0.0.1";
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	struct sockaddr_in me;
	socklen_t ml = sizeof me;
	getsockname(r.fd, (struct sockaddr *)&me, &ml);
	CHECK_INT(ntohl(me.sin_addr.s_addr), INADDR_LOOPBACK);
	close(r.fd);
	hev2_release(c);
}

static void test_refused(void)
{
	hev2_options o;
	hev2_options_init(&o);
	hev2_conn c;
	int held;
	int port = refused_port(&held);
	CHECK_RC(connect_cb("127.0.0.1", portstr(port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	close(held);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECONNECT);
	CHECK_INT(r.fd, -1);
	CHECK_INT(r.error, ECONNREFUSED);
	CHECK_INT(r.timeout, HEV2_TIMEOUT_NONE);
	CHECK_INT(r.n_attempts, 1);
	hev2_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_OK);
	CHECK_INT(a.error, ECONNREFUSED);
	CHECK_INT(a.won, 0);
	CHECK(strstr(hev2_errmsg(c), "refused") != NULL);
	CHECK_RC(hev2_release(c), HEV2_OK);
}

/* A static list: ::1 drops SYNs, 127.0.0.1 accepts on the same port; the
 * IPv4 attempt starts one attempt delay later and wins; events recorded. */
static void test_static_fallback(void)
{
	if (!ipv6) {
		fprintf(stderr, "test_static_fallback: no ::1 on lo, IPv6 half not run\n");
		return;
	}
	struct blackhole bh;
	struct server s4;
	int ok = fallback_start(&s4, &bh);
	CHECK(ok == 0);
	if (ok)
		return;
	hev2_options o;
	hev2_options_init(&o);
	o.static_hosts = "other.test:192.0.2.1 fallback.test:[::1],127.0.0.1";
	o.connection_attempt_delay_ms = 40;
	o.record_events = 1;
	hev2_conn c;
	CHECK_RC(connect_cb("fallback.test", portstr(bh.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK_INT(r.family, AF_INET);
	CHECK(r.elapsed_ms >= 35); /* gross bound: the delay really ran */
	CHECK_INT(r.n_attempts, 2);
	hev2_attempt_info a0 = {.size = sizeof a0}, a1 = {.size = sizeof a1};
	CHECK_RC(hev2_get_attempt(c, 0, &a0), HEV2_OK);
	CHECK_RC(hev2_get_attempt(c, 1, &a1), HEV2_OK);
	CHECK(strcmp(a0.address, "::1") == 0 && a0.won == 0 && a0.error == 0);
	CHECK(strcmp(a1.address, "127.0.0.1") == 0 && a1.won == 1);
	CHECK(a1.start_ms >= 35);
	/* the events tell the same story, in order */
	int kinds[16], n = r.n_events < 16 ? r.n_events : 16;
	double started1 = -1, delay_until = -1;
	for (int i = 0; i < n; i++) {
		hev2_event_info e = {.size = sizeof e};
		CHECK_RC(hev2_get_event(c, i, &e), HEV2_OK);
		kinds[i] = e.kind;
		if (e.kind == HEV2_EV_ATTEMPT_STARTED && e.attempt == 1)
			started1 = e.at_ms;
		if (e.kind == HEV2_EV_ATTEMPT_DELAY && delay_until < 0)
			CHECK(sscanf(e.detail, "until %lf ms", &delay_until) == 1);
		if (i)
			CHECK(e.at_ms >= 0);
	}
	CHECK(n >= 4);
	CHECK_INT(kinds[0], HEV2_EV_ATTEMPT_STARTED);
	CHECK(started1 >= 35);
	/* the attempt delay announced when attempt 0 started is when attempt 1
	 * started: the timer never fires early, and fires (late by at most
	 * what a loaded machine's scheduling takes) */
	CHECK(delay_until >= 35 && started1 >= delay_until && started1 < delay_until + 1000);
	CHECK_INT(kinds[n - 1], HEV2_EV_DONE);
	hev2_event_info e = {.size = sizeof e};
	CHECK_RC(hev2_get_event(c, r.n_events, &e), HEV2_EINVAL);
	close(r.fd);
	hev2_release(c);

	/* family restriction: only 127.0.0.1 is tried */
	hev2_options_init(&o);
	o.static_hosts = "fallback.test:::1,127.0.0.1";
	o.family = AF_INET;
	CHECK_RC(hev2_connect("fallback.test", portstr(bh.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK_INT(r.n_attempts, 1); /* ::1 never tried, so no attempt delay */
	CHECK_RC(hev2_get_attempt(c, 0, &a0), HEV2_OK);
	CHECK(strcmp(a0.address, "127.0.0.1") == 0 && a0.won == 1);
	hev2_release(c); /* closes the winner */

	/* serial mode with connect_timeout: ::1 times out, then 127.0.0.1 */
	hev2_options_init(&o);
	o.static_hosts = "fallback.test:::1,127.0.0.1";
	o.fast_fallback = 0;
	o.connect_timeout_ms = 60;
	CHECK_RC(hev2_connect("fallback.test", portstr(bh.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK_INT(r.family, AF_INET);
	CHECK(r.elapsed_ms >= 55);
	hev2_release(c);

	server_stop(&s4);
	blackhole_stop(&bh);
}

static void test_timeouts(void)
{
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	static const struct {
		int field, ms, kind;
	} cases[] = {
		{0, 80, HEV2_TIMEOUT_CONNECT},
		{1, 80, HEV2_TIMEOUT_OPEN},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		hev2_options o;
		hev2_options_init(&o);
		if (cases[i].field == 0)
			o.connect_timeout_ms = cases[i].ms;
		else
			o.open_timeout_ms = cases[i].ms;
		hev2_conn c;
		double t0 = now_ms();
		CHECK_RC(connect_cb("127.0.0.1", portstr(bh.port), &o, &c), HEV2_OK);
		CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
		double took = now_ms() - t0;
		hev2_result_info r = {.size = sizeof r};
		CHECK_RC(hev2_result(c, &r), HEV2_OK);
		CHECK_RC(r.status, HEV2_ETIMEOUT);
		CHECK_INT(r.timeout, cases[i].kind);
		CHECK_INT(r.error, ETIMEDOUT);
		CHECK(took >= cases[i].ms - 5 && took < 3000);
		CHECK(strstr(hev2_errmsg(c), "timeout") != NULL);
		hev2_release(c);
	}
	blackhole_stop(&bh);
}

/* wait's timeout, hev2_fd, cancel, and the callback after cancel. */
static void test_wait_fd_cancel(void)
{
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	hev2_options o;
	hev2_options_init(&o);
	hev2_conn c;
	CHECK_RC(connect_cb("127.0.0.1", portstr(bh.port), &o, &c), HEV2_OK);
	double t0 = now_ms();
	CHECK_RC(hev2_wait(c, 60), HEV2_EAGAIN);
	CHECK(now_ms() - t0 >= 55);
	CHECK_RC(hev2_wait(c, 0), HEV2_EAGAIN);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_EAGAIN);
	hev2_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_EAGAIN);
	CHECK(strcmp(hev2_errmsg(c), "in progress") == 0);

	int fd = hev2_fd(c);
	CHECK(fd >= 0);
	CHECK_INT(hev2_fd(c), fd); /* the same fd every time */
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK_INT(poll(&p, 1, 30), 0);
	CHECK_RC(hev2_cancel(c), HEV2_OK);
	CHECK_RC(hev2_cancel(c), HEV2_OK); /* idempotent */
	CHECK_INT(poll(&p, 1, 5000), 1);
	CHECK_INT(poll(&p, 1, 0), 1); /* stays readable */
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECANCELED);
	CHECK_INT(r.fd, -1);
	CHECK_RC(hev2_cancel(c), HEV2_OK); /* after done: a no-op */
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECANCELED);
	CHECK(wait_idle(5000));
	CHECK_INT(atomic_load(&cb_count[c]), 1);
	CHECK_INT(atomic_load(&cb_status[c]), HEV2_ECANCELED);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK(fcntl(fd, F_GETFD) < 0); /* release closed the eventfd */

	/* hev2_fd after done is readable at once */
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	p.fd = hev2_fd(c);
	CHECK_INT(poll(&p, 1, 0), 1);
	hev2_release(c);

	/* release while running: the callback still fires once, canceled */
	CHECK_RC(connect_cb("127.0.0.1", portstr(bh.port), &o, &c), HEV2_OK);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK(wait_idle(5000));
	CHECK_INT(atomic_load(&cb_count[c]), 1);
	CHECK_INT(atomic_load(&cb_status[c]), HEV2_ECANCELED);
	blackhole_stop(&bh);
}

struct waiter {
	hev2_conn c;
	int rc;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	w->rc = hev2_wait(w->c, -1);
	return NULL;
}

/* A thread blocked in hev2_wait returns when another cancels or releases. */
static void test_concurrent_wait(void)
{
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	for (int release = 0; release < 2; release++) {
		struct waiter w = {.rc = 99};
		CHECK_RC(hev2_connect("127.0.0.1", portstr(bh.port), NULL, &w.c), HEV2_OK);
		pthread_t t;
		pthread_create(&t, NULL, wait_thread, &w);
		usleep(20000);
		if (release)
			CHECK_RC(hev2_release(w.c), HEV2_OK);
		else
			CHECK_RC(hev2_cancel(w.c), HEV2_OK);
		pthread_join(t, NULL);
		CHECK(w.rc == HEV2_OK || (release && w.rc == HEV2_EHANDLE));
		if (!release)
			hev2_release(w.c);
	}
	blackhole_stop(&bh);
}

static atomic_int job_runs;
static void count_job(void *data)
{
	(void)data;
	atomic_fetch_add(&job_runs, 1);
}

/* Completion triggers a registered postponed job; the host runs it. */
static void test_completion_job(void)
{
	hev2_job j;
	CHECK_RC(hev2_job_register(count_job, NULL, 0, &j), HEV2_OK);
	hev2_options o;
	hev2_options_init(&o);
	o.job = j;
	enum { N = 20 };
	hev2_conn cs[N];
	for (int i = 0; i < N; i++)
		CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), &o, &cs[i]), HEV2_OK);
	for (int i = 0; i < N; i++)
		CHECK_RC(hev2_wait(cs[i], 5000), HEV2_OK);
	CHECK(wait_idle(5000));
	struct pollfd p = {.fd = hev2_jobs_fd(), .events = POLLIN};
	CHECK_INT(poll(&p, 1, 5000), 1);
	int ran = hev2_run_jobs();
	CHECK_INT(ran, 1); /* N triggers coalesced into one run */
	CHECK_INT(atomic_load(&job_runs), 1);
	CHECK_INT(hev2_run_jobs(), 0);
	CHECK_INT(poll(&p, 1, 0), 0);
	for (int i = 0; i < N; i++)
		hev2_release(cs[i]);
}

static void test_capacity_and_stats(void)
{
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	hev2_stats_info s0 = {.size = sizeof s0}, s = {.size = sizeof s};
	CHECK_RC(hev2_stats(&s0), HEV2_OK);
	CHECK_INT(s0.max_handles, HEV2_DEFAULT_MAX_HANDLES);
	CHECK_RC(hev2_set_max_handles(2), HEV2_OK);
	hev2_conn a, b, c;
	CHECK_RC(hev2_connect("127.0.0.1", portstr(bh.port), NULL, &a), HEV2_OK);
	CHECK_RC(hev2_connect("127.0.0.1", portstr(bh.port), NULL, &b), HEV2_OK);
	hev2_options o;
	hev2_options_init(&o);
	int before = atomic_load(&cb_total);
	CHECK_RC(connect_cb("127.0.0.1", portstr(bh.port), &o, &c), HEV2_ECAPACITY);
	CHECK_INT(c, 0);
	CHECK_RC(hev2_stats(&s), HEV2_OK);
	CHECK_INT(s.handles_running, 2);
	CHECK_INT(s.handles_live, s0.handles_live + 2);
	CHECK_INT(s.over_capacity, s0.over_capacity + 1);
	CHECK_INT(s.handles_created, s0.handles_created + 2);
	CHECK_RC(hev2_cancel(a), HEV2_OK);
	CHECK_RC(hev2_wait(a, 5000), HEV2_OK);
	CHECK(wait_idle(0) == 0);
	/* a finished handle no longer counts against the cap (once its
	 * callback has run, on a library thread: polled, for up to 5 s) */
	for (double end = now_ms() + 5000;
	     hev2_connect("127.0.0.1", portstr(bh.port), NULL, &c) == HEV2_ECAPACITY && now_ms() < end;)
		usleep(1000);
	CHECK(c != 0);
	hev2_release(a);
	hev2_release(b);
	hev2_release(c);
	CHECK(wait_idle(5000));
	CHECK_RC(hev2_set_max_handles(HEV2_DEFAULT_MAX_HANDLES), HEV2_OK);
	CHECK_RC(hev2_stats(&s), HEV2_OK);
	CHECK_INT(s.handles_live, s0.handles_live);
	CHECK_INT(s.handles_running, 0);
	usleep(20000);
	CHECK_INT(atomic_load(&cb_total), before); /* the refused connect never fired */
	blackhole_stop(&bh);
}

/* Size-versioned structs: a newer caller's larger struct works (unknown
 * tail zeroed or required zero); an older, smaller one is refused. */
static void test_size_versioning(void)
{
	struct {
		hev2_result_info r;
		char tail[64];
	} big;
	memset(&big, 0x5a, sizeof big);
	big.r.size = sizeof big;
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	CHECK_RC(hev2_result(c, &big.r), HEV2_OK);
	CHECK_INT(big.r.size, sizeof big);
	CHECK_RC(big.r.status, HEV2_OK);
	int zero = 1;
	for (size_t i = 0; i < sizeof big.tail; i++)
		zero &= big.tail[i] == 0;
	CHECK(zero);
	close(big.r.fd);
	hev2_release(c);

	struct {
		hev2_options o;
		char tail[32];
	} bigo;
	memset(&bigo, 0, sizeof bigo);
	hev2_options_init(&bigo.o);
	bigo.o.size = sizeof bigo;
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), &bigo.o, &c), HEV2_OK);
	hev2_release(c);
	bigo.tail[7] = 1; /* asks for something this library does not know */
	CHECK_RC(hev2_connect("127.0.0.1", portstr(srv4.port), &bigo.o, &c), HEV2_EOPTIONS);

	/* hev2_stats_info's first layout (before the lookups_* fields) is
	 * still accepted, and nothing past it is written. */
	hev2_stats_info st;
	memset(&st, 0x77, sizeof st);
	st.size = offsetof(hev2_stats_info, lookups_in_flight);
	CHECK_RC(hev2_stats(&st), HEV2_OK);
	CHECK_INT(st.max_handles, HEV2_DEFAULT_MAX_HANDLES);
	CHECK(st.max_lookups == 0x7777777777777777ULL);
	st.size = sizeof st;
	CHECK_RC(hev2_stats(&st), HEV2_OK);
	CHECK(st.max_lookups >= 1 && st.max_lookups < 100000);
	CHECK(st.lookups_in_flight <= st.max_lookups);
	/* The thread rules of "Capacity": lookups still waited for, then the
	 * hand-over to the built-in client, then the hard cap. */
	CHECK_INT(st.max_lookups, 128);
	CHECK_INT(st.handover_at, 128);
	CHECK_INT(st.max_resolver_threads, 192);
	CHECK(st.lookups_handed_over == 0);
}

int main(void)
{
	ipv6 = have_ipv6_loopback();
	if (server_start(&srv4, AF_INET) < 0 || (ipv6 && server_start(&srv6, AF_INET6) < 0)) {
		perror("server");
		return 1;
	}
	test_pure_c();
	/* Every connect here starts from RFC 8305's defaults, however often a
	 * name is reused: the history is test_history.c's. */
	CHECK_RC(hev2_set_history(0), HEV2_OK);
	warm_up(srv4.port);
	test_success(AF_INET);
	if (ipv6)
		test_success(AF_INET6);
	test_release_closes_winner();
	test_socket_options();
	test_refused();
	test_static_fallback();
	test_timeouts();
	test_wait_fd_cancel();
	test_concurrent_wait();
	test_completion_job();
	test_capacity_and_stats();
	test_size_versioning();

	CHECK(wait_idle(5000));
	CHECK_INT(atomic_load(&cb_violations), 0);
	for (int i = 0; i < MAX_IDS; i++)
		CHECK(atomic_load(&cb_count[i]) <= 1);
	return check_done("test_api");
}
