/* Postponed jobs, lock-free, in C (see "postponed jobs" in hev2.h).
 *
 * A job is a slot in a fixed table: registering fills the next slot and
 * publishes it; triggering sets the slot's pending flag with an atomic
 * exchange and, only on the 0 -> 1 transition, writes the jobs eventfd (so
 * triggers coalesce and a burst costs one write). hev2_run_jobs drains the
 * eventfd *before* scanning the flags: a trigger that sets its flag after
 * the scan writes the eventfd after the drain, so no wake-up is lost (at
 * worst the fd is readable once with nothing to run). Nothing here takes a
 * lock or allocates, so a trigger is safe from any thread and from a signal
 * handler; nothing here enters Go, so it all works in a fork child too. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "internal.h"

struct job {
	hev2_job_fn fn;
	void *data;
	unsigned flags;
	atomic_int ready;   /* 1 once fn/data/flags are visible */
	atomic_int pending; /* triggered, not yet run */
};

static struct job jobs[HEV2_MAX_JOBS];
static atomic_uint reserved;      /* slots handed out (<= HEV2_MAX_JOBS) */
static atomic_int jobs_efd = -1;
static atomic_uint_fast64_t n_registered, n_triggered, n_run;

/* ensure_efd creates the jobs eventfd once; racing creators close theirs.
 * fn: the public function, for the thread's last error. */
static int ensure_efd(const char *fn)
{
	int fd = atomic_load(&jobs_efd);
	if (fd >= 0)
		return fd;
	int mine = hev2c_eventfd_new();
	if (mine < 0)
		return hev2c_fail(fn, HEV2_ESYSTEM, errno, "eventfd for the jobs");
	int expected = -1;
	if (!atomic_compare_exchange_strong(&jobs_efd, &expected, mine)) {
		close(mine);
		return expected;
	}
	return mine;
}

int hev2_job_register(hev2_job_fn fn, void *data, unsigned flags,
                      hev2_job *out)
{
	if (out)
		*out = 0;
	if (!fn)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "fn is NULL");
	if (!out)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "out is NULL");
	if (flags & ~HEV2_JOB_DIRECT)
		return hev2c_failf(__func__, HEV2_EINVAL, "unknown flags 0x%x", flags & ~HEV2_JOB_DIRECT);
	/* The eventfd exists before any job can be triggered, so a trigger
	 * (maybe in a signal handler) never has to create it. */
	int efd = ensure_efd(__func__);
	if (efd < 0)
		return efd;
	unsigned idx = atomic_load(&reserved);
	do {
		if (idx >= HEV2_MAX_JOBS)
			return hev2c_failf(__func__, HEV2_ECAPACITY,
			                   "all %d job slots are registered", HEV2_MAX_JOBS);
	} while (!atomic_compare_exchange_weak(&reserved, &idx, idx + 1));
	jobs[idx].fn = fn;
	jobs[idx].data = data;
	jobs[idx].flags = flags;
	atomic_store_explicit(&jobs[idx].ready, 1, memory_order_release);
	atomic_fetch_add(&n_registered, 1);
	*out = (hev2_job)(idx + 1);
	return HEV2_OK;
}

int hev2_job_trigger(hev2_job j)
{
	/* Static texts only: this runs in signal handlers. */
	if (j < 1 || j > HEV2_MAX_JOBS)
		return hev2c_fail(__func__, HEV2_EINVAL, 0,
		                  "job id out of range (1 to HEV2_MAX_JOBS)");
	struct job *jb = &jobs[j - 1];
	if (!atomic_load_explicit(&jb->ready, memory_order_acquire))
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "job id not registered");
	atomic_fetch_add_explicit(&n_triggered, 1, memory_order_relaxed);
	if (jb->flags & HEV2_JOB_DIRECT) {
		atomic_fetch_add_explicit(&n_run, 1, memory_order_relaxed);
		jb->fn(jb->data);
		return HEV2_OK;
	}
	if (atomic_exchange(&jb->pending, 1) == 0)
		hev2c_eventfd_signal(atomic_load(&jobs_efd));
	return HEV2_OK;
}

static void drain(int fd)
{
	uint64_t v;
	ssize_t n;
	int saved = errno;
	do
		n = read(fd, &v, sizeof v);
	while (n < 0 && errno == EINTR);
	errno = saved;
}

int hev2_run_jobs(void)
{
	int fd = atomic_load(&jobs_efd);
	if (fd < 0)
		return 0; /* nothing was ever registered */
	drain(fd);
	unsigned n = atomic_load(&reserved);
	int ran = 0;
	for (unsigned i = 0; i < n; i++) {
		struct job *jb = &jobs[i];
		if (!atomic_load_explicit(&jb->ready, memory_order_acquire))
			continue;
		if (atomic_exchange(&jb->pending, 0)) {
			atomic_fetch_add_explicit(&n_run, 1, memory_order_relaxed);
			jb->fn(jb->data);
			ran++;
		}
	}
	return ran;
}

int hev2_jobs_fd(void)
{
	return ensure_efd(__func__);
}

int hev2c_job_flags(hev2_job j)
{
	if (j < 1 || j > HEV2_MAX_JOBS || !atomic_load_explicit(&jobs[j - 1].ready, memory_order_acquire))
		return -1;
	return (int)jobs[j - 1].flags;
}

uint64_t hev2c_jobs_registered(void) { return atomic_load(&n_registered); }
uint64_t hev2c_jobs_triggered(void) { return atomic_load(&n_triggered); }
uint64_t hev2c_jobs_run(void) { return atomic_load(&n_run); }
