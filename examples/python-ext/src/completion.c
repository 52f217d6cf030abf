/* The C side of a finished connect: what runs on the library's thread, and
 * how it asks the interpreter to take over.
 *
 * Pending-call route (the blocking-friendly form, hev2ext.connect):
 *   1. the library calls done_queue (hev2_options.on_done) on its thread:
 *      it stamps the moment and puts the connect in the ready queue, the
 *      extension's own list;
 *   2. the library then triggers the extension's postponed job
 *      (hev2_options.job, registered once, HEV2_JOB_DIRECT): it asks for
 *      one pending call (Py_AddPendingCall) unless one is already asked
 *      for, and wakes the threads inside Connect.wait;
 *   3. the interpreter's main thread runs run_ready at its next safe point:
 *      it empties the ready queue and delivers each connect.
 * The pending call carries no argument and one call serves any number of
 * connects, because the interpreter's queue of pending calls is small (32
 * entries on CPython 3.11) and shared with every other extension: a call
 * per connect would fill it, and a refused call would lose its connect.
 * The work lives in the ready queue; the call only says "look at it".
 *
 * Two things the interpreter does not promise, and what this file does:
 *   - a pending call can be refused (the queue is full): the connect stays
 *     in the ready queue and the nudger thread asks again until it is
 *     taken;
 *   - on CPython 3.11 and 3.12 a pending call added from a thread the
 *     interpreter does not know (the library's) does not set the eval
 *     breaker, so a main thread that runs Python without ever releasing
 *     the GIL never looks at it: when the call has not run within
 *     NUDGE_GRACE_NS, the nudger takes the GIL once
 *     (PyGILState_Ensure/Release); handing it back makes the main thread
 *     re-read its flags and run the call.
 *
 * The asyncio routes use done_stamp (the loop watches the handle's fd) or
 * done_threadsafe (the callback takes the GIL and hands the connect to the
 * loop with call_soon_threadsafe). */
#define _GNU_SOURCE
#include "hev2ext.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

/* How long a pending call may wait before the nudger takes the GIL once;
 * doubled after each nudge of one request, up to NUDGE_MAX_NS, so that a
 * main thread blocked in a long C call (which will run the call when it
 * comes back) is not nudged a thousand times a second. */
#define NUDGE_GRACE_NS 2000000LL
#define NUDGE_MAX_NS 100000000LL

long long hev2ext_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec at_ns(long long ns)
{
	struct timespec t = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
	return t;
}

/* The ready queue (pending-call route), and the generation every waiter
 * watches: bumped when a job ran or a connect was delivered. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct completion *head, *tail;
	uint64_t generation;
} q = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* 1 from the job's request of a pending call until run_ready starts. */
static atomic_int call_wanted;
/* 1 when Py_AddPendingCall refused the request (the nudger asks again). */
static atomic_int call_refused;
/* Requests so far: the nudger starts its grace anew for each. */
static atomic_ullong call_requests;

static hev2_job job;

static struct {
	atomic_ullong jobs, calls_added, calls_refused, calls_retried, calls_run,
		nudges, delivered_by_call, claimed_by_waiter;
} stats;

/* Shutdown: the library's threads may call in after the interpreter is
 * gone, so every call into Python from them is counted, and shutdown waits
 * for the count to drop to zero after setting closing. */
static atomic_int closing, in_python;
static pthread_mutex_t exit_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t exit_cv = PTHREAD_COND_INITIALIZER;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started;
} nudger = {.mu = PTHREAD_MUTEX_INITIALIZER};

int hev2ext_enter_python(void)
{
	atomic_fetch_add(&in_python, 1);
	if (atomic_load(&closing)) {
		hev2ext_leave_python();
		return 0;
	}
	return 1;
}

void hev2ext_leave_python(void)
{
	if (atomic_fetch_sub(&in_python, 1) == 1 && atomic_load(&closing)) {
		pthread_mutex_lock(&exit_mu);
		pthread_cond_broadcast(&exit_cv);
		pthread_mutex_unlock(&exit_mu);
	}
}

struct completion *hev2ext_completion_new(enum route route, ConnectObject *owner)
{
	struct completion *comp = calloc(1, sizeof *comp);
	if (!comp)
		return NULL;
	atomic_init(&comp->refs, 2); /* the library's callback, the Connect */
	comp->route = route;
	comp->owner = owner;
	Py_INCREF(owner);
	return comp;
}

void hev2ext_completion_unref(struct completion *comp)
{
	if (atomic_fetch_sub(&comp->refs, 1) == 1)
		free(comp);
}

uint64_t hev2ext_generation(void)
{
	pthread_mutex_lock(&q.mu);
	uint64_t g = q.generation;
	pthread_mutex_unlock(&q.mu);
	return g;
}

void hev2ext_changed(void)
{
	pthread_mutex_lock(&q.mu);
	q.generation++;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
}

void hev2ext_wait_for_change(uint64_t seen, long long max_ns)
{
	struct timespec deadline = at_ns(hev2ext_now_ns() + max_ns);
	pthread_mutex_lock(&q.mu);
	while (q.generation == seen)
		if (pthread_cond_timedwait(&q.cv, &q.mu, &deadline) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&q.mu);
}

