/* How a finished connect gets from a library thread into the interpreter.
 *
 *   library thread                       Ruby (GVL held, at a safe point)
 *   --------------                       --------------------------------
 *   hev2_ext_on_done (hev2's on_done):
 *     stamp CLOCK_MONOTONIC
 *     push the completion on `queue`
 *     3.3+: rb_postponed_job_trigger ---> the job runs at the next interrupt
 *                                         check of the thread running Ruby
 *     ring `doorbell` (an eventfd) -----> the pump thread wakes, schedules the
 *                                         job on itself and reaches a safe
 *                                         point (rb_thread_check_ints)
 *                                         run_completions (the job): takes the
 *                                         whole queue, hev2_ext_deliver each
 *
 * Why the job finds its work in a queue, not in its argument. A postponed
 * job carries one fixed `data` pointer: 3.3's preregister fixes it once,
 * and 3.1's register_one keeps the data of the registration already
 * pending and drops the new one. And triggers coalesce: two connects that
 * finish before the interpreter's next safe point run the job once. So
 * each finished connect is pushed on a lock-free list first, and the job
 * drains the whole list: no completion is lost to coalescing, and none is
 * delivered twice (the job takes the list with one atomic exchange).
 *
 * The two APIs (which one is compiled is extconf.rb's have_func):
 *
 * Ruby 3.3+ rb_postponed_job_preregister once at load, then
 *   rb_postponed_job_trigger(handle): one atomic OR into a bitset plus the
 *   interrupt flag of an execution context. Documented async-signal-safe
 *   and callable from any thread, a library thread included, so the C
 *   trigger callback calls it directly: when another Ruby thread holds the
 *   GVL (a busy loop), that thread runs the job at its next interrupt check,
 *   without waiting for a GVL hand-off.
 *
 * Ruby 3.1 rb_postponed_job_register_one(0, func, data): claims a slot of a
 *   shared buffer by a compare-and-swap on its index, and only then writes
 *   func and data into the slot. A thread running the jobs (with the GVL)
 *   can take the slot between the two and call a stale or half-written
 *   function pointer: the race that made 3.3 deprecate it. It is safe where
 *   no job can run at the same moment: in a signal handler on the thread
 *   holding the GVL (stackprof's use), or holding the GVL. So on 3.1 the
 *   library thread never calls it: only the pump thread does, with the GVL.
 *   The buffer (1024 slots, shared with Ruby's own users) can also be full:
 *   the registration then fails and is lost, and the pump tries again.
 *
 * Neither wakes anybody. From a thread Ruby did not make, both set the
 * flag of the thread that runs Ruby or, when none does, of one that ran
 * last, which may be asleep in Queue#pop or IO.select and looks at its
 * flags only when something else wakes it: while every Ruby thread sleeps,
 * a triggered job waits. Hence the doorbell and the pump thread: a Ruby
 * thread of this extension that waits for the doorbell without the GVL, and
 * when it rings schedules the job on its own execution context and reaches
 * a safe point itself. The doorbell is rung only when the queue goes from
 * empty to not empty: a burst of completions wakes the pump once.
 *
 * Everything the callback does is async-signal-safe (clock_gettime, a
 * compare-and-swap, 3.3's trigger, write(2) on an eventfd): it never takes a
 * lock, never allocates and never runs Ruby code. The job, in turn, runs in
 * Ruby's trap context (pending.c says what that forbids). */
#include "hev2_ext.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <ruby/debug.h>
#include <ruby/thread.h>
#include <ruby/vm.h>

#ifdef HAVE_RB_POSTPONED_JOB_PREREGISTER
const char hev2_ext_postponed_api[] = "rb_postponed_job_preregister/rb_postponed_job_trigger";
static rb_postponed_job_handle_t job_handle;
#else
const char hev2_ext_postponed_api[] = "rb_postponed_job_register_one";
#endif

/* Finished connects not yet taken by the job: a lock-free stack (pushed by
 * library threads, taken whole by the job). */
static struct hev2_ext_completion *queue;
/* An eventfd: readable while the pump has something to look at. */
static int doorbell = -1;
/* 0 once the VM is being torn down: the callback then touches Ruby no more. */
static int vm_alive;
static VALUE pump_thread = Qnil;

/* Counters for Hev2Ext.stats; the first two are written by library threads. */
static uint64_t callbacks, rings;
static uint64_t pump_wakes, job_runs, jobs_on_pump, register_retries;

uint64_t hev2_ext_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ring(void)
{
	uint64_t one = 1;
	ssize_t n = write(doorbell, &one, sizeof one); /* EAGAIN: already rung */
	(void)n;
	__atomic_fetch_add(&rings, 1, __ATOMIC_RELAXED);
}

/* The C trigger callback (hev2_options.on_done), on a library thread, once
 * per connect (header: "fires exactly once with the final status"). */
