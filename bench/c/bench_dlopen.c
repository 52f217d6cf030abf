/* The cost of loading libhev2: dlopen time, and the resident memory and
 * threads added by loading it and by the Go runtime's start-up (the first
 * call); then what the first connections of a process cost: hev2_init's
 * own work (its permanent fds), and the first connects (library-driven and
 * waiter-driven) beside later ones. argv[1]: the path of libhev2.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"
#include "util.h"

struct lib {
	int (*options_init_size)(hev2_options *, size_t);
	int (*connect)(const char *, const char *, const hev2_options *, hev2_conn *);
	int (*wait)(hev2_conn, int);
	int (*result)(hev2_conn, hev2_result_info *);
	int (*release)(hev2_conn);
};

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* one_connect: ms for connect+wait+result+close+release. */
static double one_connect(struct lib *l, const char *port, int drive)
{
	hev2_options o;
	l->options_init_size(&o, sizeof o);
	o.drive = drive;
	double t0 = now_ms();
	hev2_conn c;
	hev2_result_info r = {.size = sizeof r};
	if (l->connect("127.0.0.1", port, &o, &c) != HEV2_OK || l->wait(c, -1) != HEV2_OK ||
	    l->result(c, &r) != HEV2_OK || r.status != HEV2_OK) {
		fprintf(stderr, "bench_dlopen: connect failed\n");
		return -1;
	}
	close(r.fd);
	l->release(c);
	return now_ms() - t0;
}

static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	if (f)
		fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	long rss0 = rss_kb();
	int th0 = count_threads();
	double t0 = now_ms();
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	double t1 = now_ms();
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	long rss1 = rss_kb();
	int th1 = count_threads();
	int (*init)(void) = (int (*)(void))dlsym(h, "hev2_init");
	double t2 = now_ms();
	init();
	double t3 = now_ms();
	usleep(50000); /* let the runtime's background threads settle */
	long rss2 = rss_kb();
	int th2 = count_threads();
	printf("%-34s %10s %10s %8s\n", "loading libhev2.so", "time ms", "RSS +KB", "threads");
	printf("%-34s %10.3f %10ld %5d->%d\n", "  dlopen", t1 - t0, rss1 - rss0, th0, th1);
	printf("%-34s %10.3f %10ld %5d->%d\n", "  first call (Go runtime start)", t3 - t2, rss2 - rss1, th1, th2);
	printf("%-34s %10.3f %10ld\n", "  total", (t1 - t0) + (t3 - t2), rss2 - rss0);

	struct server s;
	if (server_start(&s, AF_INET) != 0)
		return 1;
	char port[16];
	snprintf(port, sizeof port, "%d", s.port);
	struct lib l = {
		.options_init_size = (int (*)(hev2_options *, size_t))dlsym(h, "hev2_options_init_size"),
		.connect = (int (*)(const char *, const char *, const hev2_options *, hev2_conn *))dlsym(h, "hev2_connect"),
		.wait = (int (*)(hev2_conn, int))dlsym(h, "hev2_wait"),
		.result = (int (*)(hev2_conn, hev2_result_info *))dlsym(h, "hev2_result"),
		.release = (int (*)(hev2_conn))dlsym(h, "hev2_release"),
	};
	printf("%-34s %10s\n", "first connects (127.0.0.1)", "time ms");
	for (int drive = HEV2_DRIVE_WAITER; drive >= HEV2_DRIVE_LIBRARY; drive--) {
		const char *name = drive == HEV2_DRIVE_WAITER ? "waiter" : "library";
		long f0 = minor_faults();
		double first = one_connect(&l, port, drive);
		long f1 = minor_faults();
		double second = one_connect(&l, port, drive);
		long f2 = minor_faults();
		double later[9];
		for (int i = 0; i < 9; i++)
			later[i] = one_connect(&l, port, drive);
		for (int i = 1; i < 9; i++) /* insertion sort for the median */
			for (int j = i; j > 0 && later[j] < later[j - 1]; j--) {
				double t = later[j];
				later[j] = later[j - 1];
				later[j - 1] = t;
			}
		printf("  %-7s first %8.3f, second %8.3f, later (median of 9) %8.3f; page faults: first %ld, second %ld\n",
		       name, first, second, later[4], f1 - f0, f2 - f1);
	}
	server_stop(&s);
	return 0;
}
