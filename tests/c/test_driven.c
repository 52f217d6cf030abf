/* Handles driven by the waiter (hev2_options.drive = HEV2_DRIVE_WAITER):
 * the race is played inside hev2_wait on the calling thread. Each case
 * also holds for the default drive; here we prove the waiter-driven one:
 * a connect, a wait in slices, a cancel and a release from another thread
 * while a waiter is blocked, callbacks from a library thread, fallback,
 * several waiters, bad values, and no fd left behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

/* The port fd is connected to, -1 if none. */
static int peer_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static void waiter_options(hev2_options *o)
{
	hev2_options_init(o);
	o->drive = HEV2_DRIVE_WAITER;
}

static void test_connect(int port)
{
	int before = count_fds();
	hev2_options o;
	waiter_options(&o);
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK(r.fd >= 0);
	CHECK_INT(r.family, AF_INET);
	CHECK_INT(r.n_attempts, 1);
	if (r.fd >= 0)
		close(r.fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_FDS(before);
}

/* hev2_wait(c, 0) makes what progress is possible without blocking: a
 * loopback connect is complete (or refused) when connect(2) returns, so
 * polling with zero timeouts alone decides it -- no wait that blocks is
 * ever made. (It once returned EAGAIN before looking at the sockets, and a
 * host that only ever polled waited forever.) */
static void test_zero_timeout_makes_progress(int port)
{
	int held;
	int ports[2] = {port, refused_port(&held)};
	for (int k = 0; k < 2; k++) {
		hev2_options o;
		waiter_options(&o);
		char p[16];
		snprintf(p, sizeof p, "%d", ports[k]);
		hev2_conn c;
		CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
		int rc = HEV2_EAGAIN;
		for (double end = now_ms() + 10000; rc == HEV2_EAGAIN && now_ms() < end;) {
			rc = hev2_wait(c, 0);
			if (rc == HEV2_EAGAIN)
				usleep(1000);
		}
		CHECK_RC(rc, HEV2_OK);
		hev2_result_info r = {.size = sizeof r};
		CHECK_RC(hev2_result(c, &r), HEV2_OK);
		CHECK_RC(r.status, k == 0 ? HEV2_OK : HEV2_ECONNECT);
		if (r.fd >= 0)
			close(r.fd);
		CHECK_RC(hev2_release(c), HEV2_OK);
	}
	close(held);
}

static void test_refused(void)
{
	hev2_options o;
	waiter_options(&o);
	char p[16];
	int held;
	snprintf(p, sizeof p, "%d", refused_port(&held));
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECONNECT);
	CHECK_INT(r.error, ECONNREFUSED);
	CHECK_INT(r.fd, -1);
	hev2_release(c);
	close(held);
}

/* ::1 drops SYNs, 127.0.0.1 accepts on the same port: IPv6 first, IPv4
 * after the attempt delay, waited for in 5 ms slices that lose nothing. */
static void test_fallback_in_slices(void)
{
	if (!have_ipv6_loopback()) {
		printf("skip fallback: no ::1\n");
		return;
	}
	struct server s4;
	struct blackhole bh;
	if (fallback_start(&s4, &bh) != 0) {
		CHECK(!"fallback_start");
		return;
	}
	int before = count_fds();
	hev2_options o;
	waiter_options(&o);
	/* Long enough to span several 5 ms slices also when this thread is
	 * scheduled late on a loaded machine. */
	o.connection_attempt_delay_ms = 200;
	o.static_hosts = "dual.test:::1,127.0.0.1";
	o.record_events = 1;
	char p[16];
	snprintf(p, sizeof p, "%d", bh.port);
	hev2_conn c;
	CHECK_RC(hev2_connect("dual.test", p, &o, &c), HEV2_OK);
	int slices = 0, rc;
	while ((rc = hev2_wait(c, 5)) == HEV2_EAGAIN)
		slices++;
	CHECK_RC(rc, HEV2_OK);
	CHECK(slices >= 2); /* the attempt delay spans several slices */
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	CHECK_INT(r.family, AF_INET);
	CHECK_INT(r.n_attempts, 2);
	hev2_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_OK);
	CHECK(strcmp(a.address, "::1") == 0);
	CHECK(a.won == 0);
	int closed = 0;
	for (int i = 0; i < r.n_events; i++) {
		hev2_event_info e = {.size = sizeof e};
		CHECK_RC(hev2_get_event(c, i, &e), HEV2_OK);
		closed |= e.kind == HEV2_EV_ATTEMPT_CLOSED && e.attempt == 0;
	}
	CHECK(closed);
	if (r.fd >= 0)
		close(r.fd);
	hev2_release(c);
	CHECK_FDS(before);
	server_stop(&s4);
	blackhole_stop(&bh);
}