void hev2_ext_on_done(hev2_conn c, int status, void *data)
{
	struct hev2_ext_completion *n = data;
	n->finished_ns = hev2_ext_now_ns();
	n->conn = c;
	n->status = status;
	struct hev2_ext_completion *head = __atomic_load_n(&queue, __ATOMIC_RELAXED);
	do
		n->next = head;
	while (!__atomic_compare_exchange_n(&queue, &head, n, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&vm_alive, __ATOMIC_ACQUIRE))
		return;
#ifdef HAVE_RB_POSTPONED_JOB_PREREGISTER
	rb_postponed_job_trigger(job_handle);
#endif
	/* Not empty before: whoever made it so rang already, and the job that
	 * takes that entry takes this one with it. */
	if (head == NULL)
		ring();
}

/* The postponed job: runs with the GVL, on whichever Ruby thread reached a
 * safe point first with the job's flag set. */
static void run_completions(void *unused)
{
	(void)unused;
	job_runs++;
	if (rb_thread_current() == pump_thread)
		jobs_on_pump++;
	struct hev2_ext_completion *n = __atomic_exchange_n(&queue, NULL, __ATOMIC_ACQUIRE), *fifo = NULL;
	while (n) { /* the stack in the order the connects finished */
		struct hev2_ext_completion *next = n->next;
		n->next = fifo;
		fifo = n;
		n = next;
	}
	while (fifo) {
		struct hev2_ext_completion *next = fifo->next;
		hev2_ext_deliver(fifo); /* never raises */
		xfree(fifo);
		fifo = next;
	}
}

/* Schedules the job on the calling Ruby thread (the pump, GVL held): it
 * runs at this thread's next safe point. 0 if 3.1's buffer was full. */
static int schedule_job_here(void)
{
#ifdef HAVE_RB_POSTPONED_JOB_PREREGISTER
	rb_postponed_job_trigger(job_handle);
	return 1;
#else
	return rb_postponed_job_register_one(0, run_completions, NULL) != 0;
#endif
}

/* Without the GVL: waits for the doorbell, then resets it. */
static void *wait_doorbell(void *unused)
{
	(void)unused;
	struct pollfd p = {.fd = doorbell, .events = POLLIN};
	if (poll(&p, 1, -1) > 0) {
		uint64_t count;
		ssize_t n = read(doorbell, &count, sizeof count);
		(void)n;
	}
	/* EINTR: back to Ruby, which runs its signal handlers and comes back */
	return NULL;
}

/* The unblocking function: Thread#kill (at exit), Thread#raise. */
static void unblock_pump(void *unused)
{
	(void)unused;
	ring();
}

static VALUE pump(void *unused)
{
	(void)unused;
	for (;;) {
		rb_thread_call_without_gvl(wait_doorbell, NULL, unblock_pump, NULL);
		rb_thread_check_ints(); /* an interrupt (Thread#kill at exit) ends here */
		pump_wakes++;
		if (schedule_job_here()) {
			rb_thread_check_ints(); /* the safe point: the job runs here */
		} else {
			/* 3.1's buffer is full: let its jobs run, then try again */
			register_retries++;
			rb_thread_wait_for((struct timeval){.tv_sec = 0, .tv_usec = 1000});
			ring();
		}
	}
	return Qnil;
}

/* Starts the pump on the first connect (so that a plain `require` starts no
 * thread), and again if it is gone (killed by someone, or after fork). */
void hev2_ext_start_pump(void)
{
	if (!NIL_P(pump_thread) && RTEST(rb_funcall(pump_thread, rb_intern("alive?"), 0)))
		return;
	pump_thread = rb_thread_create(pump, NULL);
	rb_funcall(pump_thread, rb_intern("name="), 1, rb_str_new_cstr("hev2_ext pump"));
}

static void vm_exiting(ruby_vm_t *vm)
{
	(void)vm;
	__atomic_store_n(&vm_alive, 0, __ATOMIC_RELEASE);
}

void hev2_ext_completion_init(void)
{
	doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (doorbell < 0)
		rb_sys_fail("hev2_ext: eventfd for the pump's doorbell");
#ifdef HAVE_RB_POSTPONED_JOB_PREREGISTER
	job_handle = rb_postponed_job_preregister(0, run_completions, NULL);
	if (job_handle == POSTPONED_JOB_HANDLE_INVALID)
		rb_raise(rb_eRuntimeError, "hev2_ext: Ruby's postponed job table is full");
#endif
	rb_gc_register_address(&pump_thread);
	ruby_vm_at_exit(vm_exiting);
	__atomic_store_n(&vm_alive, 1, __ATOMIC_RELEASE);
}

void hev2_ext_completion_stats(VALUE h)
{
	rb_hash_aset(h, ID2SYM(rb_intern("callbacks")), ULL2NUM(__atomic_load_n(&callbacks, __ATOMIC_RELAXED)));
	rb_hash_aset(h, ID2SYM(rb_intern("doorbell_rings")), ULL2NUM(__atomic_load_n(&rings, __ATOMIC_RELAXED)));
	rb_hash_aset(h, ID2SYM(rb_intern("pump_wakes")), ULL2NUM(pump_wakes));
	rb_hash_aset(h, ID2SYM(rb_intern("job_runs")), ULL2NUM(job_runs));
	rb_hash_aset(h, ID2SYM(rb_intern("jobs_on_pump")), ULL2NUM(jobs_on_pump));
	rb_hash_aset(h, ID2SYM(rb_intern("register_retries")), ULL2NUM(register_retries));
}
