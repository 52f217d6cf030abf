/*
 * hev2-demo-listeners — the two servers of `make demo`, without root.
 *
 * On one port number it holds:
 *   [::1]:PORT      a listener that silently drops SYNs: listen(fd, 0) plus
 *                   one filler connection that is never accepted, so the
 *                   accept queue stays full and the kernel drops further
 *                   SYNs (the client sees a connect that just hangs, like a
 *                   broken IPv6 path);
 *   127.0.0.1:PORT  a listener that accepts (and closes) connections.
 * It prints the port on stdout, then serves until stdin reaches EOF.
 *
 * With the argument "refused" it also holds a second port number on both
 * ::1 and 127.0.0.1, bound and never listening (a connect there is refused
 * with RST, and no other program can take the port meanwhile), and prints
 * it on a second line: a test's refused port that stays refused.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* listener binds addr:port (0: the kernel chooses) and listens with backlog
 * (backlog < 0: bound only, not listening, and without SO_REUSEADDR so
 * that no other socket can bind the port beside it); -1 if the port is
 * taken. */
static int listener(int af, const char *addr, int port, int backlog)
{
	int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int one = 1;
	if (backlog >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof ss);
	if (af == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
		len = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		len = sizeof *s4;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno != EADDRINUSE)
			die("bind");
		close(fd);
		return -1;
	}
	if (backlog < 0)
		return fd;
	if (listen(fd, backlog) < 0) {
		/* Another SO_REUSEADDR socket bound there, not listening. */
		if (errno != EADDRINUSE)
			die("listen");
		close(fd);
		return -1;
	}
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &len);
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                      : ((struct sockaddr_in *)&ss)->sin_port);
}

/* pair binds one port on ::1 and 127.0.0.1 (the ::1 socket listening with
 * backlog6, the 127.0.0.1 one with backlog4), chosen on ::1 and chosen
 * again while 127.0.0.1 has it taken; the port, or -1. */
static int pair(int backlog6, int backlog4, int *v6, int *v4)
{
	for (int tries = 0; tries < 100; tries++) {
		*v6 = listener(AF_INET6, "::1", 0, backlog6);
		if (*v6 < 0)
			continue;
		int port = port_of(*v6);
		*v4 = listener(AF_INET, "127.0.0.1", port, backlog4);
		if (*v4 >= 0)
			return port;
		close(*v6);
	}
	return -1;
}

int main(int argc, char **argv)
{
	int v6 = -1, v4 = -1;
	/* One port for both addresses. */
	int port = pair(0, 64, &v6, &v4);
	if (port < 0)
		die("no port free on both ::1 and 127.0.0.1 (is ::1 configured on lo?)");
	/* The filler: it fills the one-entry accept queue of [::1]:port. */
	int filler = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	inet_pton(AF_INET6, "::1", &to.sin6_addr);
	if (connect(filler, (struct sockaddr *)&to, sizeof to) < 0)
		die("connect filler");
	printf("%d\n", port);
	if (argc > 1 && strcmp(argv[1], "refused") == 0) {
		int r6, r4;
		int refused = pair(-1, -1, &r6, &r4);
		if (refused < 0)
			die("no port free on both ::1 and 127.0.0.1 for the refused port");
		printf("%d\n", refused); /* r6 and r4 stay open until exit */
	}
	fflush(stdout);

	struct pollfd p[2] = {{.fd = v4, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[0].revents) {
			int c = accept4(v4, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				close(c);
		}
		if (p[1].revents) {
			char buf[64];
			if (read(0, buf, sizeof buf) <= 0)
				return 0;
		}
	}
}