struct later {
	hev2_conn c;
	int ms;
	int release; /* 1: hev2_release, 0: hev2_cancel */
};

static void *act_later(void *arg)
{
	struct later *l = arg;
	usleep((useconds_t)l->ms * 1000);
	if (l->release)
		hev2_release(l->c);
	else
		hev2_cancel(l->c);
	return NULL;
}

/* A waiter blocked forever on a SYN-dropping listener is woken by a cancel
 * or a release from another thread; nothing is left open. */
static void test_cancel_and_release_from_another_thread(void)
{
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	char p[16];
	snprintf(p, sizeof p, "%d", bh.port);
	for (int release = 0; release <= 1; release++) {
		int before = count_fds();
		hev2_options o;
		waiter_options(&o);
		hev2_conn c;
		CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
		struct later l = {.c = c, .ms = 30, .release = release};
		pthread_t t;
		pthread_create(&t, NULL, act_later, &l);
		double t0 = now_ms();
		int rc = hev2_wait(c, 10000);
		double took = now_ms() - t0;
		pthread_join(t, NULL);
		CHECK(took < 5000); /* woken, not timed out */
		if (release) {
			CHECK_RC(rc, HEV2_EHANDLE);
		} else {
			CHECK_RC(rc, HEV2_OK);
			hev2_result_info r = {.size = sizeof r};
			CHECK_RC(hev2_result(c, &r), HEV2_OK);
			CHECK_RC(r.status, HEV2_ECANCELED);
			CHECK_INT(r.fd, -1);
			CHECK_RC(hev2_release(c), HEV2_OK);
		}
		CHECK_FDS(before);
	}
	/* With nobody waiting, a cancel settles the outcome by itself. */
	hev2_options o;
	waiter_options(&o);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_cancel(c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 0), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECANCELED);
	hev2_release(c);
	blackhole_stop(&bh);
}

