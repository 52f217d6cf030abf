/* A minimal test harness for the C suite: CHECK* record a failure with its
 * line and go on, so one run reports every broken rule; the process exits
 * non-zero if anything failed. */
#ifndef HEV2_TEST_CHECK_H
#define HEV2_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "hev2.h"

extern int check_failures;
extern int check_count;

#define CHECK(cond)                                                            \
	do {                                                                   \
		check_count++;                                                 \
		if (!(cond)) {                                                 \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,  \
			        __LINE__, #cond);                              \
		}                                                              \
	} while (0)

/* CHECK_RC compares two status codes and names both on failure. */
#define CHECK_RC(got, want)                                                    \
	do {                                                                   \
		int got_ = (got), want_ = (want);                              \
		check_count++;                                                 \
		if (got_ != want_) {                                           \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: %s = %d (%s), want %d (%s)\n",  \
			        __FILE__, __LINE__, #got, got_,                \
			        hev2_strerror(got_), want_,                    \
			        hev2_strerror(want_));                         \
		}                                                              \
	} while (0)

#define CHECK_INT(got, want)                                                   \
	do {                                                                   \
		long long got_ = (got), want_ = (want);                        \
		check_count++;                                                 \
		if (got_ != want_) {                                           \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: %s = %lld, want %lld\n",        \
			        __FILE__, __LINE__, #got, got_, want_);        \
		}                                                              \
	} while (0)

/* CHECK_FDS: no fd left open compared with a count taken before. Other
 * threads (the test servers closing what they accepted, the Go runtime
 * reading its cgroup limits) open and close fds on their own, so the count
 * is given up to ten seconds to come back down; fewer fds than before is
 * no leak. */
#define CHECK_FDS(before)                                                      \
	do {                                                                   \
		int now_ = settled_fd_count(before);                           \
		CHECK(now_ <= (before));                                       \
		if (now_ > (before))                                           \
			dump_fds();                                            \
	} while (0)

/* check_done prints the tally and gives main's exit status. */
int check_done(const char *suite);

#endif
