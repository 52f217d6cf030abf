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

static int listener(int af, const char *addr, int port, int backlog)
{
	int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int one = 1;
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
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return -1;
	if (listen(fd, backlog) < 0)
		die("listen");
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

int main(void)
{
	int v6 = -1, v4 = -1, port = 0;
	/* Find a port free on both addresses. */
	for (int tries = 0; tries < 50 && v4 < 0; tries++) {
		v6 = listener(AF_INET6, "::1", 0, 0);
		if (v6 < 0)
			die("bind [::1] (is ::1 configured on lo?)");
		port = port_of(v6);
		v4 = listener(AF_INET, "127.0.0.1", port, 64);
		if (v4 < 0)
			close(v6);
	}
	if (v4 < 0)
		die("bind 127.0.0.1");
	/* The filler: it fills the one-entry accept queue of [::1]:port. */
	int filler = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	inet_pton(AF_INET6, "::1", &to.sin6_addr);
	if (connect(filler, (struct sockaddr *)&to, sizeof to) < 0)
		die("connect filler");
	printf("%d\n", port);
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