struct done_record {
	pthread_t waiter;
	pthread_t caller;
	int status;
	int calls;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void on_done(hev2_conn c, int status, void *data)
{
	(void)c;
	struct done_record *d = data;
	pthread_mutex_lock(&d->mu);
	d->caller = pthread_self();
	d->status = status;
	d->calls++;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* on_done of a waiter-driven handle comes from a library thread, never
 * from inside the hev2_wait that decided the race. */
static void test_callback_not_on_waiter(int port)
{
	struct done_record d = {.waiter = pthread_self(), .mu = PTHREAD_MUTEX_INITIALIZER,
	                        .cv = PTHREAD_COND_INITIALIZER};
	hev2_options o;
	waiter_options(&o);
	o.on_done = on_done;
	o.on_done_data = &d;
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	pthread_mutex_lock(&d.mu);
	while (d.calls == 0)
		pthread_cond_wait(&d.cv, &d.mu);
	pthread_mutex_unlock(&d.mu);
	CHECK_INT(d.calls, 1);
	CHECK_RC(d.status, HEV2_OK);
	CHECK(!pthread_equal(d.caller, d.waiter));
	hev2_release(c);
}

/* Jobs: one that is not HEV2_JOB_DIRECT is triggered by the thread that
 * decides the race, here hev2_cancel with nobody driving: the jobs fd is
 * readable as soon as hev2_cancel returns, and the job runs once, in
 * hev2_run_jobs. A DIRECT job runs code of the host's, so it still comes
 * from a library thread, never from inside the hev2_wait that decided. */
static atomic_int plain_job_runs;
static void plain_job(void *data) { (void)data, atomic_fetch_add(&plain_job_runs, 1); }

static pthread_mutex_t direct_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t direct_cv = PTHREAD_COND_INITIALIZER;
static int direct_runs;
static pthread_t direct_thread;
static void direct_job(void *data)
{
	(void)data;
	pthread_mutex_lock(&direct_mu);
	direct_thread = pthread_self();
	direct_runs++;
	pthread_cond_signal(&direct_cv);
	pthread_mutex_unlock(&direct_mu);
}

static void test_jobs_by_deciding_thread(int port)
{
	hev2_job plain, direct;
	CHECK_RC(hev2_job_register(plain_job, NULL, 0, &plain), HEV2_OK);
	CHECK_RC(hev2_job_register(direct_job, NULL, HEV2_JOB_DIRECT, &direct), HEV2_OK);
	hev2_run_jobs(); /* nothing left over from earlier tests */
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	char p[16];
	snprintf(p, sizeof p, "%d", bh.port);
	hev2_options o;
	waiter_options(&o);
	o.job = plain;
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 0), HEV2_EAGAIN); /* the SYN is dropped: pending */
	struct pollfd jfd = {.fd = hev2_jobs_fd(), .events = POLLIN};
	CHECK_INT(poll(&jfd, 1, 0), 0);
	CHECK_RC(hev2_cancel(c), HEV2_OK);
	CHECK_INT(poll(&jfd, 1, 0), 1); /* triggered inside hev2_cancel */
	CHECK_INT(hev2_run_jobs(), 1);
	CHECK_INT(atomic_load(&plain_job_runs), 1);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECANCELED);
	hev2_release(c);
	blackhole_stop(&bh);

	o.job = direct;
	snprintf(p, sizeof p, "%d", port);
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	pthread_mutex_lock(&direct_mu);
	while (direct_runs == 0)
		pthread_cond_wait(&direct_cv, &direct_mu);
	CHECK_INT(direct_runs, 1);
	CHECK(!pthread_equal(direct_thread, pthread_self()));
	pthread_mutex_unlock(&direct_mu);
	hev2_release(c);
}

struct waiter_arg {
	hev2_conn c;
	int rc;
};

static void *wait_thread(void *arg)
{
	struct waiter_arg *w = arg;
	w->rc = hev2_wait(w->c, 10000);
	return NULL;
}

/* Several threads wait on one handle: one drives, all see the outcome. */
static void test_several_waiters(void)
{
	if (!have_ipv6_loopback())
		return;
	struct server s4;
	struct blackhole bh;
	if (fallback_start(&s4, &bh) != 0) {
		CHECK(!"fallback_start");
		return;
	}
	hev2_options o;
	waiter_options(&o);
	o.connection_attempt_delay_ms = 20;
	o.static_hosts = "dual.test:::1,127.0.0.1";
	char p[16];
	snprintf(p, sizeof p, "%d", bh.port);
	hev2_conn c;
	CHECK_RC(hev2_connect("dual.test", p, &o, &c), HEV2_OK);
	struct waiter_arg w[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		w[i].c = c;
		pthread_create(&t[i], NULL, wait_thread, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_RC(w[i].rc, HEV2_OK);
	}
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	if (r.fd >= 0)
		close(r.fd);
	hev2_release(c);
	server_stop(&s4);
	blackhole_stop(&bh);
}

static void test_bad_values(int port)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	hev2_options o;
	hev2_conn c;
	waiter_options(&o);
	o.drive = 2;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_EOPTIONS);
	CHECK(strstr(hev2_last_error(), "drive 2") != NULL);
	o.drive = -1;
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_EOPTIONS);
	/* A caller built against 1.1 (no drive field) still gets the default. */
	hev2_options_init(&o);
	o.size = offsetof(hev2_options, drive);
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	hev2_release(c);
	/* Bad wait timeouts are refused the same way for both drives. */
	waiter_options(&o);
	CHECK_RC(hev2_connect("127.0.0.1", p, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -2), HEV2_EINVAL);
	CHECK_RC(hev2_wait(c, HEV2_MAX_TIMEOUT_MS + 1), HEV2_EINVAL);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_EHANDLE);
}

