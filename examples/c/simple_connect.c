/* The smallest complete use of libhev2 by a caller that blocks until it is
 * connected: one call, the race played on this thread (hev2_connect_wait;
 * its cost beside a plain blocking connect(2): `make bench-capi`, row
 * "hev2_connect_wait (1 call)"). An event loop uses a handle instead
 * (hev2_connect, then hev2_fd or a callback): event_loop.c.
 *
 *   cc simple_connect.c $(pkg-config --cflags --libs hev2) -o simple_connect
 *   ./simple_connect HOST PORT
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: simple_connect HOST PORT\n");
		return 2;
	}
	hev2_options o;
	hev2_options_init(&o);
	o.connect_timeout_ms = 10000;

	hev2_conn c;
	int fd;
	int rc = hev2_connect_wait(argv[1], argv[2], &o, -1, &c, &fd);
	if (rc == HEV2_OK) {
		/* Connected; the handle is released already (c is 0). */
		struct sockaddr_storage peer;
		socklen_t len = sizeof peer;
		getpeername(fd, (struct sockaddr *)&peer, &len);
		printf("connected, fd %d (%s)\n", fd, peer.ss_family == AF_INET6 ? "IPv6" : "IPv4");
		close(fd); /* the fd is ours */
		return 0;
	}
	if (c == 0) { /* refused before anything started: bad arguments */
		fprintf(stderr, "simple_connect: %s\n", hev2_last_error());
		return 2;
	}
	/* The race failed: the handle says why. */
	printf("failed: %s\n", hev2_errmsg(c));
	hev2_release(c);
	return 1;
}
