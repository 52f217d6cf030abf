/* Soak: many connects through the C ABI, mixed across success, refusal,
 * cancel and timeout, both drives, from four threads; every SAMPLE
 * connects the process's RSS, fds, threads and the library's live and
 * running handles, goroutines and Go heap in use are printed. After the
 * warm-up the curve must be flat: fds, threads, live handles and
 * goroutines back at their baseline when the run ends, the Go heap within
 * 10 % (the exit status says so); RSS is reported.
 *
 *   soak [N]   (default 500000)
 *
 * Destinations are spread over 127.0.0.1-127.0.0.200 (all loopback) so
 * that TIME_WAIT sockets do not pile up on one address and distort it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"
#include "util.h"

enum { THREADS = 4, ADDRS = 200 };

static long total = 500000;
static atomic_long done;
static atomic_long outcomes[4]; /* won, refused, canceled, timed out */
static atomic_long unexpected;
static int accept_port, drop_port, refuse_port;

/* A listener on 0.0.0.0 answers every 127.0.0.x. */
static int listen_any(int port, int backlog)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, backlog) < 0)
		return -1;
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t l = sizeof a;
	getsockname(fd, (struct sockaddr *)&a, &l);
	return ntohs(a.sin_port);
}

static void one(unsigned *seed)
{
	char host[32], port[16];
	snprintf(host, sizeof host, "127.0.0.%d", 1 + rand_r(seed) % ADDRS);
	int kind = rand_r(seed) % 4;
	hev2_options o;
	hev2_options_init(&o);
	o.drive = rand_r(seed) % 2 ? HEV2_DRIVE_WAITER : HEV2_DRIVE_LIBRARY;
	int p = kind == 0 ? accept_port : kind == 1 ? refuse_port : drop_port;
	snprintf(port, sizeof port, "%d", p);
	if (kind == 3)
		o.connect_timeout_ms = 1 + rand_r(seed) % 5;
	hev2_conn c;
	if (hev2_connect(host, port, &o, &c) != HEV2_OK) {
		atomic_fetch_add(&unexpected, 1);
		return;
	}
	if (kind == 2) {
		hev2_wait(c, rand_r(seed) % 2); /* maybe a slice, then a cancel */
		hev2_cancel(c);
	}
	if (hev2_wait(c, 10000) != HEV2_OK) {
		atomic_fetch_add(&unexpected, 1);
		hev2_release(c);
		return;
	}
	hev2_result_info r = {.size = sizeof r};
	hev2_result(c, &r);
	int want = kind == 0 ? HEV2_OK : kind == 1 ? HEV2_ECONNECT : kind == 2 ? HEV2_ECANCELED : HEV2_ETIMEOUT;
	if (r.status == want)
		atomic_fetch_add(&outcomes[kind], 1);
	else
		atomic_fetch_add(&unexpected, 1);
	if (r.fd >= 0)
		close(r.fd);
	hev2_release(c);
}