static void unlink_locked(struct completion *comp)
{
	if (comp->prev)
		comp->prev->next = comp->next;
	else
		q.head = comp->next;
	if (comp->next)
		comp->next->prev = comp->prev;
	else
		q.tail = comp->prev;
	comp->prev = comp->next = NULL;
	comp->queued = 0;
}

int hev2ext_claim(struct completion *comp)
{
	pthread_mutex_lock(&q.mu);
	int mine = comp->queued;
	if (mine)
		unlink_locked(comp);
	pthread_mutex_unlock(&q.mu);
	if (mine)
		atomic_fetch_add(&stats.claimed_by_waiter, 1);
	return mine;
}

/* The pending call: on the main thread, with the GIL. It finds its work in
 * the ready queue, all of it, or none (a later request's call may find the
 * queue emptied by an earlier one, or by a waiter). */
static int run_ready(void *arg)
{
	(void)arg;
	/* Cleared before the queue is taken: a connect queued after this
	 * point asks for a call of its own. */
	atomic_store(&call_wanted, 0);
	atomic_fetch_add(&stats.calls_run, 1);
	if (atomic_load(&closing))
		return 0;
	for (;;) {
		pthread_mutex_lock(&q.mu);
		struct completion *comp = q.head;
		if (comp)
			unlink_locked(comp);
		pthread_mutex_unlock(&q.mu);
		if (!comp)
			break;
		atomic_fetch_add(&stats.delivered_by_call, 1);
		hev2ext_deliver(comp->owner);
	}
	/* A pending call that fails raises its exception in whatever code the
	 * main thread was running: delivery reports its own errors instead. */
	return 0;
}

static void wake_nudger(void)
{
	pthread_mutex_lock(&nudger.mu);
	pthread_cond_signal(&nudger.cv);
	pthread_mutex_unlock(&nudger.mu);
}

/* The postponed job, HEV2_JOB_DIRECT: called on the library's thread right
 * after done_queue, once per finished connect. It only asks. */
static void request_pending_call(void *data)
{
	(void)data;
	atomic_fetch_add(&stats.jobs, 1);
	if (hev2ext_enter_python()) {
		if (atomic_exchange(&call_wanted, 1) == 0) {
			atomic_fetch_add(&call_requests, 1);
			if (Py_AddPendingCall(run_ready, NULL) == 0) {
				atomic_fetch_add(&stats.calls_added, 1);
			} else {
				atomic_fetch_add(&stats.calls_refused, 1);
				atomic_store(&call_refused, 1);
			}
			wake_nudger();
		}
		hev2ext_leave_python();
	}
	/* Threads inside Connect.wait: the main thread runs the pending
	 * call itself, another thread takes its own connect if it is still
	 * queued. */
	hev2ext_changed();
}

/* on_done of the pending-call route. */
static void done_queue(hev2_conn c, int status, void *data)
{
	(void)c;
	struct completion *comp = data;
	atomic_store(&comp->finished_ns, hev2ext_now_ns());
	pthread_mutex_lock(&q.mu);
	comp->status = status;
	comp->prev = q.tail;
	comp->next = NULL;
	if (q.tail)
		q.tail->next = comp;
	else
		q.head = comp;
	q.tail = comp;
	comp->queued = 1;
	pthread_mutex_unlock(&q.mu);
	hev2ext_completion_unref(comp);
	/* The library triggers the job next, on this thread (capi's notify
	 * calls on_done, then triggers the job; hev2.h does not say so). */
}

/* on_done of the asyncio route that watches the handle's fd: the stamp
 * only (the fd was made readable just before this callback). */
static void done_stamp(hev2_conn c, int status, void *data)
{
	(void)c;
	struct completion *comp = data;
	atomic_store(&comp->finished_ns, hev2ext_now_ns());
	comp->status = status;
	hev2ext_completion_unref(comp);
}

/* on_done of the call_soon_threadsafe route: the library's thread takes
 * the GIL (waiting for it as long as a busy thread holds it). */
static void done_threadsafe(hev2_conn c, int status, void *data)
{
	(void)c;
	struct completion *comp = data;
	atomic_store(&comp->finished_ns, hev2ext_now_ns());
	comp->status = status;
	if (hev2ext_enter_python()) {
		PyGILState_STATE g = PyGILState_Ensure();
		hev2ext_complete_threadsafe(comp);
		PyGILState_Release(g);
		hev2ext_leave_python();
	}
	hev2ext_completion_unref(comp);
}

hev2_done_fn hev2ext_done_fn(enum route route)
{
	switch (route) {
	case ROUTE_PENDING_CALL:
		return done_queue;
	case ROUTE_LOOP_FD:
		return done_stamp;
	case ROUTE_LOOP_THREADSAFE:
		return done_threadsafe;
	}
	return done_stamp;
}

hev2_job hev2ext_job(void) { return job; }

