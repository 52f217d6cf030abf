/* Blocking connect+close on loopback: plain C beside the same loop through
 * libhev2's C ABI (connect, wait, result, close, release), once with the
 * race on a library thread (the default) and once driven by the waiting
 * thread (HEV2_DRIVE_WAITER). One process, one listener, interleaved
 * rounds (the order rotates each round); each figure is the median of the
 * per-round ratios to plain C, with their spread, for wall and CPU time.
 *
 *   bench_connect serve                 an accept-and-close listener on
 *                                       127.0.0.1 and ::1 (same port);
 *                                       prints the port, serves until
 *                                       stdin closes
 *   bench_connect PORT N [HOST]         every loop, N connects each; with
 *                                       HOST (a name), plain C resolves it
 *                                       with getaddrinfo and hev2 with its
 *                                       system resolver; without, then the
 *                                       same N call by call (per_call) and
 *                                       the sporadic pairs
 *   bench_connect PORT MODE N [HOST]    one loop only (for strace -c -f);
 *                                       MODE plain, library, waiter or
 *                                       onecall (hev2_connect_wait)
 * The listener is a separate process so that strace counts only the
 * client's system calls. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hev2.h"
#include "row.h"
#include "util.h"

static struct sockaddr_in to;
static char port[16];
static const char *host; /* NULL: the literal 127.0.0.1 */

static void plain_loop(int n)
{
	for (int i = 0; i < n; i++) {
		int fd;
		if (host) {
			struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
			if (getaddrinfo(host, port, &hints, &res) != 0) {
				fprintf(stderr, "getaddrinfo %s failed\n", host);
				exit(1);
			}
			fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
				perror("plain connect");
				exit(1);
			}
			freeaddrinfo(res);
		} else {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
				perror("plain connect");
				exit(1);
			}
		}
		close(fd);
	}
}

/* The floor of any connect that can be raced: non-blocking socket, connect,
 * poll, getsockopt(SO_ERROR), what hev2's drivers do (after getaddrinfo
 * for a name). */
