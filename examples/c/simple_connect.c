/* The smallest complete use of libhev2: connect, wait, take the socket.
 *
 *   cc simple_connect.c $(pkg-config --cflags --libs hev2) -o simple_connect
 *   ./simple_connect HOST PORT
 */
#include <stdio.h>
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
	int rc = hev2_connect(argv[1], argv[2], &o, &c);
	if (rc != HEV2_OK) { /* bad arguments: nothing was started */
		fprintf(stderr, "simple_connect: %s\n", hev2_strerror(rc));
		return 2;
	}
	hev2_wait(c, -1);

	hev2_result_info r = {.size = sizeof r};
	hev2_result(c, &r);
	if (r.status == HEV2_OK) {
		printf("connected to %s port %d, fd %d\n", r.address, r.port, r.fd);
		close(r.fd); /* the fd is ours: hev2_release will not close it */
	} else {
		printf("failed: %s\n", hev2_errmsg(c));
	}
	hev2_release(c);
	return r.status == HEV2_OK ? 0 : 1;
}
