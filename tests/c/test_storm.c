/* Cancel storm: eight threads make thousands of connections (accepted,
 * silently dropped, refused), half of them driven by their waiter, half by
 * the library, with a callback and often a postponed job, and cancel, wait
 * on, take or release each at a random moment; a reaper thread releases
 * handles other threads still use, racing their own release. After every
 * release the thread opens a pipe, which may well get an fd number the
 * library just gave up: the library must never close it or write to it.
 * Afterwards: no crash, every handle's callback fired exactly once, every
 * job trigger counted, every release succeeded exactly once, every
 * sentinel pipe intact and empty, and no fd or handle is left.
 * HEV2_STORM_PER_THREAD sets the connections per thread (default 1000;
 * 12500 makes the 100,000 of a long run). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

enum { THREADS = 8, SENTINELS = 32 };

static int per_thread = 1000;
static uint64_t max_id;
static struct server srv;
static struct blackhole bh;
static char ports[3][16];
static atomic_int *cb_count;   /* [max_id] */
static atomic_int *release_ok; /* [max_id] */
static hev2_job job;
static atomic_int jobs_asked;
static atomic_int sentinel_bad;
static atomic_uint_fast64_t shared_slot[THREADS];
static atomic_int stop_reaper;
static atomic_int bad_rc;

static void on_done(hev2_conn c, int status, void *data)
{
	(void)status, (void)data;
	if (c < max_id)
		atomic_fetch_add(&cb_count[c], 1);
}

static void job_fn(void *data) { (void)data; }

/* sentinel: a pipe opened right after a release (likely on a number the
 * library just closed). It must stay open and nothing may arrive in it. */
struct sentinel {
	int fds[2];
};

static void check_sentinel(struct sentinel *p)
{
	if (p->fds[0] < 0)
		return;
	char b;
	if (fcntl(p->fds[0], F_GETFD) < 0 || fcntl(p->fds[1], F_GETFD) < 0 || read(p->fds[0], &b, 1) != -1 ||
	    errno != EAGAIN)
		atomic_fetch_add(&sentinel_bad, 1);
	close(p->fds[0]);
	close(p->fds[1]);
	p->fds[0] = p->fds[1] = -1;
}

static void release_counted(hev2_conn c)
{
	int rc = hev2_release(c);
	if (rc == HEV2_OK && c < max_id)
		atomic_fetch_add(&release_ok[c], 1);
	else if (rc != HEV2_OK && rc != HEV2_EHANDLE)
		atomic_fetch_add(&bad_rc, 1);
}

static void *reaper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_reaper)) {
		for (int i = 0; i < THREADS; i++) {
			hev2_conn c = atomic_load(&shared_slot[i]);
			if (c)
				release_counted(c);
		}
		sched_yield();
	}
	return NULL;
}

static void *stormer(void *arg)
{
	int me = (int)(long)arg;
	unsigned seed = 1234u + (unsigned)me;
	hev2_options o;
	hev2_options_init(&o);
	o.on_done = on_done;
	struct sentinel sent[SENTINELS];
	for (int i = 0; i < SENTINELS; i++)
		sent[i].fds[0] = sent[i].fds[1] = -1;
	for (int i = 0; i < per_thread; i++) {
		int target = rand_r(&seed) % 3; /* accepted, dropped, refused */
		o.record_events = rand_r(&seed) % 2;
		o.drive = rand_r(&seed) % 2 ? HEV2_DRIVE_WAITER : HEV2_DRIVE_LIBRARY;
		o.job = rand_r(&seed) % 2 ? job : 0;
		hev2_conn c;
		int rc = hev2_connect("127.0.0.1", ports[target], &o, &c);
		if (rc != HEV2_OK) {
			atomic_fetch_add(&bad_rc, 1);
			continue;
		}
		if (o.job)
			atomic_fetch_add(&jobs_asked, 1);
		int action = rand_r(&seed) % 6;
		if (action >= 2)
			usleep(rand_r(&seed) % 500);
		switch (action) {
		case 0: /* release at once, maybe mid-race */
			release_counted(c);
			break;
		case 1: /* cancel at once */
			hev2_cancel(c);
			release_counted(c);
			break;
		case 2: { /* cancel later, then take whatever came out */
			hev2_cancel(c);
			if (hev2_wait(c, -1) != HEV2_OK)
				atomic_fetch_add(&bad_rc, 1);
			hev2_result_info r = {.size = sizeof r};
			/* canceled, or done before the cancel: won or refused */
			if (hev2_result(c, &r) != HEV2_OK ||
			    (r.status != HEV2_ECANCELED && r.status != HEV2_OK && r.status != HEV2_ECONNECT))
				atomic_fetch_add(&bad_rc, 1);
			if (r.fd >= 0)
				close(r.fd);
			release_counted(c);
			break;
		}
		case 3: /* wait a little, release whatever the state */
			hev2_wait(c, rand_r(&seed) % 3);
			release_counted(c);
			break;
		case 4: { /* poll the handle's fd, cancel, poll again */
			struct pollfd p = {.fd = hev2_fd(c), .events = POLLIN};
			if (p.fd < 0) {
				atomic_fetch_add(&bad_rc, 1);
				break;
			}
			poll(&p, 1, rand_r(&seed) % 2);
			hev2_cancel(c);
			if (poll(&p, 1, 5000) != 1)
				atomic_fetch_add(&bad_rc, 1);
			release_counted(c);
			break;
		}
		case 5: /* race the reaper: both release, exactly one wins */
			atomic_store(&shared_slot[me], c);
			usleep(rand_r(&seed) % 200);
			release_counted(c);
			break;
		}
		struct sentinel *p = &sent[i % SENTINELS];
		check_sentinel(p);
		if (pipe2(p->fds, O_CLOEXEC | O_NONBLOCK) < 0)
			p->fds[0] = p->fds[1] = -1;
	}
	usleep(100000); /* whatever the library still does after release */
	for (int i = 0; i < SENTINELS; i++)
		check_sentinel(&sent[i]);
	return NULL;
}