/* The nudger: see the top of this file. */
static void *nudger_main(void *arg)
{
	(void)arg;
	unsigned long long seen = 0;
	long long grace = NUDGE_GRACE_NS;
	pthread_mutex_lock(&nudger.mu);
	while (!atomic_load(&closing)) {
		if (!atomic_load(&call_wanted)) {
			pthread_cond_wait(&nudger.cv, &nudger.mu);
			continue;
		}
		unsigned long long requests = atomic_load(&call_requests);
		if (requests != seen) {
			seen = requests;
			grace = NUDGE_GRACE_NS;
		}
		struct timespec deadline = at_ns(hev2ext_now_ns() + grace);
		while (!atomic_load(&closing) && atomic_load(&call_wanted) &&
		       pthread_cond_timedwait(&nudger.cv, &nudger.mu, &deadline) != ETIMEDOUT)
			;
		if (atomic_load(&closing) || !atomic_load(&call_wanted) ||
		    atomic_load(&call_requests) != seen)
			continue;
		pthread_mutex_unlock(&nudger.mu);
		if (hev2ext_enter_python()) {
			if (atomic_load(&call_refused) && Py_AddPendingCall(run_ready, NULL) == 0) {
				atomic_store(&call_refused, 0);
				atomic_fetch_add(&stats.calls_retried, 1);
			}
			/* Also when the call was refused again: the main
			 * thread then runs the calls that fill the queue. */
			PyGILState_STATE g = PyGILState_Ensure();
			PyGILState_Release(g);
			atomic_fetch_add(&stats.nudges, 1);
			hev2ext_leave_python();
		}
		pthread_mutex_lock(&nudger.mu);
		if (grace < NUDGE_MAX_NS)
			grace *= 2;
	}
	pthread_mutex_unlock(&nudger.mu);
	return NULL;
}

static int monotonic_cond(pthread_cond_t *cv)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
	return rc;
}

int hev2ext_completion_init(void)
{
	if (monotonic_cond(&q.cv) != 0 || monotonic_cond(&nudger.cv) != 0) {
		PyErr_SetString(PyExc_OSError, "hev2ext: cannot make a condition variable");
		return -1;
	}
	/* Registered once for the process (jobs are never unregistered, and
	 * a process has HEV2_MAX_JOBS of them). */
	int rc = hev2_job_register(request_pending_call, NULL, HEV2_JOB_DIRECT, &job);
	if (rc != HEV2_OK) {
		PyErr_Format(PyExc_OSError, "hev2ext: hev2_job_register: %s", hev2_last_error());
		return -1;
	}
	/* The nudger takes no signal: Python's handlers run on the main
	 * thread whichever thread the kernel picks, and a blocked one is
	 * never picked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&nudger.thread, NULL, nudger_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	nudger.started = 1;
	return 0;
}

void hev2ext_shutdown(void)
{
	if (atomic_exchange(&closing, 1))
		return;
	wake_nudger();
	/* Without the GIL: a library thread or the nudger inside
	 * PyGILState_Ensure needs it to get out. */
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&exit_mu);
	while (atomic_load(&in_python) > 0)
		pthread_cond_wait(&exit_cv, &exit_mu);
	pthread_mutex_unlock(&exit_mu);
	if (nudger.started)
		pthread_join(nudger.thread, NULL);
	Py_END_ALLOW_THREADS
	nudger.started = 0;
}

PyObject *hev2ext_stats(void)
{
	return Py_BuildValue(
		"{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
		"jobs", (unsigned long long)atomic_load(&stats.jobs),
		"calls_added", (unsigned long long)atomic_load(&stats.calls_added),
		"calls_refused", (unsigned long long)atomic_load(&stats.calls_refused),
		"calls_retried", (unsigned long long)atomic_load(&stats.calls_retried),
		"calls_run", (unsigned long long)atomic_load(&stats.calls_run),
		"nudges", (unsigned long long)atomic_load(&stats.nudges),
		"delivered_by_call", (unsigned long long)atomic_load(&stats.delivered_by_call),
		"claimed_by_waiter", (unsigned long long)atomic_load(&stats.claimed_by_waiter));
}

static int no_op(void *arg)
{
	(void)arg;
	return 0;
}

/* For the tests (module.c's _testing_fill_pending_calls): with the GIL held
 * on the main thread, no Python code runs there, so the calls added here
 * stay queued until the caller returns to Python. */
long hev2ext_fill_pending_queue(void)
{
	long added = 0;
	while (added < 1000000 && Py_AddPendingCall(no_op, NULL) == 0)
		added++;
	return added;
}

unsigned long long hev2ext_jobs_run(void) { return atomic_load(&stats.jobs); }

void hev2ext_wait_for_job(unsigned long long before, long long max_ns)
{
	long long deadline = hev2ext_now_ns() + max_ns;
	for (;;) {
		uint64_t seen = hev2ext_generation();
		if (atomic_load(&stats.jobs) > before)
			return;
		long long left = deadline - hev2ext_now_ns();
		if (left <= 0)
			return;
		hev2ext_wait_for_change(seen, left);
	}
}
