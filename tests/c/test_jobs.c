/* The postponed-job mechanism from several threads: triggers coalesce, no
 * wake-up is ever lost (the last trigger is always followed by a run that
 * sees it), direct jobs run on the triggering thread once per trigger,
 * triggering from a signal handler works, registration from several
 * threads hands out distinct ids, and the table's capacity is an error. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

enum { TRIGGER_THREADS = 4, TRIGGERS = 50000 };

static atomic_long triggers_done; /* incremented before each trigger */
static atomic_long seen_at_last_run;
static atomic_long runs;
static hev2_job job;
static atomic_int triggering;

static void counting_job(void *data)
{
	(void)data;
	atomic_fetch_add(&runs, 1);
	atomic_store(&seen_at_last_run, atomic_load(&triggers_done));
}

static void *trigger_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < TRIGGERS; i++) {
		atomic_fetch_add(&triggers_done, 1);
		if (hev2_job_trigger(job) != HEV2_OK)
			abort();
	}
	atomic_fetch_sub(&triggering, 1);
	return NULL;
}

/* The host's loop: wait on hev2_jobs_fd, run jobs, until triggering is
 * over and the fd stays quiet. */
static void test_postponed_many_threads(void)
{
	CHECK_RC(hev2_job_register(counting_job, NULL, 0, &job), HEV2_OK);
	CHECK(job >= 1 && job <= HEV2_MAX_JOBS);
	int efd = hev2_jobs_fd();
	CHECK(efd >= 0);
	CHECK_INT(hev2_jobs_fd(), efd);
	atomic_store(&triggering, TRIGGER_THREADS);
	pthread_t t[TRIGGER_THREADS];
	for (int i = 0; i < TRIGGER_THREADS; i++)
		pthread_create(&t[i], NULL, trigger_thread, NULL);
	struct pollfd p = {.fd = efd, .events = POLLIN};
	for (;;) {
		int n = poll(&p, 1, atomic_load(&triggering) ? 1000 : 200);
		if (n > 0)
			hev2_run_jobs();
		else if (n == 0 && !atomic_load(&triggering))
			break;
	}
	for (int i = 0; i < TRIGGER_THREADS; i++)
		pthread_join(t[i], NULL);
	long total = (long)TRIGGER_THREADS * TRIGGERS;
	printf("jobs: %ld triggers from %d threads -> %ld runs (coalesced)\n", total, TRIGGER_THREADS,
	       atomic_load(&runs));
	CHECK_INT(atomic_load(&triggers_done), total);
	CHECK_INT(atomic_load(&seen_at_last_run), total); /* no lost wake-up */
	CHECK(atomic_load(&runs) >= 1 && atomic_load(&runs) <= total);
	CHECK_INT(hev2_run_jobs(), 0);
	CHECK_INT(poll(&p, 1, 0), 0);
	hev2_stats_info s = {.size = sizeof s};
	CHECK_RC(hev2_stats(&s), HEV2_OK);
	CHECK(s.jobs_triggered >= (uint64_t)total);
	CHECK(s.jobs_run >= (uint64_t)atomic_load(&runs));
}

/* Two jobs: each runs iff it was triggered. */
static atomic_int a_runs, b_runs;
static void job_a(void *d) { (void)d, atomic_fetch_add(&a_runs, 1); }
static void job_b(void *d) { (void)d, atomic_fetch_add(&b_runs, 1); }

static void test_independent_jobs(void)
{
	hev2_job a, b;
	CHECK_RC(hev2_job_register(job_a, NULL, 0, &a), HEV2_OK);
	CHECK_RC(hev2_job_register(job_b, NULL, 0, &b), HEV2_OK);
	CHECK(a != b);
	hev2_run_jobs();
	CHECK_RC(hev2_job_trigger(a), HEV2_OK);
	CHECK_RC(hev2_job_trigger(a), HEV2_OK);
	CHECK_INT(hev2_run_jobs(), 1);
	CHECK_INT(atomic_load(&a_runs), 1);
	CHECK_INT(atomic_load(&b_runs), 0);
	CHECK_RC(hev2_job_trigger(a), HEV2_OK);
	CHECK_RC(hev2_job_trigger(b), HEV2_OK);
	CHECK_INT(hev2_run_jobs(), 2);
	CHECK_INT(atomic_load(&a_runs), 2);
	CHECK_INT(atomic_load(&b_runs), 1);
}

