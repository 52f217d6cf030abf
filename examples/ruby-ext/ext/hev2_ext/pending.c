/* Hev2Ext::Pending: one connect in flight, returned by Hev2Ext.connect at
 * once; and hev2_ext_deliver, what the postponed job does with it when the
 * library is done: read the result, wrap the winner's fd in a Socket, release
 * the handle, and wake whoever waits in #value.
 *
 * The job runs in what Ruby calls trap context (the interrupt mask of a
 * signal handler): Mutex#lock raises ThreadError "can't be called from trap
 * context" there, and a Fiber scheduler's unblock takes a mutex (async's
 * and Ruby's own test scheduler do). So the job wakes nobody through a
 * scheduler:
 *   - threads wait in Thread::Queue#pop on a queue nothing is pushed to;
 *     the job closes it, which wakes every waiting thread without a mutex,
 *     and a #pop on a closed empty queue returns at once afterwards;
 *   - a fiber under a scheduler waits for an eventfd of its Pending with
 *     the scheduler's io_wait (rb_io_wait), so other fibers run meanwhile;
 *     the job writes to it (a write(2), fine in any context). The eventfd
 *     is made only when a fiber waits, and closed by the last one. */
#include "hev2_ext.h"

#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <ruby/fiber/scheduler.h>
#include <ruby/io.h>

struct pending {
	hev2_conn conn;
	int done;        /* set by the job, with everything below */
	int status;      /* HEV2_OK or an outcome code (or a call's error) */
	int completions; /* deliveries: 1 once done, never more */
	uint64_t started_ns, finished_ns, job_ns;
	double elapsed_ms; /* the library's: hev2_connect to the outcome */
	VALUE queue;       /* Thread::Queue, closed by the job */
	VALUE socket;      /* the winner, a Socket: the only owner of its fd */
	VALUE error;       /* or the exception #value raises */
	VALUE job_thread;  /* the Thread the job ran on */
	VALUE wake_io;     /* the fibers' eventfd as an IO, or nil */
	int wake_fd;       /* its fd, or -1 */
	int fiber_waiters; /* fibers waiting on it now */
};

static VALUE pending_class, socket_class, queue_class;
/* conn id -> Pending, from hev2_connect until the job delivers it: what
 * keeps a Pending nobody else holds alive until then. */
static VALUE registry;
static uint64_t connects, delivered, orphans;
static ID id_close, id_pop, id_for_fd, id_status, id_errno;

static void pending_mark(void *ptr)
{
	struct pending *p = ptr;
	rb_gc_mark(p->queue);
	rb_gc_mark(p->socket);
	rb_gc_mark(p->error);
	rb_gc_mark(p->job_thread);
	rb_gc_mark(p->wake_io);
}

