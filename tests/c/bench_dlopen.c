/* The cost of loading libhev2: dlopen time, and the resident memory and
 * threads added by loading it and by the Go runtime's start-up (the first
 * call). argv[1]: the path of libhev2.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "util.h"

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
	return 0;
}
