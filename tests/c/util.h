/* Loopback helpers for the C suite: real listeners, no mocks. */
#ifndef HEV2_TEST_UTIL_H
#define HEV2_TEST_UTIL_H

#include <stdint.h>

/* A listener that accepts and closes connections on its own thread. */
struct server {
	int fd;
	int port;
};
int server_start(struct server *s, int af);  /* 0 or -1 */
void server_stop(struct server *s);

/* A listener that silently drops SYNs (listen(fd, 0) plus one unaccepted
 * filler connection), as a broken path would. */
struct blackhole {
	int fd, filler;
	int port;
};
int blackhole_start(struct blackhole *b, int af, int port); /* port 0: any */
void blackhole_stop(struct blackhole *b);

/* A port with no listener on 127.0.0.1 (and ::1): connecting is refused. */
int refused_port(void);

/* Open fds of this process (/proc/self/fd), to prove none is leaked. */
int count_fds(void);
/* count_fds once it is at most want, or after two seconds of waiting. */
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