static const rb_data_type_t pending_type = {
	.wrap_struct_name = "Hev2Ext::Pending",
	.function = {.dmark = pending_mark, .dfree = RUBY_TYPED_DEFAULT_FREE},
	.flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

static struct pending *get(VALUE self)
{
	return rb_check_typeddata(self, &pending_type);
}

VALUE hev2_ext_pending_new(void)
{
	struct pending *p;
	VALUE self = TypedData_Make_Struct(pending_class, struct pending, &pending_type, p);
	p->queue = p->socket = p->error = p->job_thread = p->wake_io = Qnil;
	p->wake_fd = -1;
	p->queue = rb_class_new_instance(0, NULL, queue_class);
	return self;
}

void hev2_ext_pending_started(VALUE self, hev2_conn c, uint64_t started_ns)
{
	struct pending *p = get(self);
	p->conn = c;
	p->started_ns = started_ns;
	rb_hash_aset(registry, ULL2NUM(c), self);
	connects++;
}

VALUE hev2_ext_new_error(VALUE klass, const char *message, int status, int sys_errno)
{
	VALUE e = rb_exc_new_cstr(klass, message);
	rb_ivar_set(e, id_status, INT2FIX(status));
	rb_ivar_set(e, id_errno, INT2FIX(sys_errno));
	return e;
}

static VALUE socket_for_fd(VALUE fd)
{
	return rb_funcall(socket_class, id_for_fd, 1, fd);
}

/* Reads the done handle's result into p. Raises only on a Ruby error (no
 * memory); the winner's fd is then closed, never leaked. */
static VALUE settle(VALUE arg)
{
	struct pending *p = (struct pending *)arg;
	hev2_result_info r;
	memset(&r, 0, sizeof r);
	r.size = sizeof r;
	int rc = hev2_result(p->conn, &r);
	if (rc != HEV2_OK) {
		p->status = rc;
		p->error = hev2_ext_new_error(hev2_ext_error, hev2_last_error(), rc, 0);
		return Qnil;
	}
	p->status = r.status;
	p->elapsed_ms = r.elapsed_ms;
	if (r.status != HEV2_OK) {
		VALUE klass = r.status == HEV2_ECANCELED ? hev2_ext_canceled : hev2_ext_error;
		p->error = hev2_ext_new_error(klass, hev2_errmsg(p->conn), r.status, r.error);
		return Qnil;
	}
	if (r.fd < 0) { /* the header promises a socket with HEV2_OK */
		p->status = HEV2_EINTERNAL;
		p->error = hev2_ext_new_error(hev2_ext_error, "hev2_result: HEV2_OK without a socket", HEV2_EINTERNAL, 0);
		return Qnil;
	}
	/* r.fd is ours from here on (the library never touches it again): it
	 * goes into exactly one Socket, which closes it, or is closed here. */
	int state;
	VALUE sock = rb_protect(socket_for_fd, INT2FIX(r.fd), &state);
	if (state) {
		close(r.fd);
		rb_jump_tag(state);
	}
	p->socket = sock;
	return Qnil;
}

static VALUE wake(VALUE queue)
{
	return rb_funcall(queue, id_close, 0);
}

/* One finished connect, in the job (GVL held, at some thread's safe
 * point). Never raises: an exception would end the job and leave the rest
 * of its queue for a later run, and Ruby would swallow it. */
void hev2_ext_deliver(struct hev2_ext_completion *n)
{
	uint64_t job_ns = hev2_ext_now_ns();
	VALUE self = rb_hash_delete(registry, ULL2NUM(n->conn));
	if (NIL_P(self)) { /* not ours to explain: count it, free the handle */
		orphans++;
		hev2_release(n->conn);
		return;
	}
	struct pending *p = get(self);
	p->job_ns = job_ns;
	p->finished_ns = n->finished_ns;
	p->job_thread = rb_thread_current();
	p->completions++;
	int state;
	rb_protect(settle, (VALUE)p, &state);
	if (state) {
		p->error = rb_errinfo();
		rb_set_errinfo(Qnil);
	}
	hev2_release(p->conn); /* the fd, if any, was handed over in settle */
	p->done = 1;
	delivered++;
	if (p->wake_fd >= 0) {
		uint64_t one = 1;
		ssize_t w = write(p->wake_fd, &one, sizeof one);
		(void)w;
	}
	rb_protect(wake, p->queue, &state); /* only threads wait on it */
	if (state)
		rb_set_errinfo(Qnil);
}

static VALUE io_for_fd(VALUE fd)
{
	return rb_funcall(rb_cIO, id_for_fd, 1, fd);
}

static VALUE wait_readable(VALUE self)
{
	struct pending *p = get(self);
	while (!p->done)
		rb_io_wait(p->wake_io, RB_INT2NUM(RUBY_IO_READABLE), Qnil);
	return Qnil;
}

static VALUE fiber_wait_over(VALUE self)
{
	struct pending *p = get(self);
	if (--p->fiber_waiters == 0 && p->done && !NIL_P(p->wake_io)) {
		VALUE io = p->wake_io;
		p->wake_io = Qnil;
		p->wake_fd = -1;
		rb_io_close(io);
	}
	return Qnil;
}

/* A fiber under a scheduler: waits for the Pending's eventfd through the
 * scheduler (made here, before `done` is looked at again: the job, which
 * runs only at a safe point, either sees it and writes to it, or ran
 * before and set `done`). */
static void wait_as_fiber(VALUE self, struct pending *p)
{
	if (NIL_P(p->wake_io)) {
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fd < 0)
			rb_sys_fail("hev2_ext: eventfd for a fiber's wait");
		int state;
		VALUE io = rb_protect(io_for_fd, INT2FIX(fd), &state);
		if (state) {
			close(fd);
			rb_jump_tag(state);
		}
		p->wake_io = io;
		p->wake_fd = fd;
	}
	p->fiber_waiters++;
	rb_ensure(wait_readable, self, fiber_wait_over, self);
}

