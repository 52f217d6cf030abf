/* Cancel storm: several threads make thousands of connections (accepted,
 * silently dropped, refused) and cancel, wait on, take or release each at
 * a random moment; a reaper thread releases handles other threads still
 * use, racing their own release. Afterwards: no crash, every handle's
 * callback fired exactly once, every release succeeded exactly once, and
 * no fd or handle is left. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

enum { THREADS = 4, PER_THREAD = 1000, MAX_ID = 1 << 16 };

static struct server srv;
static struct blackhole bh;
static char ports[3][16];
static atomic_int cb_count[MAX_ID];
static atomic_int release_ok[MAX_ID];
static atomic_uint_fast64_t shared_slot[THREADS];
static atomic_int stop_reaper;
static atomic_int bad_rc;

static void on_done(hev2_conn c, int status, void *data)
{
	(void)status, (void)data;
	if (c < MAX_ID)
		atomic_fetch_add(&cb_count[c], 1);
}

static void release_counted(hev2_conn c)
{
	int rc = hev2_release(c);
	if (rc == HEV2_OK)
		atomic_fetch_add(&release_ok[c], 1);
	else if (rc != HEV2_EHANDLE)
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
	for (int i = 0; i < PER_THREAD; i++) {
		int target = rand_r(&seed) % 3; /* accepted, dropped, refused */
		o.record_events = rand_r(&seed) % 2;
		hev2_conn c;
		int rc = hev2_connect("127.0.0.1", ports[target], &o, &c);
		if (rc != HEV2_OK) {
			atomic_fetch_add(&bad_rc, 1);
			continue;
		}
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
	}
	return NULL;
}

int main(void)
{
	if (server_start(&srv, AF_INET) < 0 || blackhole_start(&bh, AF_INET, 0) < 0)
		return 1;
	snprintf(ports[0], 16, "%d", srv.port);
	snprintf(ports[1], 16, "%d", bh.port);
	snprintf(ports[2], 16, "%d", refused_port());
	warm_up(srv.port);
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
	CHECK_INT(made, THREADS * PER_THREAD);
	CHECK_INT(atomic_load(&bad_rc), 0);
	CHECK_INT(s1.handles_live, s0.handles_live);
	CHECK_INT(s1.handles_running, 0);
	CHECK_INT(s1.callbacks_fired - s0.callbacks_fired, made);
	int once = 1, released_once = 1;
	for (uint64_t id = s0.handles_created + 1; id <= s1.handles_created && id < MAX_ID; id++) {
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
