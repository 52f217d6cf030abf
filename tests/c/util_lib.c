/* The helpers that call libhev2 (kept apart from util.c so that a test can
 * load the library itself with dlopen). */
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

int wait_idle(int ms)
{
	double end = now_ms() + ms;
	for (;;) {
		hev2_stats_info s = {.size = sizeof s};
		if (hev2_stats(&s) == HEV2_OK && s.handles_running == 0)
			return 1;
		if (now_ms() > end)
			return 0;
		usleep(1000);
	}
}

void warm_up(int port)
{
	/* The Go runtime opens fds of its own on first use and keeps them (its
	 * netpoller's epoll and eventfd, the cgroup files it watches for
	 * GOMAXPROCS), and the jobs eventfd lives as long as the process: let
	 * them all exist before a baseline is counted. */
	char p[16];
	snprintf(p, sizeof p, "%d", port);
	for (int i = 0; i < 3; i++) {
		hev2_conn c;
		if (hev2_connect("127.0.0.1", p, NULL, &c) == HEV2_OK) {
			hev2_wait(c, 5000);
			hev2_fd(c);
			hev2_release(c);
		}
	}
	hev2_jobs_fd();
	usleep(100000);
}