static void *worker(void *arg)
{
	unsigned seed = 42u + (unsigned)(intptr_t)arg;
	while (atomic_fetch_add(&done, 1) < total)
		one(&seed);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		total = atol(argv[1]);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	int lf = listen_any(0, 4096);
	int df = listen_any(0, 0); /* backlog 0 plus one filler: SYNs dropped */
	int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port_of(df)),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	connect(filler, (struct sockaddr *)&to, sizeof to);
	if (lf < 0 || df < 0)
		return 1;
	accept_port = port_of(lf);
	drop_port = port_of(df);
	int refusing; /* held until exit: the port stays refused, and ours */
	refuse_port = refused_port(&refusing);
	pthread_t acc;
	pthread_create(&acc, NULL, accept_and_close, (void *)(intptr_t)lf);
	hev2_init();

	/* Warm-up: the library's permanent fds and one wake fd per thread. */
	long warm = total / 20 > 1000 ? 1000 : total / 20 < 400 ? 400 : total / 20;
	long saved = total;
	total = warm;
	pthread_t t[THREADS];
	for (intptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	wait_idle(5000);
	usleep(200000);
	total = saved;
	atomic_store(&done, 0);
	hev2_stats_info st = {.size = sizeof st};
	hev2_stats(&st);
	long rss0 = rss_kib();
	int fds0 = count_fds(), th0 = count_threads();
	uint64_t live0 = st.handles_live;
	printf("soak: %ld connects (success, refusal, cancel, timeout; both drives) from %d threads\n", total, THREADS);
	uint64_t g0 = st.go_goroutines, heap0 = st.go_heap_inuse;
	printf("%10s %10s %8s %8s %8s %8s %10s %10s %8s\n", "connects", "RSS KiB", "fds", "threads", "live", "running",
	       "goroutines", "heap KiB", "s");
	printf("%10d %10ld %8d %8d %8llu %8llu %10llu %10llu %8.1f\n", 0, rss0, fds0, th0, (unsigned long long)live0,
	       (unsigned long long)st.handles_running, (unsigned long long)g0, (unsigned long long)heap0 / 1024, 0.0);
	double t0 = now_ms();
	for (intptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	long sample = total / 10 > 0 ? total / 10 : 1, next = sample;
	/* The Go heap is a sawtooth between collections: compare its peaks in
	 * the first and the second half of the run, not two instants. */
	uint64_t heap_peak[2] = {heap0, 0};
	for (;;) {
		long d = atomic_load(&done);
		hev2_stats(&st);
		int half = d * 2 >= total;
		if (st.go_heap_inuse > heap_peak[half])
			heap_peak[half] = st.go_heap_inuse;
		if (d >= next || d >= total) {
			printf("%10ld %10ld %8d %8d %8llu %8llu %10llu %10llu %8.1f\n", d < total ? d : total, rss_kib(),
			       count_fds(), count_threads(), (unsigned long long)st.handles_live,
			       (unsigned long long)st.handles_running, (unsigned long long)st.go_goroutines,
			       (unsigned long long)st.go_heap_inuse / 1024, (now_ms() - t0) / 1000);
			fflush(stdout);
			next += sample;
		}
		if (d >= total)
			break;
		usleep(5000);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	wait_idle(5000);
	usleep(200000);
	hev2_stats(&st);
	long rss1 = rss_kib();
	int fds1 = settled_fd_count(fds0), th1 = count_threads();
	printf("after: RSS %+ld KiB (%ld -> %ld), fds %d -> %d, threads %d -> %d, live handles %llu -> %llu, "
	       "goroutines %llu -> %llu, Go heap in use %llu -> %llu KiB\n",
	       rss1 - rss0, rss0, rss1, fds0, fds1, th0, th1, (unsigned long long)live0,
	       (unsigned long long)st.handles_live, (unsigned long long)g0, (unsigned long long)st.go_goroutines,
	       (unsigned long long)heap0 / 1024, (unsigned long long)st.go_heap_inuse / 1024);
	printf("outcomes: %ld won, %ld refused, %ld canceled, %ld timed out, %ld unexpected\n", outcomes[0], outcomes[1],
	       outcomes[2], outcomes[3], atomic_load(&unexpected));
	/* The heap's peak within 10 % from the first half of the run to the
	 * second (plus 64 KiB for a tiny heap). */
	int heap_flat = heap_peak[1] <= heap_peak[0] + heap_peak[0] / 10 + 64 * 1024;
	printf("Go heap in use, peak: first half %llu KiB, second half %llu KiB\n",
	       (unsigned long long)heap_peak[0] / 1024, (unsigned long long)heap_peak[1] / 1024);
	int flat = fds1 <= fds0 && th1 <= th0 + 2 && st.handles_live == live0 && st.go_goroutines <= g0 && heap_flat &&
	           atomic_load(&unexpected) == 0;
	printf("soak: %s\n", flat ? "flat" : "NOT FLAT");
	return flat ? 0 : 1;
}
