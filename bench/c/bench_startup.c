/* What a process's first calls into libhev2 cost, in fresh processes:
 *
 *   startup  dlopen + hev2_init() beside dlopen + the one no-op function of
 *            an empty Go c-shared library built with the same flags
 *            (bench/emptylib): the difference is hev2's own part of the
 *            first call, above the Go runtime's start that any Go library
 *            pays (goal <= 1 ms);
 *   connect  the first hev2_connect_wait to 127.0.0.1 (after dlopen and
 *            hev2_init) beside a plain C socket + connect, the first of
 *            its process too;
 *   memory   VmRSS and VmHWM (/proc/self/status) of those two processes
 *            once connected.
 *
 *   bench_startup EMPTY_LIB LIBHEV2 [ROUNDS]     (ROUNDS: 30 by default)
 *
 * Each round spawns this program five times (posix_spawn, one child at a
 * time): empty and init in alternating order, plain and connect likewise,
 * then split, which makes libhev2's first call in parts (dlopen, a first
 * call into Go that does nothing of hev2's: hev2_set_max_handles(its
 * default), then hev2_init) to show where the time goes. Every child takes
 * its times itself with CLOCK_MONOTONIC, from just before its dlopen (plain:
 * its socket()) to the return of the call: exec and the start of this
 * program, the same for every kind, are left out. The rows are medians of
 * the per-round differences, with their spread. The listener is the
 * parent's, never accepted from while a child runs (the handshake needs no
 * accept; the queue is emptied between rounds). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hev2.h"
#include "row.h"

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_startup: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

/* VmRSS and VmHWM of /proc/self/status in KiB, read in one pass. */
static void memory_kib(long *rss, long *hwm)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	*rss = *hwm = -1;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "VmRSS: %ld", rss) == 1 && *hwm >= 0)
			break;
		sscanf(line, "VmHWM: %ld", hwm);
	}
	if (f)
		fclose(f);
}

static void *open_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "bench_startup: %s\n", dlerror());
		exit(1);
	}
	return h;
}

static void *sym(void *h, const char *name)
{
	void *f = dlsym(h, name);
	if (!f) {
		fprintf(stderr, "bench_startup: no %s: %s\n", name, dlerror());
		exit(1);
	}
	return f;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	return to;
}

/* ---- the children: each prints one line of numbers ---------------------- */

/* empty LIB: ms to dlopen, ms to the no-op's return. */
static int child_empty(const char *lib)
{
	double t0 = now_ms();
	void *h = open_lib(lib);
	double t1 = now_ms();
	void (*noop)(void) = (void (*)(void))sym(h, "hev2bench_noop");
	noop();
	double t2 = now_ms();
	printf("%.4f %.4f\n", t1 - t0, t2 - t0);
	return 0;
}

/* init LIB: ms to dlopen, ms to hev2_init's return. */
static int child_init(const char *lib)
{
	double t0 = now_ms();
	void *h = open_lib(lib);
	double t1 = now_ms();
	int (*init)(void) = (int (*)(void))sym(h, "hev2_init");
	if (init() != HEV2_OK)
		die("hev2_init");
	double t2 = now_ms();
	printf("%.4f %.4f\n", t1 - t0, t2 - t0);
	return 0;
}

/* split LIB: ms to dlopen, to a first call into Go that does nothing of
 * hev2's (the runtime's start and the packages' initialisation), to
 * hev2_init's return. */
static int child_split(const char *lib)
{
	double t0 = now_ms();
	void *h = open_lib(lib);
	double t1 = now_ms();
	int (*set_max)(int) = (int (*)(int))sym(h, "hev2_set_max_handles");
	int (*init)(void) = (int (*)(void))sym(h, "hev2_init");
	if (set_max(HEV2_DEFAULT_MAX_HANDLES) != HEV2_OK)
		die("hev2_set_max_handles");
	double t2 = now_ms();
	if (init() != HEV2_OK)
		die("hev2_init");
	double t3 = now_ms();
	printf("%.4f %.4f %.4f\n", t1 - t0, t2 - t0, t3 - t0);
	return 0;
}

/* plain PORT: ms of socket + connect; VmRSS, VmHWM in KiB. */
static int child_plain(int port)
{
	struct sockaddr_in to = loopback(port);
	double t0 = now_ms();
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0)
		die("plain connect");
	double t1 = now_ms();
	close(fd);
	long rss, hwm;
	memory_kib(&rss, &hwm);
	printf("%.4f %ld %ld\n", t1 - t0, rss, hwm);
	return 0;
}