/* A static entry with no address of the wanted family is an outcome, as
 * with the default drive, not a refused call. */
static void test_outcome_before_io(void)
{
	hev2_options o;
	waiter_options(&o);
	o.family = AF_INET6;
	o.static_hosts = "v4only.test:127.0.0.1";
	hev2_conn c;
	CHECK_RC(hev2_connect("v4only.test", "80", &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ERESOLVE);
	hev2_release(c);
}

/* hev2_connect_wait: the one-call form. */
struct cancel_when_published {
	volatile hev2_conn *out;
	int ms;
};

static void *cancel_published(void *arg)
{
	struct cancel_when_published *w = arg;
	hev2_conn c;
	while ((c = *w->out) == 0)
		usleep(1000);
	usleep((useconds_t)w->ms * 1000);
	hev2_cancel(c);
	return NULL;
}

/* A race decided by its first look is handed over without a handle ever
 * being made (yet counted as created); an undecided one gets its handle
 * before the call blocks. */
static void test_connect_wait(int port)
{
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	int before = count_fds();
	hev2_options dopts;
	hev2_options_init(&dopts);
	const hev2_options *opts = NULL;
	hev2_stats_info st0 = {.size = sizeof st0}, st1 = {.size = sizeof st1};
	CHECK_RC(hev2_stats(&st0), HEV2_OK);
	hev2_conn c = 99;
	int fd = 99;
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -1, &c, &fd), HEV2_OK);
	CHECK_INT(c, 0); /* released already */
	CHECK(fd >= 0);
	CHECK_RC(hev2_stats(&st1), HEV2_OK);
	CHECK_INT(st1.handles_live, st0.handles_live);
	CHECK_INT(st1.handles_running, st0.handles_running);
	CHECK_INT(st1.handles_created, st0.handles_created + 1);
	if (fd >= 0) {
		CHECK_INT(peer_port(fd), port);
		close(fd);
	}
	CHECK_FDS(before);

	/* refused: the outcome code, and the handle for the details */
	int held;
	snprintf(p, sizeof p, "%d", refused_port(&held));
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -1, &c, &fd), HEV2_ECONNECT);
	close(held);
	CHECK(c != 0);
	CHECK_INT(fd, -1);
	CHECK(strstr(hev2_last_error(), "hev2_connect_wait: ") == hev2_last_error());
	CHECK(strstr(hev2_last_error(), "connection refused") != NULL);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ECONNECT);
	CHECK_INT(r.error, ECONNREFUSED);
	CHECK_RC(hev2_release(c), HEV2_OK);

	/* a timeout: the handle goes on with hev2_wait, nothing lost */
	struct blackhole bh;
	CHECK(blackhole_start(&bh, AF_INET) == 0);
	snprintf(p, sizeof p, "%d", bh.port);
	hev2_options o = dopts;
	o.connect_timeout_ms = 500; /* far beyond the call's 20 ms, also on a loaded machine */
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, &o, 20, &c, &fd), HEV2_EAGAIN);
	CHECK(c != 0);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_ETIMEOUT);
	CHECK_RC(hev2_release(c), HEV2_OK);

	/* a cancel from another thread, given the id the call published */
	volatile hev2_conn shared = 0;
	struct cancel_when_published w = {.out = &shared, .ms = 20};
	pthread_t t;
	pthread_create(&t, NULL, cancel_published, &w);
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -1, (hev2_conn *)&shared, &fd), HEV2_ECANCELED);
	pthread_join(t, NULL);
	CHECK(shared != 0);
	CHECK_INT(fd, -1);
	CHECK_RC(hev2_release(shared), HEV2_OK);
	blackhole_stop(&bh);

	/* refused calls start nothing */
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -2, &c, &fd), HEV2_EINVAL);
	CHECK_INT(c, 0);
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -1, &c, NULL), HEV2_EINVAL);
	CHECK_RC(hev2_connect_wait("127.0.0.1", p, opts, -1, NULL, &fd), HEV2_EINVAL);
	CHECK_RC(hev2_connect_wait(NULL, p, opts, -1, &c, &fd), HEV2_EHOST);
	char longhost[301];
	memset(longhost, 'a', 300);
	longhost[300] = 0;
	CHECK_RC(hev2_connect_wait(longhost, p, opts, -1, &c, &fd), HEV2_EHOST);
	CHECK_INT(c, 0);
	CHECK_INT(fd, -1);
	CHECK_RC(hev2_stats(&st1), HEV2_OK);
	CHECK_INT(st1.handles_live, st0.handles_live);
	CHECK_INT(st1.handles_running, st0.handles_running);
	CHECK_FDS(before);
}