/* Each thread that waits on a waiter-driven handle holds one of the
 * library's wake eventfds while it waits, made once and kept for the
 * process (hev2.h, "Driven by the waiter"): make the storm's eight before
 * counting fds. */
static _Atomic hev2_conn waiting[THREADS];

/* count_eventfds counts this process's eventfds (the wake fds among
 * them; the Go runtime's passing fds are files, the handles' sockets). */
static int count_eventfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[300];
	int n = 0;
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof link - 1);
		link[len < 0 ? 0 : len] = 0;
		n += strcmp(link, "anon_inode:[eventfd]") == 0;
	}
	if (d)
		closedir(d);
	return n;
}

static void *hold_a_wake_fd(void *arg)
{
	_Atomic hev2_conn *slot = arg;
	hev2_options o;
	hev2_options_init(&o);
	o.drive = HEV2_DRIVE_WAITER;
	hev2_conn c;
	if (hev2_connect("127.0.0.1", ports[1], &o, &c) == HEV2_OK) {
		atomic_store(slot, c);
		hev2_wait(c, 10000); /* until make_wake_fds cancels it */
	}
	return NULL;
}

static void make_wake_fds(void)
{
	/* All eight inside hev2_wait at once: not for a fixed time (a loaded
	 * machine may start a thread after another's wait is over), but until
	 * the eight wake fds exist. Until now at most one thread waited at a
	 * time (warm_up), so the library holds the one hev2_init made. */
	int want = count_eventfds() + THREADS - 1;
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, hold_a_wake_fd, &waiting[i]);
	double end = now_ms() + 10000;
	while (count_eventfds() < want && now_ms() < end)
		usleep(1000);
	CHECK(count_eventfds() >= want);
	for (int i = 0; i < THREADS; i++) {
		while (atomic_load(&waiting[i]) == 0 && now_ms() < end)
			usleep(1000);
		hev2_cancel(atomic_load(&waiting[i]));
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		hev2_release(atomic_load(&waiting[i]));
	}
}

int main(void)
{
	const char *n = getenv("HEV2_STORM_PER_THREAD");
	if (n && atoi(n) > 0)
		per_thread = atoi(n);
	max_id = (uint64_t)THREADS * per_thread + 4096;
	cb_count = calloc(max_id, sizeof *cb_count);
	release_ok = calloc(max_id, sizeof *release_ok);
	if (!cb_count || !release_ok || hev2_job_register(job_fn, NULL, HEV2_JOB_DIRECT, &job) != HEV2_OK)
		return 1;
	/* Every connection's socket stays open until it is released. */
	hev2_set_max_handles(THREADS * per_thread + 100);
	if (server_start(&srv, AF_INET) < 0 || blackhole_start(&bh, AF_INET) < 0)
		return 1;
	snprintf(ports[0], 16, "%d", srv.port);
	snprintf(ports[1], 16, "%d", bh.port);
	int refusing; /* held until exit: the port stays refused, and ours */
	snprintf(ports[2], 16, "%d", refused_port(&refusing));
	warm_up(srv.port);
	make_wake_fds();
	hev2_stats_info s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
	hev2_stats(&s0);
	int fds = count_fds(), threads = count_threads();
	double t0 = now_ms();

	pthread_t t[THREADS], r;
	pthread_create(&r, NULL, reaper, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, stormer, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop_reaper, 1);
	pthread_join(r, NULL);

	CHECK(wait_idle(10000));
	usleep(100000);
	hev2_stats(&s1);
	uint64_t made = s1.handles_created - s0.handles_created;
	printf("storm: %llu handles in %.0f ms from %d threads; threads %d -> %d\n",
	       (unsigned long long)made, now_ms() - t0, THREADS, threads, count_threads());
	CHECK_INT(made, (uint64_t)THREADS * per_thread);
	CHECK_INT(atomic_load(&bad_rc), 0);
	CHECK_INT(s1.handles_live, s0.handles_live);
	CHECK_INT(s1.handles_running, 0);
	CHECK_INT(s1.callbacks_fired - s0.callbacks_fired, made);
	int once = 1, released_once = 1;
	CHECK_INT(s1.jobs_triggered - s0.jobs_triggered, atomic_load(&jobs_asked)); /* every job trigger, once */
	CHECK_INT(atomic_load(&sentinel_bad), 0); /* no fd of the host closed or written to */
	for (uint64_t id = s0.handles_created + 1; id <= s1.handles_created && id < max_id; id++) {
		once &= atomic_load(&cb_count[id]) == 1;
		released_once &= atomic_load(&release_ok[id]) == 1;
	}
	CHECK(once);          /* every callback exactly once */
	CHECK(released_once); /* every handle released exactly once */
	CHECK_FDS(fds);
	CHECK(count_threads() < threads + 64); /* gross bound: no thread per handle */
	blackhole_stop(&bh);
	return check_done("test_storm");
}