/* connect PORT LIB: ms of the first hev2_connect_wait, ms from before
 * dlopen to its return; VmRSS, VmHWM in KiB. */
static int child_connect(int port, const char *lib)
{
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	double t0 = now_ms();
	void *h = open_lib(lib);
	int (*init)(void) = (int (*)(void))sym(h, "hev2_init");
	int (*connect_wait)(const char *, const char *, const hev2_options *, int, hev2_conn *, int *) =
		(int (*)(const char *, const char *, const hev2_options *, int, hev2_conn *, int *))sym(
			h, "hev2_connect_wait");
	if (init() != HEV2_OK)
		die("hev2_init");
	double t1 = now_ms();
	hev2_conn c;
	int fd;
	if (connect_wait("127.0.0.1", service, NULL, -1, &c, &fd) != HEV2_OK)
		die("hev2_connect_wait");
	double t2 = now_ms();
	close(fd);
	long rss, hwm;
	memory_kib(&rss, &hwm);
	printf("%.4f %.4f %ld %ld\n", t2 - t1, t2 - t0, rss, hwm);
	return 0;
}

/* ---- the parent ------------------------------------------------------------ */

enum { MAX_FIELDS = 4 };

/* run spawns this program with args, reads its one line into out[0..n). */
static void run(char *const args[], double *out, int n)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe");
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	pid_t pid;
	int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		errno = rc;
		die("posix_spawn");
	}
	char buf[256];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf - 1 && (r = read(p[0], buf + got, sizeof buf - 1 - got)) != 0) {
		if (r < 0 && errno != EINTR)
			die("read");
		if (r > 0)
			got += (size_t)r;
	}
	buf[got] = 0;
	close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_startup: the %s child failed (status %d)\n", args[1], status);
		exit(1);
	}
	char *s = buf;
	for (int i = 0; i < n; i++) {
		char *end;
		out[i] = strtod(s, &end);
		if (end == s) {
			fprintf(stderr, "bench_startup: the %s child printed '%s'\n", args[1], buf);
			exit(1);
		}
		s = end;
	}
}

/* A listener on 127.0.0.1 that is never accepted from while a child runs. */
static int listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = loopback(0);
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		die("listener");
	*port = ntohs(a.sin_port);
	return fd;
}

static void drain(int fd)
{
	int c;
	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(c);
}

/* part prints " LABEL median [min .. max]" of v, in ms. */
static void part(const char *label, const double *v, int n)
{
	double lo, hi, med = bench_median(v, n, &lo, &hi);
	printf("%s %.3f [%.3f .. %.3f]", label, med, lo, hi);
}

/* memory_row: the row of per-round differences d (KiB), with each side's
 * median beside it. */
static void memory_row(const char *name, const double *d, const double *hev2, const double *plain, int n)
{
	double lo, hi, h = bench_median(hev2, n, &lo, &hi), p = bench_median(plain, n, &lo, &hi);
	char detail[96];
	snprintf(detail, sizeof detail, "libhev2 %.1f MB, plain C %.1f MB", h / 1024, p / 1024);
	bench_row(name, d, n, BENCH_MB, BENCH_REPORT, detail);
}