/* Several threads at once, each one-call connect checked against the
 * listener it asked for: a decided race's memory is reused by the next
 * connect, and must never carry one connect's socket into another's. */
struct many_args {
	int ports[2];
	int bad;
};

/* One connect three ways in turn: hev2_connect_wait, and hev2_connect +
 * hev2_wait + hev2_result + hev2_release with either drive (a released
 * handle's race memory is reused too). */
static void *many_connect_wait(void *arg)
{
	struct many_args *a = arg;
	hev2_options waiter, library;
	waiter_options(&waiter);
	hev2_options_init(&library);
	for (int i = 0; i < 300; i++) {
		char p[16];
		int want = a->ports[i % 2];
		snprintf(p, sizeof p, "%d", want);
		hev2_conn c;
		int fd = -1;
		if (i % 3 == 0) {
			if (hev2_connect_wait("127.0.0.1", p, &waiter, -1, &c, &fd) != HEV2_OK || c != 0) {
				__atomic_add_fetch(&a->bad, 1, __ATOMIC_RELAXED);
				hev2_release(c);
				continue;
			}
		} else {
			hev2_result_info r = {.size = sizeof r};
			if (hev2_connect("127.0.0.1", p, i % 3 == 1 ? &waiter : &library, &c) != HEV2_OK ||
			    hev2_wait(c, -1) != HEV2_OK || hev2_result(c, &r) != HEV2_OK || r.status != HEV2_OK) {
				__atomic_add_fetch(&a->bad, 1, __ATOMIC_RELAXED);
				hev2_release(c);
				continue;
			}
			fd = r.fd;
			hev2_release(c);
		}
		if (peer_port(fd) != want)
			__atomic_add_fetch(&a->bad, 1, __ATOMIC_RELAXED);
		close(fd);
	}
	return NULL;
}

static void test_connect_wait_many_threads(int port_a, int port_b)
{
	int before = count_fds();
	struct many_args a = {.ports = {port_a, port_b}};
	pthread_t t[6];
	for (int i = 0; i < 6; i++)
		pthread_create(&t[i], NULL, many_connect_wait, &a);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(a.bad, 0);
	CHECK_FDS(before);
}

int main(void)
{
	struct server s;
	if (server_start(&s, AF_INET) != 0) {
		perror("server");
		return 1;
	}
	CHECK_RC(hev2_init(), HEV2_OK);
	/* Every connect here starts from RFC 8305's defaults, however often a
	 * name is reused: the history is test_history.c's. */
	CHECK_RC(hev2_set_history(0), HEV2_OK);
	warm_up(s.port);
	test_connect(s.port);
	test_zero_timeout_makes_progress(s.port);
	test_refused();
	test_fallback_in_slices();
	test_cancel_and_release_from_another_thread();
	test_callback_not_on_waiter(s.port);
	test_jobs_by_deciding_thread(s.port);
	test_several_waiters();
	test_bad_values(s.port);
	test_outcome_before_io();
	test_connect_wait(s.port);
	struct server s2;
	CHECK(server_start(&s2, AF_INET) == 0);
	test_connect_wait_many_threads(s.port, s2.port);
	server_stop(&s2);
	CHECK(wait_idle(10000));
	hev2_stats_info st = {.size = sizeof st};
	CHECK_RC(hev2_stats(&st), HEV2_OK);
	CHECK_INT(st.handles_live, 0);
	server_stop(&s);
	return check_done("test_driven");
}
