/* Hev2::NoGVL: hev2_wait on the calling thread without the GVL, and
 * interruptible by Ruby.
 *
 * libhev2 is reached through the address of hev2_wait, passed as an Integer
 * from the Fiddle handle the gem already opened: this extension links
 * against nothing but Ruby, and always calls the very library the gem loaded
 * (HEV2_LIBRARY, the vendored copy or the system one).
 *
 * It also offers hev2_connect_wait with a zero timeout as one call
 * (Hev2::NoGVL.connect, below): the healthy connect's whole cost is then one
 * call into the library, not four Fiddle calls.
 *
 * Fiddle cannot give a blocking call an unblocking function; that is what
 * the extension adds for the wait. rb_thread_call_without_gvl releases the
 * GVL around the wait (other threads run; the race of a HEV2_DRIVE_WAITER handle is
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
#include <string.h>

/* hev2_wait (include/hev2.h) as a function pointer type: hev2_conn is a
 * uint64_t. */
typedef int (*wait_fn)(uint64_t conn, int timeout_ms);

#define HEV2_OK 0
#define HEV2_EAGAIN (-6)
/* The longest an interrupt waits for the slice in progress to end. */
#define SLICE_MS 5
/* The wait comes back to Ruby (HEV2_EAGAIN) at least every 20 slices
 * (100 ms) even when no unblocking function was called: Ruby then looks at
 * its interrupts, among them a signal whose handler ran on another thread
 * and flagged the main thread without reaching ubf_flag. */
#define RUBY_EVERY_SLICES 20

struct call {
	wait_fn wait;
	uint64_t conn;
	int rc;
	int interrupted; /* set by ubf_flag on another thread (atomics) */
};

static void *run_wait(void *arg)
{
	struct call *c = arg;
	int slices = 0;
	do
		c->rc = c->wait(c->conn, SLICE_MS);
	while (c->rc == HEV2_EAGAIN && !__atomic_load_n(&c->interrupted, __ATOMIC_ACQUIRE) &&
	       ++slices < RUBY_EVERY_SLICES);
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
	c.rc = HEV2_EAGAIN; /* if an interrupt came first: not waited at all */
	c.interrupted = 0;
	/* RB_NOGVL_UBF_ASYNC_SAFE: ubf_flag is one atomic store, safe in a
	 * signal handler, so Ruby's own handler calls it when a signal
	 * (Ctrl-C) reaches a process whose main thread waits here. Without the
	 * flag, the signal waits in Ruby's self-pipe until another Ruby thread
	 * happens to read it: measured on 3.1, a SIGINT sent 0.2 s into a wait
	 * on a SYN-dropping port was not acted on at all within 8 s (the
	 * Timeout around the call fired instead). */
	rb_nogvl(run_wait, &c, ubf_flag, &c, RB_NOGVL_UBF_ASYNC_SAFE);
	return INT2FIX(c.rc);
}

/* hev2_connect_wait (include/hev2.h) as a function pointer type. */
typedef int (*connect_wait_fn)(const char *host, const char *port, const void *o, int timeout_ms,
                               uint64_t *out, int *fd);

struct connect_call {
	connect_wait_fn fn;
	const char *host, *port;
	const void *o;
	uint64_t *out;
	int fd, rc;
};

static void *run_connect(void *arg)
{
	struct connect_call *c = arg;
	c->rc = c->fn(c->host, c->port, c->o, 0, c->out, &c->fd);
	return NULL;
}

/* The longest host copied here; a longer one (which the library refuses
 * anyway) takes the general path, which reports it. */
#define HOST_ROOM 1024

/* Hev2::NoGVL.connect(connect_wait_address, host, port_address,
 *                     options_address, out_address) -> Integer or nil
 *
 * hev2_connect_wait(host, port, options, 0, out, &fd) without the GVL: the
 * race's first actions (a non-blocking connect, or lookups started on
 * their own threads) and one look at its sockets; nothing in it blocks, so
 * it needs no unblocking function. On a healthy network a loopback or LAN
 * connect is decided by then, and this one call replaces hev2_connect, the
 * wait, hev2_result and hev2_release. The GVL is released all the same: a
 * loopback connect does the whole handshake inside connect(2), and other
 * threads connect meanwhile (bench-ruby's 4-thread row compares it with
 * TCPSocket.new).
 * Returns the connected fd (>= 0; the library released the handle), or
 * hev2_connect_wait's status (< 0: HEV2_EAGAIN, the handle at out_address
 * still runs; an outcome code, the handle there is done; anything else, a
 * refusal and no handle), or nil when host does not fit a C string here
 * (the caller takes the general path, which explains). */
static VALUE nogvl_connect(VALUE self, VALUE fn_address, VALUE host, VALUE port_address, VALUE options,
                           VALUE out_address)
{
	char h[HOST_ROOM + 1];
	uintptr_t fn = (uintptr_t)NUM2ULL(fn_address);
	uint64_t *out = (uint64_t *)(uintptr_t)NUM2ULL(out_address);
	const char *port = (const char *)(uintptr_t)NUM2ULL(port_address);
	const void *o = (const void *)(uintptr_t)NUM2ULL(options);
	(void)self;
	if (fn == 0 || out == NULL || port == NULL)
		rb_raise(rb_eArgError, "Hev2::NoGVL.connect: a NULL address");
	StringValue(host);
	long n = RSTRING_LEN(host);
	if (n > HOST_ROOM || memchr(RSTRING_PTR(host), 0, (size_t)n))
		return Qnil;
	memcpy(h, RSTRING_PTR(host), (size_t)n);
	h[n] = 0;
	struct connect_call c = {(connect_wait_fn)fn, h, port, o, out, -1, 0};
	rb_thread_call_without_gvl(run_connect, &c, NULL, NULL);
	return INT2FIX(c.rc == HEV2_OK ? c.fd : c.rc);
}

void Init_hev2_wait(void)
{
	VALUE hev2 = rb_define_module("Hev2");
	VALUE nogvl = rb_define_module_under(hev2, "NoGVL");
	rb_define_const(nogvl, "SLICE_MS", INT2FIX(SLICE_MS));
	rb_define_singleton_method(nogvl, "wait", nogvl_wait, 2);
	rb_define_singleton_method(nogvl, "connect", nogvl_connect, 5);
}
