/* One line per benchmark row, with its goal and a verdict, the shape every
 * language's benchmarks print (bindings/python/bench/rows.py,
 * bindings/ruby/bench/rows.rb, bench/dialbench/row.go):
 *
 *   row: NAME   VALUE [MIN .. MAX]  goal <= GOAL  ok | ABOVE GOAL
 *
 * VALUE is the median of the values given (per-round ratios, per-pair
 * differences), MIN and MAX their spread. The line is also appended to the
 * file $HEV2_BENCH_ROWS names, when set: `make bench` prints every row of
 * every benchmark together at its end. */
#ifndef HEV2_BENCH_ROW_H
#define HEV2_BENCH_ROW_H

enum bench_unit {
	BENCH_RATIO, /* 1.14x */
	BENCH_MS,    /* a difference in milliseconds */
	BENCH_MB,    /* a difference in MB (values given in KiB) */
};

/* No goal: the row is reported, not judged. */
#define BENCH_REPORT (-1.0)

/* bench_row prints the row of v[0..n) (left unchanged); detail (may be
 * NULL) follows the verdict in parentheses. */
void bench_row(const char *name, const double *v, int n, enum bench_unit unit, double goal, const char *detail);

/* bench_median: the median of v[0..n), with min and max (v left unchanged). */
double bench_median(const double *v, int n, double *min, double *max);

#endif
