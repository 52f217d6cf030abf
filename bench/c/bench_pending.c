/* Many pending handles: what each costs while it waits, and what cancel +
 * release cost. N handles (default 10,000) connect to a loopback listener
 * that drops SYNs, so each stays pending; completion is a callback, or a
 * postponed job (no hev2_fd: that would add an eventfd per handle).
 * Printed: the process's RSS and threads before and with every handle
 * pending, per handle; then the CPU time of hev2_cancel + hev2_release per
 * handle (callbacks or job triggers included), for both drives, also as a
 * multiple of plain C's close of as many connecting sockets, measured first
 * in the same process (the machine's speed moves both alike).
 *
 *   bench_pending [N [library|waiter [callback|job]]] */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hev2.h"
#include "util.h"

static atomic_int fired;

static void on_done(hev2_conn c, int status, void *data)
{
	(void)c;
	(void)status;
	(void)data;
	atomic_fetch_add(&fired, 1);
}

/* Completion by job: a job that is not HEV2_JOB_DIRECT, run here at the
 * end; its triggers coalesce, so completion is counted by the library's
 * running handles instead. */
static hev2_job done_job;
static atomic_int job_runs;
static void on_done_job(void *data)
{
	(void)data;
	atomic_fetch_add(&job_runs, 1);
}

static unsigned long long handles_running(void)
{
	hev2_stats_info st = {.size = sizeof st};
	hev2_stats(&st);
	return (unsigned long long)st.handles_running;
}

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The CPU time of one close of a connecting socket in this process (see
 * plain), which every cancel+release figure is also given against: this
 * machine's speed moves both alike from run to run. */
static double plain_close_us;

static void run(const char *name, int drive, int by_job, int n, const char *port)
{
	hev2_conn *cs = calloc((size_t)n, sizeof *cs);
	hev2_options o;
	hev2_options_init(&o);
	if (by_job)
		o.job = done_job;
	else
		o.on_done = on_done;
	o.drive = drive;
	atomic_store(&fired, 0);
	atomic_store(&job_runs, 0);
	long rss0 = rss_kib();
	int threads0 = count_threads();
	for (int i = 0; i < n; i++) {
		if (hev2_connect("127.0.0.1", port, &o, &cs[i]) != HEV2_OK) {
			fprintf(stderr, "connect %d: %s\n", i, hev2_last_error());
			exit(1);
		}
	}
	usleep(200 * 1000); /* let every SYN leave and every handle settle */
	long rss1 = rss_kib();
	int threads1 = count_threads();
	unsigned long long pending = handles_running();
	double t0 = cpu_us();
	for (int i = 0; i < n; i++) {
		hev2_cancel(cs[i]);
		hev2_release(cs[i]);
	}
	while (by_job ? handles_running() > 0 : atomic_load(&fired) < n)
		usleep(1000);
	double t1 = cpu_us();
	if (by_job && (hev2_run_jobs() != 1 || atomic_load(&job_runs) != 1)) {
		fprintf(stderr, "bench_pending: the completion job did not run once\n");
		exit(1);
	}
	printf("  %-18s %6d pending: RSS %+7ld KiB (%5.2f KiB each), threads %d -> %d, running %llu; "
	       "cancel+release %5.1f us CPU each (%.2fx plain C's close)\n",
	       name, n, rss1 - rss0, (double)(rss1 - rss0) / n, threads0, threads1, pending, (t1 - t0) / n,
	       (t1 - t0) / n / plain_close_us);
	free(cs);
}

/* The floor: plain C opening n connecting sockets, then closing them. */
static void plain(int n, int port, int print)
{
	int *fds = calloc((size_t)n, sizeof *fds);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		connect(fds[i], (struct sockaddr *)&to, sizeof to);
	}
	usleep(200 * 1000);
	double t0 = cpu_us();
	for (int i = 0; i < n; i++)
		close(fds[i]);
	double t1 = cpu_us();
	plain_close_us = (t1 - t0) / n;
	if (print)
		printf("  %-18s %6d pending: close %5.1f us CPU each (the kernel's part of any cancel)\n", "plain C", n,
		       plain_close_us);
	free(fds);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if ((rlim_t)n + 100 > rl.rlim_cur) {
		fprintf(stderr, "bench_pending: %d handles need more fds than RLIMIT_NOFILE %llu\n", n,
		        (unsigned long long)rl.rlim_cur);
		return 1;
	}
	hev2_set_max_handles(n + 10);
	struct blackhole bh;
	if (blackhole_start(&bh, AF_INET) != 0) {
		perror("blackhole");
		return 1;
	}
	char port[16];
	snprintf(port, sizeof port, "%d", bh.port);
	hev2_init();
	/* One drive per process (the second argument): a drive measured after
	 * the other would reuse the heap the first freed, and its RSS would
	 * not grow. */
	const char *only = argc > 2 ? argv[2] : NULL;
	const char *how = argc > 3 ? argv[3] : "callback";
	int by_job = !strcmp(how, "job");
	if (!by_job && strcmp(how, "callback")) {
		fprintf(stderr, "bench_pending: completion %s is neither callback nor job\n", how);
		return 2;
	}
	if (hev2_job_register(on_done_job, NULL, 0, &done_job) != HEV2_OK) {
		fprintf(stderr, "bench_pending: %s\n", hev2_last_error());
		return 1;
	}
	char name[32];
	/* Plain C's close, measured in every process (printed once). */
	int header = (!only || !strcmp(only, "library")) && !by_job;
	if (header)
		printf("pending handles (a SYN-dropping loopback listener); completion by callback, or by a job "
		       "(not HEV2_JOB_DIRECT)\n");
	plain(n, bh.port, header);
	if (!only || !strcmp(only, "library")) {
		run("warm-up", HEV2_DRIVE_LIBRARY, by_job, 200, port);
		snprintf(name, sizeof name, "library, %s", how);
		run(name, HEV2_DRIVE_LIBRARY, by_job, n, port);
	}
	if (!only || !strcmp(only, "waiter")) {
		if (only)
			run("warm-up", HEV2_DRIVE_WAITER, by_job, 200, port);
		snprintf(name, sizeof name, "waiter, %s", how);
		run(name, HEV2_DRIVE_WAITER, by_job, n, port);
	}
	blackhole_stop(&bh);
	return 0;
}