static void plain_nonblocking_loop(int n)
{
	for (int i = 0; i < n; i++) {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
		const struct sockaddr *sa = (const struct sockaddr *)&to;
		socklen_t salen = sizeof to;
		int family = AF_INET;
		if (host) {
			if (getaddrinfo(host, port, &hints, &res) != 0) {
				fprintf(stderr, "getaddrinfo %s failed\n", host);
				exit(1);
			}
			sa = res->ai_addr, salen = res->ai_addrlen, family = res->ai_family;
		}
		int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int rc = fd < 0 ? -1 : connect(fd, sa, salen);
		if (res)
			freeaddrinfo(res);
		if (fd < 0 || (rc < 0 && errno != EINPROGRESS)) {
			perror("plain non-blocking connect");
			exit(1);
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof err;
		if (poll(&p, 1, -1) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
			fprintf(stderr, "plain non-blocking connect failed\n");
			exit(1);
		}
		close(fd);
	}
}

static void hev2_loop(int n, const hev2_options *o)
{
	hev2_result_info r;
	for (int i = 0; i < n; i++) {
		hev2_conn c;
		if (hev2_connect(host ? host : "127.0.0.1", port, o, &c) != HEV2_OK || hev2_wait(c, -1) != HEV2_OK) {
			fprintf(stderr, "hev2 connect failed: %s\n", hev2_last_error());
			exit(1);
		}
		r.size = sizeof r;
		if (hev2_result(c, &r) != HEV2_OK || r.status != HEV2_OK) {
			fprintf(stderr, "hev2: %s\n", hev2_errmsg(c));
			exit(1);
		}
		close(r.fd);
		hev2_release(c);
	}
}

static hev2_options waiter, waiter_no_history;

static void library_loop(int n) { hev2_loop(n, NULL); }
static void waiter_loop(int n) { hev2_loop(n, &waiter); }
/* The waiter-driven row again with the per-network history off: the
 * difference is history's cost on a name (a literal never touches it). */
static void waiter_no_history_loop(int n) { hev2_loop(n, &waiter_no_history); }

/* The one-call form: hev2_connect_wait hands the fd over and releases. */
static void one_call_loop(int n)
{
	for (int i = 0; i < n; i++) {
		hev2_conn c;
		int fd;
		if (hev2_connect_wait(host ? host : "127.0.0.1", port, NULL, -1, &c, &fd) != HEV2_OK) {
			fprintf(stderr, "hev2_connect_wait failed: %s\n", hev2_last_error());
			exit(1);
		}
		close(fd);
	}
}

static int serve(void)
{
	struct server srv;
	if (server_start(&srv, AF_INET) < 0)
		return 1;
	/* ::1 on the same port, for names that resolve to both. */
	int fd6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)srv.port),
	                          .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int one = 1;
	setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (fd6 >= 0 && bind(fd6, (struct sockaddr *)&a6, sizeof a6) == 0 && listen(fd6, 4096) == 0) {
		pthread_t t;
		pthread_create(&t, NULL, accept_and_close, (void *)(intptr_t)fd6);
	}
	printf("%d\n", srv.port);
	fflush(stdout);
	char buf[16];
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median, min and max of v[0..n) (sorted in place) */
static void spread(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

#define ROUNDS 15


/* The common pattern of a real program: a connect now and then, not in a
 * loop. Each connect follows 20 ms of idleness, hev2_connect_wait and a
 * plain blocking connect in turn; what is printed is the median of the
 * per-pair ratios. Caches are cold then, for both; hev2 also pays for the
 * Go runtime's return from idleness (its sysmon thread wakes, and may
 * preempt the thread's goroutine: a hand-off of its P and back). */
static void sporadic(void)
{
	enum { PAIRS = 40 };
	double h[PAIRS], c[PAIRS], r[PAIRS], hm, hlo, hhi, cm, clo, chi, rm, rlo, rhi;
	for (int i = 0; i < PAIRS; i++) {
		usleep(20 * 1000);
		double t0 = now_ms();
		one_call_loop(1);
		h[i] = (now_ms() - t0) * 1000;
		usleep(20 * 1000);
		t0 = now_ms();
		plain_loop(1);
		c[i] = (now_ms() - t0) * 1000;
		r[i] = h[i] / c[i];
	}
	spread(h, PAIRS, &hm, &hlo, &hhi);
	spread(c, PAIRS, &cm, &clo, &chi);
	spread(r, PAIRS, &rm, &rlo, &rhi);
	printf("sporadic: one connect after each 20 ms of idleness, %d pairs (cold caches; median per connect)\n", PAIRS);
	printf("  hev2_connect_wait %6.1f us, plain C socket+connect %6.1f us; ratio per pair %.2fx [%.2f-%.2f]\n", hm,
	       cm, rm, rlo, rhi);
}

/* A non-blocking connect to the literal started (EINPROGRESS or done),
 * for the call-by-call rows; exits on failure. */
static int start_nonblocking(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || (connect(fd, (struct sockaddr *)&to, sizeof to) < 0 && errno != EINPROGRESS)) {
		perror("plain non-blocking connect");
		exit(1);
	}
	return fd;
}

/* The same connect, timed call by call: each iteration makes one plain C
 * blocking connect, one non-blocking connect + poll, one non-blocking
 * connect + getpeername (poll only if not connected), and one
 * hev2_connect_wait, in that order, closes aside (the finest interleaving:
 * the machine's drift cancels within an iteration). Printed: the median
 * time of each and the median of the per-iteration ratios, then where a
 * waiter-driven handle's time goes, call by call. The calls that make no
 * connect (hev2_wait of a decided race, hev2_result, hev2_release) have
 * medians that move by tens of nanoseconds between runs: the figures to
 * compare builds with. The connects themselves move with the kernel. */
