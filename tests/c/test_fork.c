/* fork(): in a child, every function that would enter Go answers
 * HEV2_EFORKED at once (never hangs), the pure-C functions keep working,
 * and the parent is unaffected. Children are made by fork(), and by a raw
 * syscall(SYS_fork) and a raw clone(SIGCHLD) that skip the pthread_atfork
 * handlers (only the library's wipe-on-fork page catches those), while the
 * parent is idle and while it is busy in Go on other threads.
 *
 * The whole run is repeated once in a copy of this program started under a
 * seccomp filter that refuses madvise(MADV_WIPEONFORK): the library then
 * falls back to its getpid() comparison (see hev2.h's "fork()"), which
 * must catch the same children. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

enum how { LIBC_FORK, RAW_FORK, RAW_CLONE };
static const char *how_name[] = {"fork()", "syscall(SYS_fork)", "syscall(SYS_clone, SIGCHLD)"};

/* make_child: fork() runs the atfork handlers; the raw system calls do
 * not, and glibc does not know the child exists (its own pid caches and
 * locks are as the parent's calling thread left them). */
static pid_t make_child(enum how how)
{
	switch (how) {
	case LIBC_FORK:
		return fork();
	case RAW_FORK:
#ifdef SYS_fork
		return (pid_t)syscall(SYS_fork);
#else
		__attribute__((fallthrough)); /* no fork syscall: clone */
#endif
	case RAW_CLONE:
		/* clone(flags, stack, parent_tid, child_tid, tls): a fork by
		 * another name (no CLONE_VM: the child has its own memory). */
		return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
	}
	return -1;
}

/* wait_child waits up to ms for pid; a child still running then has hung:
 * killed, counted bad (-2). Otherwise its exit status, -3 if it died. */
static int wait_child(pid_t pid, double ms, const char *what)
{
	double end = now_ms() + ms;
	int status;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -4;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "%s: child hung\n", what);
			return -2;
		}
		usleep(1000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
}

/* run_child makes a child and waits for it: 0 if every check passed in
 * the child, its failure count otherwise. */
static int run_child(enum how how)
{
	pid_t pid = make_child(how);
	if (pid == 0)
		_exit(child_checks());
	if (pid < 0) {
		perror(how_name[how]);
		return -1;
	}
	int rc = wait_child(pid, 5000, how_name[how]);
	if (rc != 0)
		fprintf(stderr, "%s: child answered %d\n", how_name[how], rc);
	return rc;
}

/* parent_connects: the parent still connects, waits and gets its stats. */
static void parent_connects(void)
{
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", port, NULL, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	hev2_result_info r = {.size = sizeof r};
	CHECK_RC(hev2_result(c, &r), HEV2_OK);
	CHECK_RC(r.status, HEV2_OK);
	close(r.fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
	hev2_stats_info s = {.size = sizeof s};
	CHECK_RC(hev2_stats(&s), HEV2_OK);
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

#define NO_WIPEONFORK_ARG "--no-wipeonfork"

/* refuse_wipeonfork installs a seccomp filter under which
 * madvise(..., MADV_WIPEONFORK) fails with EINVAL, as on a kernel older
 * than 4.14; every other system call (other madvise advice included: the
 * Go runtime and ASan use it) is allowed. Kept across execve. */
static int refuse_wipeonfork(void)
{
#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "test_fork: add this architecture's AUDIT_ARCH"
#endif
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "test_fork: the filter reads the advice argument's low word little-endian"
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_WIPEONFORK, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* wipeonfork_works: this process may mark a page MADV_WIPEONFORK. */
static int wipeonfork_works(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	int ok = madvise(p, (size_t)page, MADV_WIPEONFORK) == 0;
	munmap(p, (size_t)page);
	return ok;
}

/* run_fallback runs this program again (argv0 NO_WIPEONFORK_ARG) under
 * refuse_wipeonfork, so that the library loads without its page; its exit
 * status is its failure count. A run still going after 120 s has hung. */
static int run_fallback(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (refuse_wipeonfork() != 0) {
			perror("test_fork: seccomp filter");
			_exit(100);
		}
		char *argv[] = {"test_fork", NO_WIPEONFORK_ARG, NULL};
		execv("/proc/self/exe", argv);
		perror("test_fork: execv /proc/self/exe");
		_exit(101);
	}
	if (pid < 0)
		return -1;
	return wait_child(pid, 120000, "test_fork " NO_WIPEONFORK_ARG);
}

int main(int argc, char **argv)
{
	int fallback = argc > 1 && strcmp(argv[1], NO_WIPEONFORK_ARG) == 0;
	/* Under the filter, the library's madvise failed as this one does:
	 * what follows exercises its getpid() fallback. */
	CHECK_INT(wipeonfork_works(), !fallback);

	if (server_start(&srv, AF_INET) < 0)
		return 1;
	snprintf(port, sizeof port, "%d", srv.port);
	warm_up(srv.port);

	/* idle parent */
	for (int i = 0; i < 10; i++)
		CHECK_INT(run_child(LIBC_FORK), 0);
	parent_connects();
	/* children made without the atfork handlers: only the wipe-on-fork
	 * page (or, in the fallback, the getpid comparison) catches them */
	for (int i = 0; i < 5; i++) {
		CHECK_INT(run_child(RAW_FORK), 0);
		CHECK_INT(run_child(RAW_CLONE), 0);
	}
	parent_connects();

	/* busy parent: two threads inside Go at every fork */
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	while (atomic_load(&busy_rounds) < 20)
		usleep(1000);
	double t0 = now_ms();
	for (int i = 0; i < 20; i++)
		CHECK_INT(run_child(LIBC_FORK), 0);
	for (int i = 0; i < 5; i++) {
		CHECK_INT(run_child(RAW_FORK), 0);
		CHECK_INT(run_child(RAW_CLONE), 0);
	}
	printf("fork%s: 30 children of a busy parent (10 of them raw) answered in %.1f ms total\n",
	       fallback ? " (getpid fallback)" : "", now_ms() - t0);
	atomic_store(&stop_busy, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	/* the parent still works */
	parent_connects();

	/* the same again with the library's getpid() fallback */
	if (!fallback)
		CHECK_INT(run_fallback(), 0);
	return check_done(fallback ? "test_fork " NO_WIPEONFORK_ARG : "test_fork");
}
