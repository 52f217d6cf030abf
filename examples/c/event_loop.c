/* Many connections at once from one event loop (epoll), the way a server
 * or an interpreter's loop would use libhev2: each handle's fd becomes
 * readable when it is done, and a postponed job registered once tells the
 * loop "something finished" through the jobs fd.
 *
 *   ./event_loop HOST:PORT [HOST:PORT ...]     (IPv6: [addr]:port)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"

static int completions_seen;

/* Runs at the loop's safe point (hev2_run_jobs), never on a library thread. */
static void on_completions(void *data)
{
	(void)data;
	completions_seen++;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: event_loop HOST:PORT [HOST:PORT ...]\n");
		return 2;
	}
	int n = argc - 1, ep = epoll_create1(EPOLL_CLOEXEC);
	hev2_job job;
	if (hev2_job_register(on_completions, NULL, 0, &job) != HEV2_OK)
		return 1;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0}; /* 0: the jobs fd */
	epoll_ctl(ep, EPOLL_CTL_ADD, hev2_jobs_fd(), &ev);

	hev2_options o;
	hev2_options_init(&o);
	o.open_timeout_ms = 5000;
	o.job = job;
	hev2_conn *conns = calloc((size_t)n, sizeof *conns);
	int running = 0;
	for (int i = 0; i < n; i++) {
		char *spec = argv[i + 1], *colon = strrchr(spec, ':');
		if (!colon) {
			fprintf(stderr, "%s: want HOST:PORT\n", spec);
			continue;
		}
		*colon = 0;
		int rc = hev2_connect(spec, colon + 1, &o, &conns[i]);
		*colon = ':';
		if (rc != HEV2_OK) {
			printf("%s: %s\n", spec, hev2_strerror(rc));
			continue;
		}
		ev.data.u64 = (uint64_t)i + 1;
		epoll_ctl(ep, EPOLL_CTL_ADD, hev2_fd(conns[i]), &ev);
		running++;
	}
	int failed = 0;
	while (running > 0) {
		struct epoll_event got[16];
		int k = epoll_wait(ep, got, 16, -1);
		if (k < 0 && errno == EINTR)
			continue;
		for (int e = 0; e < k; e++) {
			if (got[e].data.u64 == 0) {
				hev2_run_jobs();
				continue;
			}
			int i = (int)got[e].data.u64 - 1;
			hev2_result_info r = {.size = sizeof r};
			hev2_result(conns[i], &r);
			if (r.status == HEV2_OK) {
				printf("%s: connected to %s (%s) in %.1f ms\n", argv[i + 1], r.address,
				       r.family == AF_INET6 ? "ipv6" : "ipv4", r.elapsed_ms);
				close(r.fd);
			} else {
				printf("%s: %s\n", argv[i + 1], hev2_errmsg(conns[i]));
				failed++;
			}
			epoll_ctl(ep, EPOLL_CTL_DEL, hev2_fd(conns[i]), NULL);
			hev2_release(conns[i]); /* also closes the handle's fd */
			running--;
		}
	}
	hev2_run_jobs();
	printf("%d done, %d failed, completion job ran %d times\n", n, failed, completions_seen);
	free(conns);
	close(ep);
	return failed ? 1 : 0;
}