/* Direct jobs run on the triggering thread, once per trigger. */
static atomic_long direct_runs, direct_wrong_thread;
static __thread int i_am_triggering;
static void direct_job(void *data)
{
	atomic_fetch_add(&direct_runs, 1);
	if (!i_am_triggering || data != (void *)1)
		atomic_fetch_add(&direct_wrong_thread, 1);
}
static hev2_job direct;
static void *direct_thread(void *arg)
{
	(void)arg;
	i_am_triggering = 1;
	for (int i = 0; i < 10000; i++)
		hev2_job_trigger(direct);
	return NULL;
}

static void test_direct(void)
{
	CHECK_RC(hev2_job_register(direct_job, (void *)1, HEV2_JOB_DIRECT, &direct), HEV2_OK);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, direct_thread, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(atomic_load(&direct_runs), 30000);
	CHECK_INT(atomic_load(&direct_wrong_thread), 0);
	CHECK_INT(hev2_run_jobs(), 0); /* nothing queued */
}

/* Triggered from a signal handler (an interval timer), run at the loop. */
static hev2_job sig_job;
static atomic_int sig_runs, sig_handled;
static void sig_job_fn(void *d) { (void)d, atomic_fetch_add(&sig_runs, 1); }
static void on_alarm(int sig)
{
	(void)sig;
	hev2_job_trigger(sig_job);
	atomic_fetch_add(&sig_handled, 1);
}

static void test_from_signal_handler(void)
{
	CHECK_RC(hev2_job_register(sig_job_fn, NULL, 0, &sig_job), HEV2_OK);
	struct sigaction sa = {.sa_handler = on_alarm};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	struct pollfd p = {.fd = hev2_jobs_fd(), .events = POLLIN};
	/* 300 ms, and on until more than ten signals came (a loaded machine
	 * runs this process seldom, and pending SIGALRMs merge), 10 s at most */
	double start = now_ms();
	while (now_ms() < start + 300 || (atomic_load(&sig_handled) <= 10 && now_ms() < start + 10000))
		if (poll(&p, 1, 50) > 0)
			hev2_run_jobs();
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	while (poll(&p, 1, 50) > 0)
		hev2_run_jobs();
	printf("jobs: %d SIGALRM triggers -> %d runs\n", atomic_load(&sig_handled), atomic_load(&sig_runs));
	CHECK(atomic_load(&sig_handled) > 10);
	CHECK(atomic_load(&sig_runs) >= 1);
	CHECK(atomic_load(&sig_runs) <= atomic_load(&sig_handled));
}

/* Registration races: distinct ids; then the table fills up. */
static void nop(void *d) { (void)d; }
static hev2_job reg_ids[8][64];
static int reg_rcs[8][64];
static void *register_thread(void *arg)
{
	long me = (long)arg;
	for (int i = 0; i < 64; i++)
		reg_rcs[me][i] = hev2_job_register(nop, NULL, 0, &reg_ids[me][i]);
	return NULL;
}

static void test_registration(void)
{
	hev2_stats_info s = {.size = sizeof s};
	hev2_stats(&s);
	int free_slots = HEV2_MAX_JOBS - (int)s.jobs_registered;
	pthread_t t[8];
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, register_thread, (void *)i);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	static char used[HEV2_MAX_JOBS + 1];
	int ok = 0, full = 0, dup = 0;
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 64; k++) {
			if (reg_rcs[i][k] == HEV2_OK) {
				ok++;
				dup += used[reg_ids[i][k]]++ != 0;
			} else if (reg_rcs[i][k] == HEV2_ECAPACITY && reg_ids[i][k] == 0) {
				full++;
			}
		}
	CHECK_INT(ok, free_slots);
	CHECK_INT(full, 8 * 64 - free_slots);
	CHECK_INT(dup, 0);
	hev2_job j;
	CHECK_RC(hev2_job_register(nop, NULL, 0, &j), HEV2_ECAPACITY);
	/* the jobs registered before still work */
	CHECK_RC(hev2_job_trigger(job), HEV2_OK);
	CHECK(hev2_run_jobs() >= 1);
}

int main(void)
{
	test_postponed_many_threads();
	test_independent_jobs();
	test_direct();
	test_from_signal_handler();
	test_registration();
	return check_done("test_jobs");
}
