/* Blocking connect+close on loopback: a plain C connect() loop beside the
 * same loop through libhev2's C ABI (connect, wait, result, close,
 * release), in one run, same listener, interleaved rounds so neither side
 * gets the warmer machine.
 *
 *   bench_connect serve                 an accept-and-close listener on
 *                                       127.0.0.1; prints its port, serves
 *                                       until stdin closes
 *   bench_connect PORT N                both loops, N connects each
 *   bench_connect PORT plain|hev2 N     one loop only (for strace -c -f)
 * The listener is a separate process so that strace counts only the
 * client's system calls. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"
#include "util.h"

static struct sockaddr_in to;
static char port[16];

static void plain_loop(int n)
{
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
			perror("plain connect");
			exit(1);
		}
		close(fd);
	}
}

static void hev2_loop(int n)
{
	hev2_result_info r;
	for (int i = 0; i < n; i++) {
		hev2_conn c;
		if (hev2_connect("127.0.0.1", port, NULL, &c) != HEV2_OK || hev2_wait(c, -1) != HEV2_OK) {
			fprintf(stderr, "hev2 connect failed\n");
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

static int serve(void)
{
	struct server srv;
	if (server_start(&srv, AF_INET) < 0)
		return 1;
	printf("%d\n", srv.port);
	fflush(stdout);
	char buf[16];
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc < 3) {
		fprintf(stderr, "usage: bench_connect serve | PORT N | PORT plain|hev2 N\n");
		return 2;
	}
	int p = atoi(argv[1]);
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)p);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(port, sizeof port, "%d", p);
	hev2_init();

	if (argc == 4) {
		int n = atoi(argv[3]);
		if (!strcmp(argv[2], "plain"))
			plain_loop(n);
		else
			hev2_loop(n);
		return 0;
	}
	int n = atoi(argv[2]), rounds = 4;
	plain_loop(50); /* warm both paths */
	hev2_loop(50);
	double plain = 0, lib = 0;
	for (int k = 0; k < rounds; k++) {
		double t0 = now_ms();
		plain_loop(n / rounds);
		double t1 = now_ms();
		hev2_loop(n / rounds);
		double t2 = now_ms();
		plain += t1 - t0;
		lib += t2 - t1;
	}
	int done = n / rounds * rounds;
	printf("%-34s %10s %10s %8s\n", "blocking connect+close, loopback", "plain C", "hev2 C ABI", "ratio");
	printf("%-34s %10.2f %10.2f %7.2fx\n", "  time per connect (us)", plain * 1000 / done, lib * 1000 / done,
	       lib / plain);
	return 0;
}
