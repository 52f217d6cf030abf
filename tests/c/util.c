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

int server_start(struct server *s, int af)
{
	s->fd = listen_on(af, 0, 4096);
	if (s->fd < 0)
		return -1;
	s->port = port_of(s->fd);
	pthread_t t;
	if (pthread_create(&t, NULL, accept_loop, s) != 0)
		return -1;
	pthread_detach(t);
	return 0;
}

void server_stop(struct server *s)
{
	shutdown(s->fd, SHUT_RDWR); /* wakes accept with EINVAL */
	usleep(10000);
	close(s->fd);
}

int blackhole_start(struct blackhole *b, int af, int port)
{
	b->fd = listen_on(af, port, 0);
	if (b->fd < 0)
		return -1;
	b->port = port_of(b->fd);
	b->filler = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss;
	socklen_t len = make_addr(&ss, af, b->port);
	if (connect(b->filler, (struct sockaddr *)&ss, len) < 0)
		return -1;
	return 0;
}

void blackhole_stop(struct blackhole *b)
{
	close(b->filler);
	close(b->fd);
}

int refused_port(void)
{
	/* Bind both families to one port without listening: connects are
	 * refused, and nobody else can take the port while we hold it... but
	 * we must release it for the kernel to answer RST, so take a port,
	 * close, and rely on the ephemeral range not reusing it at once. */
	int fd = listen_on(AF_INET, 0, 1);
	int port = port_of(fd);
	close(fd);
	return port;
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
	for (int i = 0; i < 200 && n > want; i++) {
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