static int parent(char *empty, char *lib, int rounds)
{
	int port;
	int lfd = listener(&port);
	char port_s[16];
	snprintf(port_s, sizeof port_s, "%d", port);
	char *a_empty[] = {"bench_startup", "empty", empty, NULL};
	char *a_init[] = {"bench_startup", "init", lib, NULL};
	char *a_split[] = {"bench_startup", "split", lib, NULL};
	char *a_plain[] = {"bench_startup", "plain", port_s, NULL};
	char *a_connect[] = {"bench_startup", "connect", port_s, lib, NULL};
	double *m = calloc((size_t)rounds * 20, sizeof *m);
	if (!m)
		die("calloc");
	/* Per round: empty (2), init (2), split (3), plain (3), connect (4),
	 * then the derived differences. */
	double *e_dl = m, *e_call = m + rounds, *i_dl = m + 2 * rounds, *i_call = m + 3 * rounds;
	double *s_dl = m + 4 * rounds, *s_go = m + 5 * rounds, *s_init = m + 6 * rounds;
	double *p_conn = m + 7 * rounds, *p_rss = m + 8 * rounds, *p_hwm = m + 9 * rounds;
	double *c_conn = m + 10 * rounds, *c_whole = m + 11 * rounds, *c_rss = m + 12 * rounds,
	       *c_hwm = m + 13 * rounds;
	double *d_start = m + 14 * rounds, *d_conn = m + 15 * rounds, *d_rss = m + 16 * rounds,
	       *d_hwm = m + 17 * rounds;
	double out[MAX_FIELDS];
	/* One unmeasured round: the page cache, the libraries' first mapping. */
	run(a_empty, out, 2), run(a_init, out, 2), run(a_split, out, 3), run(a_plain, out, 3), run(a_connect, out, 4);
	drain(lfd);
	for (int k = 0; k < rounds; k++) {
		for (int j = 0; j < 2; j++) {
			if ((j + k) % 2 == 0) {
				run(a_empty, out, 2);
				e_dl[k] = out[0], e_call[k] = out[1];
			} else {
				run(a_init, out, 2);
				i_dl[k] = out[0], i_call[k] = out[1];
			}
		}
		for (int j = 0; j < 2; j++) {
			if ((j + k) % 2 == 0) {
				run(a_plain, out, 3);
				p_conn[k] = out[0], p_rss[k] = out[1], p_hwm[k] = out[2];
			} else {
				run(a_connect, out, 4);
				c_conn[k] = out[0], c_whole[k] = out[1], c_rss[k] = out[2], c_hwm[k] = out[3];
			}
		}
		run(a_split, out, 3);
		s_dl[k] = out[0], s_go[k] = out[1] - out[0], s_init[k] = out[2] - out[1];
		drain(lfd);
		d_start[k] = i_call[k] - e_call[k];
		d_conn[k] = c_conn[k] - p_conn[k];
		d_rss[k] = c_rss[k] - p_rss[k];
		d_hwm[k] = c_hwm[k] - p_hwm[k];
	}
	close(lfd);
	printf("fresh processes, %d rounds; ms from just before dlopen to the call's return (CLOCK_MONOTONIC, in the "
	       "child); median [min .. max]\n",
	       rounds);
	printf("  empty Go c-shared library:");
	part(" dlopen", e_dl, rounds), part(", dlopen + first call", e_call, rounds);
	printf("\n  libhev2:");
	part(" dlopen", i_dl, rounds), part(", dlopen + hev2_init", i_call, rounds);
	printf("\n  libhev2 in parts:");
	part(" dlopen", s_dl, rounds), part("; first call into Go (runtime start, package init)", s_go, rounds);
	part("; then hev2_init", s_init, rounds);
	printf("\n");
	bench_row("C startup: dlopen+hev2_init - dlopen+empty Go library's call", d_start, rounds, BENCH_MS, 1.0,
	          "fresh processes, per-round differences");
	printf("  first connect to 127.0.0.1 of a fresh process:");
	part(" plain C socket+connect", p_conn, rounds), part("; hev2_connect_wait after hev2_init", c_conn, rounds);
	part(" (dlopen to its return", c_whole, rounds);
	printf(")\n");
	bench_row("C first connect: hev2_connect_wait - plain C connect", d_conn, rounds, BENCH_MS, BENCH_REPORT,
	          "fresh processes, after dlopen+hev2_init");
	memory_row("C memory VmRSS: libhev2 + one hev2_connect_wait - plain C", d_rss, c_rss, p_rss, rounds);
	memory_row("C memory VmHWM: libhev2 + one hev2_connect_wait - plain C", d_hwm, c_hwm, p_hwm, rounds);
	free(m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "empty"))
		return child_empty(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "init"))
		return child_init(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "split"))
		return child_split(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "plain"))
		return child_plain(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return child_connect(atoi(argv[2]), argv[3]);
	if (argc == 3 || argc == 4) {
		int rounds = argc == 4 ? atoi(argv[3]) : 30;
		if (rounds < 20) {
			fprintf(stderr, "bench_startup: at least 20 rounds (pairs), not %d\n", rounds);
			return 2;
		}
		return parent(argv[1], argv[2], rounds);
	}
	fprintf(stderr, "usage: bench_startup EMPTY_LIB LIBHEV2 [ROUNDS]\n");
	return 2;
}