/* #value: waits (thread or fiber) until the job delivered the outcome;
 * returns the connected Socket, or raises Hev2Ext::Error / Canceled. Every
 * call returns the same Socket: its fd has one owner. */
static VALUE pending_value(VALUE self)
{
	struct pending *p = get(self);
	if (!p->done) {
		if (!NIL_P(rb_fiber_scheduler_current()))
			wait_as_fiber(self, p);
		else
			rb_funcall(p->queue, id_pop, 0); /* returns once the job closed it */
	}
	if (!p->done)
		rb_raise(rb_eRuntimeError, "Hev2Ext::Pending: woken before its completion (a bug)");
	if (!NIL_P(p->error))
		rb_exc_raise(p->error);
	return p->socket;
}

/* #cancel: any moment, idempotent. The outcome becomes Canceled unless the
 * race was decided already; the completion arrives either way. */
static VALUE pending_cancel(VALUE self)
{
	struct pending *p = get(self);
	if (!p->done) {
		int rc = hev2_cancel(p->conn);
		if (rc != HEV2_OK)
			rb_exc_raise(hev2_ext_new_error(hev2_ext_error, hev2_last_error(), rc, 0));
	}
	return self;
}

static VALUE pending_done_p(VALUE self) { return get(self)->done ? Qtrue : Qfalse; }

static VALUE pending_status(VALUE self)
{
	struct pending *p = get(self);
	return p->done ? INT2FIX(p->status) : Qnil;
}

static VALUE pending_canceled_p(VALUE self)
{
	struct pending *p = get(self);
	return p->done && p->status == HEV2_ECANCELED ? Qtrue : Qfalse;
}

static VALUE stamp(uint64_t ns) { return ns ? ULL2NUM(ns) : Qnil; }
static VALUE pending_started_ns(VALUE self) { return stamp(get(self)->started_ns); }
static VALUE pending_finished_ns(VALUE self) { return stamp(get(self)->finished_ns); }
static VALUE pending_job_ns(VALUE self) { return stamp(get(self)->job_ns); }
static VALUE pending_completions(VALUE self) { return INT2FIX(get(self)->completions); }
static VALUE pending_job_thread(VALUE self) { return get(self)->job_thread; }

static VALUE pending_elapsed_ms(VALUE self)
{
	struct pending *p = get(self);
	return p->done ? DBL2NUM(p->elapsed_ms) : Qnil;
}

void hev2_ext_pending_stats(VALUE h)
{
	rb_hash_aset(h, ID2SYM(rb_intern("connects")), ULL2NUM(connects));
	rb_hash_aset(h, ID2SYM(rb_intern("delivered")), ULL2NUM(delivered));
	rb_hash_aset(h, ID2SYM(rb_intern("orphans")), ULL2NUM(orphans));
	rb_hash_aset(h, ID2SYM(rb_intern("in_flight")), LONG2NUM(RHASH_SIZE(registry)));
}

void hev2_ext_pending_init(void)
{
	id_close = rb_intern("close");
	id_pop = rb_intern("pop");
	id_for_fd = rb_intern("for_fd");
	id_status = rb_intern("@status");
	id_errno = rb_intern("@errno");
	socket_class = rb_path2class("Socket");
	queue_class = rb_path2class("Thread::Queue");
	registry = rb_hash_new();
	rb_gc_register_address(&registry);

	pending_class = rb_define_class_under(hev2_ext_module, "Pending", rb_cObject);
	rb_undef_alloc_func(pending_class);
	rb_define_method(pending_class, "value", pending_value, 0);
	rb_define_method(pending_class, "cancel", pending_cancel, 0);
	rb_define_method(pending_class, "done?", pending_done_p, 0);
	rb_define_method(pending_class, "canceled?", pending_canceled_p, 0);
	rb_define_method(pending_class, "status", pending_status, 0);
	rb_define_method(pending_class, "elapsed_ms", pending_elapsed_ms, 0);
	rb_define_method(pending_class, "started_ns", pending_started_ns, 0);
	rb_define_method(pending_class, "finished_ns", pending_finished_ns, 0);
	rb_define_method(pending_class, "job_ns", pending_job_ns, 0);
	rb_define_method(pending_class, "completions", pending_completions, 0);
	rb_define_method(pending_class, "job_thread", pending_job_thread, 0);
}
