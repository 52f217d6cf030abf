#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

int check_failures, check_count;

int check_done(const char *suite)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d of %d checks FAILED\n", suite, check_failures, check_count);
		return 1;
	}
	printf("%s: %d checks passed\n", suite, check_count);
	return 0;
}

static socklen_t make_addr(struct sockaddr_storage *ss, int af, int port)
{
	memset(ss, 0, sizeof *ss);
	if (af == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		s6->sin6_addr = in6addr_loopback;
		return sizeof *s6;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof *s4;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                      : ((struct sockaddr_in *)&ss)->sin_port);
}

static int listen_on(int af, int port, int backlog)
{
	int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (af == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, af, port);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, backlog) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* bound_socket is a TCP socket bound to af's loopback address and port (0:
 * the kernel chooses), not listening. Without SO_REUSEADDR: no other bind
 * of that address and port succeeds while it is open. */
static int bound_socket(int af, int port)
{
	int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, af, port);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void *accept_loop(void *arg)
{
	struct server *s = arg;
	for (;;) {
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0) {
			close(c);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		return NULL; /* shut down */
	}
}

/* server_run starts the accepting thread of s, whose fd listens. */
static int server_run(struct server *s)
{
	s->port = port_of(s->fd);
	if (pthread_create(&s->thread, NULL, accept_loop, s) != 0) {
		close(s->fd);
		return -1;
	}
	return 0;
}

int server_start(struct server *s, int af)
{
	s->fd = listen_on(af, 0, 4096);
	if (s->fd < 0)
		return -1;
	return server_run(s);
}

int server_start_on(struct server *s, int fd)
{
	s->fd = fd;
	if (listen(fd, 4096) < 0) {
		close(fd);
		return -1;
	}
	return server_run(s);
}

void server_stop(struct server *s)
{
	shutdown(s->fd, SHUT_RDWR); /* wakes accept with EINVAL */
	/* The thread is done with the fd before it is closed: a closed fd's
	 * number can be another listener's at once. */
	pthread_join(s->thread, NULL);
	close(s->fd);
}

/* blackhole_fill fills the backlog (0) of b's listening fd with one
 * connection that is never accepted: further SYNs are dropped. */
static int blackhole_fill(struct blackhole *b)
{
	struct sockaddr_storage me;
	socklen_t melen = sizeof me;
	if (getsockname(b->fd, (struct sockaddr *)&me, &melen) < 0)
		return -1;
	b->port = port_of(b->fd);
	b->filler = socket(me.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, me.ss_family, b->port);
	if (connect(b->filler, (struct sockaddr *)&ss, len) < 0)
		return -1;
	return 0;
}

int blackhole_start(struct blackhole *b, int af)
{
	b->fd = listen_on(af, 0, 0);
	if (b->fd < 0)
		return -1;
	return blackhole_fill(b);
}

int blackhole_start_on(struct blackhole *b, int fd)
{
	b->fd = fd;
	if (listen(fd, 0) < 0)
		return -1;
	return blackhole_fill(b);
}

void blackhole_stop(struct blackhole *b)
{
	close(b->filler);
	close(b->fd);
}

int fallback_start(struct server *s4, struct blackhole *b6)
{
	int fd4, fd6;
	if (reserve_both(&fd4, &fd6) < 0)
		return -1;
	if (server_start_on(s4, fd4) < 0) {
		close(fd6);
		return -1;
	}
	if (blackhole_start_on(b6, fd6) < 0) {
		server_stop(s4);
		return -1;
	}
	return 0;
}

int refused_port(int *fd)
{
	*fd = bound_socket(AF_INET, 0);
	return *fd < 0 ? -1 : port_of(*fd);
}

int reserve_both(int *fd4, int *fd6)
{
	/* The ephemeral range has tens of thousands of ports: a hundred taken
	 * on ::1 in a row means something else is wrong. */
	for (int i = 0; i < 100; i++) {
		int f4 = bound_socket(AF_INET, 0);
		if (f4 < 0)
			return -1;
		int port = port_of(f4);
		int f6 = bound_socket(AF_INET6, port);
		if (f6 >= 0) {
			*fd4 = f4;
			*fd6 = f6;
			return port;
		}
		int e = errno;
		close(f4);
		if (e != EADDRINUSE)
			return -1;
	}
	return -1;
}

void dump_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[300];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		link[n < 0 ? 0 : n] = 0;
		fprintf(stderr, "  fd %s -> %s\n", e->d_name, link);
	}
	closedir(d);
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

int settled_fd_count(int want)
{
	int n = count_fds();
	for (double end = now_ms() + 10000; n > want && now_ms() < end;) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		n = count_fds();
	}
	return n;
}

int count_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int have_ipv6_loopback(void)
{
	int fd = listen_on(AF_INET6, 0, 1);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

void *accept_and_close(void *listen_fd)
{
	int fd = (int)(intptr_t)listen_fd;
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			close(c);
	}
	return NULL;
}
