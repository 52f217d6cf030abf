/* gai_loop: the plain C baseline of bench-resolvers. Calls getaddrinfo(3)
 * for one family N times in a row, the way a C program would, and prints
 * the mean time per call as JSON.
 *
 *   gai_loop HOST 4|6 N
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc != 4 || (strcmp(argv[2], "4") != 0 && strcmp(argv[2], "6") != 0) || atol(argv[3]) <= 0) {
		fprintf(stderr, "usage: %s HOST 4|6 N\n", argv[0]);
		return 2;
	}
	long n = atol(argv[3]);
	struct addrinfo hints;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = argv[2][0] == '6' ? AF_INET6 : AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	long failures = 0;
	double start = now_ns();
	for (long i = 0; i < n; i++) {
		struct addrinfo *res = NULL;
		int rc = getaddrinfo(argv[1], NULL, &hints, &res);
		if (rc != 0) {
			failures++;
			continue;
		}
		freeaddrinfo(res);
	}
	double took = now_ns() - start;
	printf("{\"ns_per_op\": %.0f, \"failures\": %ld}\n", took / (double)n, failures);
	return failures ? 1 : 0;
}