static void per_call(int n)
{
	double *t = malloc(sizeof(double) * (size_t)n * 12);
	if (!t) {
		perror("malloc");
		exit(1);
	}
	enum { BLOCKING, NONBLOCKING, PEERNAME, ONE_CALL, CONNECT, WAIT, RESULT, RELEASE, R_ONE, R_FLOOR, R_PEER, R_OVER, COLS };
	double *col[COLS];
	for (int j = 0; j < COLS; j++)
		col[j] = t + (size_t)j * (size_t)n;
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
			perror("plain connect");
			exit(1);
		}
		double t1 = now_ms();
		close(fd);
		double t2 = now_ms();
		fd = start_nonblocking();
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, -1) != 1) {
			perror("poll");
			exit(1);
		}
		double t3 = now_ms();
		close(fd);
		/* How hev2's drivers first look at one socket: getpeername, which
		 * succeeds once connected (a poll only if it does not). */
		double tp0 = now_ms();
		fd = start_nonblocking();
		struct sockaddr_storage peer;
		socklen_t peerlen = 0;
		p = (struct pollfd){.fd = fd, .events = POLLOUT};
		if (getpeername(fd, (struct sockaddr *)&peer, &peerlen) < 0 && poll(&p, 1, -1) != 1) {
			perror("poll");
			exit(1);
		}
		double tp1 = now_ms();
		close(fd);
		double t4 = now_ms();
		hev2_conn c;
		if (hev2_connect_wait("127.0.0.1", port, NULL, -1, &c, &fd) != HEV2_OK) {
			fprintf(stderr, "hev2_connect_wait failed: %s\n", hev2_last_error());
			exit(1);
		}
		double t5 = now_ms();
		close(fd);
		double t6 = now_ms();
		hev2_result_info r = {.size = sizeof r};
		if (hev2_connect("127.0.0.1", port, &waiter, &c) != HEV2_OK) {
			fprintf(stderr, "hev2_connect failed: %s\n", hev2_last_error());
			exit(1);
		}
		double t7 = now_ms();
		if (hev2_wait(c, -1) != HEV2_OK)
			exit(1);
		double t8 = now_ms();
		if (hev2_result(c, &r) != HEV2_OK || r.status != HEV2_OK)
			exit(1);
		double t9 = now_ms();
		close(r.fd);
		double t10 = now_ms();
		hev2_release(c);
		double t11 = now_ms();
		col[BLOCKING][i] = (t1 - t0) * 1e6, col[NONBLOCKING][i] = (t3 - t2) * 1e6;
		col[ONE_CALL][i] = (t5 - t4) * 1e6, col[CONNECT][i] = (t7 - t6) * 1e6;
		col[WAIT][i] = (t8 - t7) * 1e6, col[RESULT][i] = (t9 - t8) * 1e6, col[RELEASE][i] = (t11 - t10) * 1e6;
		col[R_ONE][i] = col[ONE_CALL][i] / col[BLOCKING][i];
		col[R_FLOOR][i] = col[NONBLOCKING][i] / col[BLOCKING][i];
		col[PEERNAME][i] = (tp1 - tp0) * 1e6, col[R_PEER][i] = col[PEERNAME][i] / col[BLOCKING][i];
		col[R_OVER][i] = col[ONE_CALL][i] - col[NONBLOCKING][i];
	}
	double med[COLS], lo, hi;
	for (int j = 0; j < COLS; j++)
		spread(col[j], n, &med[j], &lo, &hi);
	printf("call by call, %d iterations (each: plain C, non-blocking C twice, one call; closes not timed; medians)\n", n);
	printf("  plain C socket+connect %8.0f ns\n", med[BLOCKING]);
	printf("  plain C non-blocking   %8.0f ns  %.2fx plain C (median of per-iteration ratios)\n", med[NONBLOCKING],
	       med[R_FLOOR]);
	printf("  non-blocking, getpeername %5.0f ns  %.2fx plain C (a poll only when not connected yet)\n", med[PEERNAME],
	       med[R_PEER]);
	printf("  hev2_connect_wait      %8.0f ns  %.2fx plain C; %+.0f ns over the non-blocking connect\n",
	       med[ONE_CALL], med[R_ONE], med[R_OVER]);
	printf("  a waiter-driven handle: hev2_connect %.0f ns, hev2_wait %.0f ns, hev2_result %.0f ns, hev2_release %.0f ns\n",
	       med[CONNECT], med[WAIT], med[RESULT], med[RELEASE]);
	free(t);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc < 3) {
		fprintf(stderr, "usage: bench_connect serve | PORT N [HOST] | PORT plain|library|waiter N [HOST]\n");
		return 2;
	}
	int p = atoi(argv[1]);
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)p);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(port, sizeof port, "%d", p);
	hev2_init();
	hev2_options_init(&waiter);
	waiter.drive = HEV2_DRIVE_WAITER;
	waiter_no_history = waiter;
	waiter_no_history.history = 0;

	int single = argc >= 4 && (!strcmp(argv[2], "plain") || !strcmp(argv[2], "library") ||
	                           !strcmp(argv[2], "waiter") || !strcmp(argv[2], "onecall") ||
	                           !strcmp(argv[2], "nonblocking"));
	if (single) {
		host = argc >= 5 ? argv[4] : NULL;
		int n = atoi(argv[3]);
		if (!strcmp(argv[2], "plain"))
			plain_loop(n);
		else if (!strcmp(argv[2], "library"))
			library_loop(n);
		else if (!strcmp(argv[2], "waiter"))
			waiter_loop(n);
		else if (!strcmp(argv[2], "nonblocking"))
			plain_nonblocking_loop(n);
		else
			one_call_loop(n);
		return 0;
	}
	host = argc >= 4 ? argv[3] : NULL;
	int per = atoi(argv[2]) / ROUNDS;
	if (per < 1)
		per = 1;
	enum { LOOPS = 6 };
	void (*loops[LOOPS])(int) = {plain_loop, library_loop, waiter_loop, one_call_loop, plain_nonblocking_loop,
	                             waiter_no_history_loop};
	for (int i = 0; i < LOOPS; i++)
		loops[i](50); /* warm every path */
	double wall[LOOPS][ROUNDS], cpu[LOOPS][ROUNDS];
	for (int k = 0; k < ROUNDS; k++) {
		for (int j = 0; j < LOOPS; j++) {
			int i = (j + k) % LOOPS; /* rotate the order */
			double w0 = now_ms(), c0 = cpu_ms();
			loops[i](per);
			wall[i][k] = now_ms() - w0;
			cpu[i][k] = cpu_ms() - c0;
		}
	}
	printf("blocking connect+close to %s, %d rounds x %d connects, interleaved\n",
	       host ? host : "127.0.0.1 (literal)", ROUNDS, per);
	printf("  %-28s %12s %22s %22s\n", "", "us/connect", "wall vs plain C", "CPU vs plain C");
	const char *names[LOOPS] = {host ? "plain C getaddrinfo+connect" : "plain C socket+connect",
	                            "hev2 library-driven", "hev2 waiter-driven", "hev2_connect_wait (1 call)",
	                            host ? "plain C gai + non-blocking" : "plain C non-blocking + poll",
	                            "hev2 waiter, history off"};
	for (int i = 0; i < LOOPS; i++) {
		double us[ROUNDS], rw[ROUNDS], rc[ROUNDS], m, lo, hi, cm, clo, chi, um, ulo, uhi;
		for (int k = 0; k < ROUNDS; k++) {
			us[k] = wall[i][k] * 1000 / per;
			rw[k] = wall[i][k] / wall[0][k];
			rc[k] = cpu[i][k] / cpu[0][k];
		}
		spread(us, ROUNDS, &um, &ulo, &uhi);
		spread(rw, ROUNDS, &m, &lo, &hi);
		spread(rc, ROUNDS, &cm, &clo, &chi);
		printf("  %-28s %12.1f   %5.2fx [%4.2f-%4.2f]   %5.2fx [%4.2f-%4.2f]\n", names[i], um, m, lo, hi, cm,
		       clo, chi);
	}
	if (!host) {
		double rw[ROUNDS], rc[ROUNDS];
		for (int k = 0; k < ROUNDS; k++)
			rw[k] = wall[3][k] / wall[0][k], rc[k] = cpu[3][k] / cpu[0][k];
		bench_row("C hev2_connect_wait / plain C connect, wall", rw, ROUNDS, BENCH_RATIO, 1.15, NULL);
		bench_row("C hev2_connect_wait / plain C connect, CPU", rc, ROUNDS, BENCH_RATIO, 1.15, NULL);
		/* The default handle waited for: the docs lead with the one call
		 * for blocking callers, so this one is reported. */
		for (int k = 0; k < ROUNDS; k++)
			rw[k] = wall[1][k] / wall[0][k];
		bench_row("C hev2_connect+hev2_wait (library driver) / plain C, wall", rw, ROUNDS, BENCH_RATIO,
		          BENCH_REPORT, "docs lead with hev2_connect_wait");
	}
	if (!host) {
		per_call(atoi(argv[2]));
		sporadic();
	}
	return 0;
}
