/* fork(): in a child, every function that would enter Go answers
 * HEV2_EFORKED at once (never hangs), the pure-C functions keep working,
 * and the parent is unaffected. Children are forked while the parent is
 * idle, while it is busy in Go on other threads, and with a raw
 * syscall(SYS_fork) that skips the pthread_atfork handlers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static struct server srv;
static char port[16];

static int child_job_runs;
static void child_job(void *d) { (void)d, child_job_runs++; }

/* child_checks runs in the child; its exit status counts the failures. */
static int child_checks(void)
{
	int bad = 0;
	hev2_conn c = 7;
	hev2_result_info r = {.size = sizeof r};
	hev2_attempt_info a = {.size = sizeof a};
	hev2_event_info e = {.size = sizeof e};
	hev2_stats_info s = {.size = sizeof s};
	bad += hev2_connect("127.0.0.1", port, NULL, &c) != HEV2_EFORKED || c != 0;
	bad += hev2_connect_len("127.0.0.1", 9, port, NULL, &c) != HEV2_EFORKED;
	bad += hev2_init() != HEV2_EFORKED;
	bad += hev2_wait(1, -1) != HEV2_EFORKED;
	bad += hev2_fd(1) != HEV2_EFORKED;
	bad += hev2_cancel(1) != HEV2_EFORKED;
	bad += hev2_release(1) != HEV2_EFORKED;
	bad += hev2_result(1, &r) != HEV2_EFORKED;
	bad += hev2_get_attempt(1, 0, &a) != HEV2_EFORKED;
	bad += hev2_get_event(1, 0, &e) != HEV2_EFORKED;
	bad += hev2_stats(&s) != HEV2_EFORKED;
	bad += hev2_set_max_handles(10) != HEV2_EFORKED;
	/* The last error says so too, set in C (Go is never entered). */
	bad += strncmp(hev2_last_error(), "hev2_set_max_handles: called in a fork() child",
	               strlen("hev2_set_max_handles: called in a fork() child")) != 0;
	bad += hev2_last_errno() != 0;
	bad += strcmp(hev2_errmsg(1), hev2_strerror(HEV2_EFORKED)) != 0;
	/* pure C keeps working */
	hev2_options o;
	bad += hev2_options_init(&o) != HEV2_OK;
	bad += hev2_version() != HEV2_VERSION_NUM;
	bad += strcmp(hev2_event_name(HEV2_EV_DONE), "done") != 0;
	/* and so do the jobs, which never enter Go */
	hev2_job j;
	bad += hev2_job_register(child_job, NULL, 0, &j) != HEV2_OK;
	bad += hev2_job_trigger(j) != HEV2_OK;
	bad += hev2_run_jobs() != 1 || child_job_runs != 1;
	return bad;
}

/* run_child forks (raw: without the atfork handlers) and waits for the
 * child; a child still running after 5 s has hung: killed, counted bad. */
static int run_child(int raw)
{
	pid_t pid = raw ? (pid_t)syscall(SYS_fork) : fork();
	if (pid == 0)
		_exit(child_checks());
	if (pid < 0)
		return -1;
	double end = now_ms() + 5000;
	int status;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "fork child hung\n");
			return -2;
		}
		usleep(1000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
}

static atomic_int stop_busy;
static atomic_int busy_rounds;

/* busy keeps the parent inside Go (connect, wait, release) on a thread. */
static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_busy)) {
		hev2_conn c;
		if (hev2_connect("127.0.0.1", port, NULL, &c) == HEV2_OK) {
			hev2_wait(c, 1000);
			hev2_release(c);
		}
		atomic_fetch_add(&busy_rounds, 1);
	}
	return NULL;
}

int main(void)
{
	if (server_start(&srv, AF_INET) < 0)
		return 1;
	snprintf(port, sizeof port, "%d", srv.port);
	warm_up(srv.port);

	/* idle parent */
	for (int i = 0; i < 10; i++)
		CHECK_INT(run_child(0), 0);
	/* a child made without the atfork handlers: the getpid check */
	for (int i = 0; i < 5; i++)
		CHECK_INT(run_child(1), 0);

	/* busy parent: two threads inside Go at every fork */
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	while (atomic_load(&busy_rounds) < 20)
		usleep(1000);
	double t0 = now_ms();
	for (int i = 0; i < 20; i++)
		CHECK_INT(run_child(0), 0);
	printf("fork: 20 children of a busy parent answered in %.1f ms total\n", now_ms() - t0);
	atomic_store(&stop_busy, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	/* the parent still works */
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", port, NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	close(r.fd);
	hev2_release(c);
	return check_done("test_fork");
}
