/* The row line of row.h. */
#include "row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(const double *v, int n, double *min, double *max)
{
	double *s = malloc(sizeof *s * (size_t)n);
	if (!s || n < 1) {
		fprintf(stderr, "bench_median: %s\n", n < 1 ? "no values" : "out of memory");
		exit(1);
	}
	memcpy(s, v, sizeof *s * (size_t)n);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	double med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	*min = s[0];
	*max = s[n - 1];
	free(s);
	return med;
}

void bench_row(const char *name, const double *v, int n, enum bench_unit unit, double goal, const char *detail)
{
	double lo, hi, med = bench_median(v, n, &lo, &hi);
	char value[64], target[32];
	const char *verdict = goal < 0 ? "-" : med <= goal ? "ok" : "ABOVE GOAL";
	switch (unit) {
	case BENCH_RATIO:
		snprintf(value, sizeof value, "%.2fx [%.2f-%.2f]", med, lo, hi);
		snprintf(target, sizeof target, "goal <= %.2fx", goal);
		break;
	case BENCH_MS:
		snprintf(value, sizeof value, "%+.2f ms [%+.2f .. %+.2f]", med, lo, hi);
		snprintf(target, sizeof target, "goal <= %g ms", goal);
		break;
	case BENCH_MB:
		snprintf(value, sizeof value, "%+.2f MB [%+.2f .. %+.2f]", med / 1024, lo / 1024, hi / 1024);
		snprintf(target, sizeof target, "goal <= %g MB", goal / 1024);
		break;
	}
	if (goal < 0)
		snprintf(target, sizeof target, "goal: report");
	char line[512];
	snprintf(line, sizeof line, "row: %-74s %-28s %-16s %s%s%s%s", name, value, target, verdict,
	         detail ? "  (" : "", detail ? detail : "", detail ? ")" : "");
	printf("%s\n", line);
	fflush(stdout);
	const char *path = getenv("HEV2_BENCH_ROWS");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (f) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
}
