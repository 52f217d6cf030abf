/* Hev2::NoGVL: hev2_wait on the calling thread without the GVL, with an
 * unblocking function that cancels the handle.
 *
 * libhev2 is reached through the addresses of its functions, passed as
 * Integers from the Fiddle handle the gem already opened: this extension
 * links against nothing but Ruby, and always calls the very library the
 * gem loaded (HEV2_LIBRARY, the vendored copy or the system one).
 *
 * Fiddle cannot give a blocking call an unblocking function; this is all
 * the extension adds. rb_thread_call_without_gvl releases the GVL around
 * hev2_wait (other threads run; the race of a HEV2_DRIVE_WAITER handle is
 * played on this thread); when Ruby must interrupt the thread (Thread#raise,
 * Thread#kill, Timeout, a signal such as Ctrl-C for the main thread) it
 * calls ubf_cancel, which calls hev2_cancel(handle): the library wakes the
 * driving thread, which closes its own sockets and returns at once. Ruby
 * then takes the GVL back and raises the pending interrupt itself. The
 * unblocking function runs no Ruby code and touches no Ruby object:
 * hev2_cancel is thread-safe and may be called at any moment, any number of
 * times, even after hev2_wait has returned (the handle is released by the
 * caller only later, holding the GVL, when no unblocking function is set). */
#include <ruby.h>
#include <ruby/thread.h>
#include <stdint.h>

/* The library's prototypes (include/hev2.h), as function pointer types:
 * hev2_conn is a uint64_t. */
typedef int (*wait_fn)(uint64_t conn, int timeout_ms);
typedef int (*cancel_fn)(uint64_t conn);

/* HEV2_EAGAIN: what the call returns if Ruby never ran hev2_wait (an
 * interrupt was pending before the GVL was released). */
#define NOT_WAITED (-6)
/* Returned instead of the wait's status when the unblocking function
 * cancelled the handle and Ruby raised nothing afterwards (e.g. a signal
 * whose trap handler returned normally): the handle is cancelled, and the
 * caller decides what to do (the gem starts the connection again). */
#define INTERRUPTED 1

struct call {
	wait_fn wait;
	cancel_fn cancel;
	uint64_t conn;
	int timeout_ms;
	int rc;
	volatile int cancelled;
};

static void *run_wait(void *arg)
{
	struct call *c = arg;
	c->rc = c->wait(c->conn, c->timeout_ms);
	return NULL;
}

static void ubf_cancel(void *arg)
{
	struct call *c = arg;
	c->cancelled = 1;
	c->cancel(c->conn);
}

static void *fn_pointer(VALUE addr, const char *what)
{
	uintptr_t p = (uintptr_t)NUM2ULL(addr);
	if (p == 0)
		rb_raise(rb_eArgError, "Hev2::NoGVL.wait: %s is NULL", what);
	return (void *)p;
}

/* Hev2::NoGVL.wait(wait_addr, cancel_addr, conn, timeout_ms) -> Integer
 *
 * wait_addr, cancel_addr: the addresses of hev2_wait and hev2_cancel.
 * Returns hev2_wait's status, or INTERRUPTED (see above). Interrupts that
 * raise are raised from here, after the handle was cancelled; the caller
 * releases the handle (ensure). */
static VALUE nogvl_wait(VALUE self, VALUE wait_addr, VALUE cancel_addr, VALUE conn,
                        VALUE timeout_ms)
{
	struct call c;
	(void)self;
	c.cancel = (cancel_fn)fn_pointer(cancel_addr, "hev2_cancel");
	c.wait = (wait_fn)fn_pointer(wait_addr, "hev2_wait");
	c.conn = (uint64_t)NUM2ULL(conn);
	c.timeout_ms = NUM2INT(timeout_ms);
	c.rc = NOT_WAITED;
	c.cancelled = 0;
	rb_thread_call_without_gvl(run_wait, &c, ubf_cancel, &c);
	/* rb_thread_call_without_gvl has already raised any interrupt that
	 * raises; here only those that did not (a trap handler that returned,
	 * Thread#wakeup) are left. */
	if (c.cancelled)
		return INT2FIX(INTERRUPTED);
	return INT2FIX(c.rc);
}

void Init_hev2_wait(void)
{
	VALUE hev2 = rb_define_module("Hev2");
	VALUE nogvl = rb_define_module_under(hev2, "NoGVL");
	rb_define_const(nogvl, "INTERRUPTED", INT2FIX(INTERRUPTED));
	rb_define_singleton_method(nogvl, "wait", nogvl_wait, 4);
}
