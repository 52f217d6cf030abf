/* Loopback helpers for the C suite: real listeners, no mocks. */
#ifndef HEV2_TEST_UTIL_H
#define HEV2_TEST_UTIL_H

#include <pthread.h>
#include <stdint.h>

/* A listener that accepts and closes connections on its own thread. */
struct server {
	int fd;
	int port;
	pthread_t thread;
};
int server_start(struct server *s, int af);  /* 0 or -1 */
void server_stop(struct server *s);

/* A listener that silently drops SYNs (listen(fd, 0) plus one unaccepted
 * filler connection), as a broken path would. */
struct blackhole {
	int fd, filler;
	int port;
};
int blackhole_start(struct blackhole *b, int af); /* 0 or -1 */
void blackhole_stop(struct blackhole *b);

/* Ports are held, never picked and released: `make test` runs suites in
 * parallel, and a port that was free a moment ago (a closed listener's, or
 * one chosen on 127.0.0.1 and then used on ::1 too) can be another test's
 * listener by the time it is connected to. */

/* A port of 127.0.0.1 where connecting is refused: a socket bound there
 * and never listening (the kernel answers a SYN with RST), held in *fd
 * until the caller closes it, so that nobody else can take the port. */
int refused_port(int *fd); /* the port, or -1 */

/* One port bound on 127.0.0.1 (*fd4) and ::1 (*fd6), not listening: until
 * one is made a listener (server_start_on, blackhole_start_on), connects
 * to it are refused. Chosen on 127.0.0.1, bound on ::1; chosen again if
 * ::1 has it taken. The caller closes what it does not hand on. */
int reserve_both(int *fd4, int *fd6); /* the port, or -1 */
/* server_start and blackhole_start on a socket bound already, which they
 * own from then on (stop closes it). */
int server_start_on(struct server *s, int fd);
int blackhole_start_on(struct blackhole *b, int fd);
/* One port on which ::1 drops SYNs (*b6) and 127.0.0.1 accepts (*s4):
 * reserve_both's, so that neither half is another test's. 0 or -1. */
int fallback_start(struct server *s4, struct blackhole *b6);

/* Open fds of this process (/proc/self/fd), to prove none is leaked. */
int count_fds(void);
/* count_fds once it is at most want, or after ten seconds of waiting (a
 * loaded machine runs the threads that close their fds late). */
int settled_fd_count(int want);
void dump_fds(void); /* to stderr, to explain a mismatch */
/* warm_up makes the library and the Go runtime open their permanent fds
 * (connecting to 127.0.0.1:port), so that later fd counts see only leaks. */
void warm_up(int port);
/* Threads of this process (/proc/self/status). */
int count_threads(void);
/* Resident memory of this process in KiB (/proc/self/status VmRSS). */
long rss_kib(void);
/* A thread body that accepts on the listening fd (intptr_t) and closes
 * every connection, forever. */
void *accept_and_close(void *listen_fd);

/* Milliseconds on the monotonic clock. */
double now_ms(void);

/* have_ipv6_loopback: ::1 is configured on lo. */
int have_ipv6_loopback(void);

/* wait_stats_running waits (up to ms) until no handle is running. */
int wait_idle(int ms);

#endif
