/* Hev2::NoGVL: hev2_wait on the calling thread without the GVL, and
 * interruptible by Ruby.
 *
 * libhev2 is reached through the address of hev2_wait, passed as an Integer
 * from the Fiddle handle the gem already opened: this extension links
 * against nothing but Ruby, and always calls the very library the gem loaded
 * (HEV2_LIBRARY, the vendored copy or the system one).
 *
 * Fiddle cannot give a blocking call an unblocking function; this is all
 * the extension adds. rb_thread_call_without_gvl releases the GVL around
 * the wait (other threads run; the race of a HEV2_DRIVE_WAITER handle is
 * played on this thread).
 *
 * The unblocking function does not cancel the handle: an interrupt does not
 * always raise. A signal whose trap handler returns (SIGCHLD, which Ruby 3.4
 * handles itself whenever a child exits) interrupts the thread just as
 * Ctrl-C does; a cancelled race could only be started again from scratch,
 * and a stream of such signals would then never let a connect finish
 * (measured: a thread spawning `true` in a loop kept a 250 ms race from
 * ever ending). Since hev2_wait has no wake-up that leaves the race
 * running, the wait is made in slices of SLICE_MS: the unblocking function
 * only raises a flag, the slice in progress ends at most SLICE_MS later, and
 * the call returns HEV2_EAGAIN to Ruby, which runs the interrupt (raises,
 * or runs the trap handler) and calls again; a slice resumes the race where
 * it was (header: "waiting in slices loses nothing"). The unblocking
 * function runs no Ruby code and touches no Ruby object. */
#include <ruby.h>
#include <ruby/thread.h>
#include <stdint.h>

/* hev2_wait (include/hev2.h) as a function pointer type: hev2_conn is a
 * uint64_t. */
typedef int (*wait_fn)(uint64_t conn, int timeout_ms);

#define HEV2_EAGAIN (-6)
/* The longest an interrupt waits for the slice in progress to end. */
#define SLICE_MS 5

struct call {
	wait_fn wait;
	uint64_t conn;
	int rc;
	int interrupted; /* set by ubf_flag on another thread (atomics) */
};

static void *run_wait(void *arg)
{
	struct call *c = arg;
	do
		c->rc = c->wait(c->conn, SLICE_MS);
	while (c->rc == HEV2_EAGAIN && !__atomic_load_n(&c->interrupted, __ATOMIC_ACQUIRE));
	return NULL;
}

static void ubf_flag(void *arg)
{
	struct call *c = arg;
	__atomic_store_n(&c->interrupted, 1, __ATOMIC_RELEASE);
}

/* Hev2::NoGVL.wait(wait_address, conn) -> Integer
 *
 * wait_address: the address of hev2_wait. Waits until conn is done
 * (HEV2_OK) or Ruby interrupts the thread (HEV2_EAGAIN: call again), or
 * returns hev2_wait's error. An interrupt that raises is raised from here;
 * the caller releases the handle (ensure). */
static VALUE nogvl_wait(VALUE self, VALUE wait_address, VALUE conn)
{
	struct call c;
	uintptr_t fn = (uintptr_t)NUM2ULL(wait_address);
	(void)self;
	if (fn == 0)
		rb_raise(rb_eArgError, "Hev2::NoGVL.wait: hev2_wait's address is 0");
	c.wait = (wait_fn)fn;
	c.conn = (uint64_t)NUM2ULL(conn);
	c.interrupted = 0;
	/* First what progress is possible without blocking, with the GVL
	 * held (like any non-blocking system call Ruby makes): on a healthy
	 * network a loopback or LAN connect is done by now, and releasing and
	 * taking back the GVL would cost more than the connect (on Ruby 3.1,
	 * measured ~60 us per call with a second thread in the process). */
	c.rc = c.wait(c.conn, 0);
	if (c.rc != HEV2_EAGAIN)
		return INT2FIX(c.rc);
	rb_thread_call_without_gvl(run_wait, &c, ubf_flag, &c);
	return INT2FIX(c.rc);
}

void Init_hev2_wait(void)
{
	VALUE hev2 = rb_define_module("Hev2");
	VALUE nogvl = rb_define_module_under(hev2, "NoGVL");
	rb_define_const(nogvl, "SLICE_MS", INT2FIX(SLICE_MS));
	rb_define_singleton_method(nogvl, "wait", nogvl_wait, 2);
}
