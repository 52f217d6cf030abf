/* hev2ext.Connect: one connect as Python sees it, from the start until its
 * outcome is delivered, exactly once, as a socket.socket or an exception.
 *
 * Who delivers, by route (enum route):
 *   pending call   run_ready (completion.c) on the main thread; or a thread
 *                  inside wait() that takes its own connect out of the
 *                  ready queue first (hev2ext_claim);
 *   loop fd        _complete, the loop's reader callback on hev2_fd;
 *   threadsafe     _complete, scheduled by the library's callback with
 *                  loop.call_soon_threadsafe.
 * comp->owner keeps the Connect alive until then; it is dropped, with the
 * GIL, by the delivery (or an abandon), or by the threadsafe callback once
 * it has scheduled _complete (which holds its own reference). */
#include "hev2ext.h"

#include <errno.h>
#include <netinet/in.h>
#include <unistd.h>

PyObject *hev2ext_Error, *hev2ext_CancelledError;
static PyObject *socket_class, *gaierror_class;

/* How long wait() blocks before it looks at signals (Ctrl-C) again. */
#define WAIT_SLICE_NS 50000000LL

static void drop_owner(ConnectObject *self)
{
	if (self->comp && self->comp->owner == self) {
		self->comp->owner = NULL;
		Py_DECREF(self);
	}
}

/* The exception for an outcome that is not HEV2_OK: an OSError subclass
 * from the errno where there is one (ConnectionRefusedError ...). */
static PyObject *outcome_error(int status, const hev2_result_info *r, const char *msg)
{
	switch (status) {
	case HEV2_ECANCELED:
		return PyObject_CallFunction(hev2ext_CancelledError, "is", ECANCELED, msg);
	case HEV2_ETIMEOUT:
		return PyObject_CallFunction(PyExc_TimeoutError, "is", ETIMEDOUT, msg);
	case HEV2_ERESOLVE:
		return PyObject_CallFunction(gaierror_class, "is", r->eai, msg);
	case HEV2_ECONNECT:
		if (r->error > 0)
			return PyObject_CallFunction(PyExc_OSError, "is", r->error, msg);
		break;
	}
	return PyObject_CallFunction(hev2ext_Error, "is", 0, msg);
}

static PyObject *fetch_exception(void)
{
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	if (tb)
		PyException_SetTraceback(value, tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return value;
}

/* The socket object takes the fd: from here on, closing is its business.
 * If it cannot be made, the fd is closed here: never both, never neither. */
static PyObject *socket_for(int fd, int family, int nonblocking)
{
	int type = SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0);
	PyObject *sock = PyObject_CallFunction(socket_class, "iiii", family, type, IPPROTO_TCP, fd);
	if (!sock)
		close(fd);
	return sock;
}

static void call_close(PyObject *sock)
{
	PyObject *r = PyObject_CallMethod(sock, "close", NULL);
	if (!r)
		PyErr_WriteUnraisable(sock);
	Py_XDECREF(r);
}

/* The asyncio forms: the future gets the socket, the exception, or is
 * cancelled; when the awaiting code gave up first, the socket is closed. */
static void settle_future(ConnectObject *self)
{
	PyObject *fut = self->future;
	if (!fut)
		return;
	PyObject *done = PyObject_CallMethod(fut, "done", NULL);
	int is_done = done ? PyObject_IsTrue(done) : -1;
	Py_XDECREF(done);
	PyObject *r = NULL;
	if (is_done < 0) {
		PyErr_WriteUnraisable(fut);
	} else if (is_done) {
		if (self->sock)
			call_close(self->sock);
	} else if (self->sock) {
		r = PyObject_CallMethod(fut, "set_result", "O", self->sock);
	} else if (self->status == HEV2_ECANCELED) {
		r = PyObject_CallMethod(fut, "cancel", NULL);
	} else {
		r = PyObject_CallMethod(fut, "set_exception", "O", self->error);
	}
	if (!r && PyErr_Occurred())
		PyErr_WriteUnraisable(fut);
	Py_XDECREF(r);
	/* The future holds the outcome now (the Connect keeps the future, for
	 * a later await). */
	Py_CLEAR(self->sock);
	Py_CLEAR(self->loop);
}

static void run_callbacks(ConnectObject *self)
{
	PyObject *cbs = self->callbacks;
	self->callbacks = NULL;
	if (!cbs)
		return;
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cbs); i++) {
		PyObject *fn = PyList_GET_ITEM(cbs, i);
		PyObject *r = PyObject_CallOneArg(fn, (PyObject *)self);
		if (!r)
			PyErr_WriteUnraisable(fn);
		Py_XDECREF(r);
	}
	Py_DECREF(cbs);
}

void hev2ext_deliver(ConnectObject *self)
{
	if (self->delivered)
		return;
	/* Whatever a callback below does, self stays alive to the end. */
	Py_INCREF(self);
	self->delivered = 1;
	self->delivered_ns = hev2ext_now_ns();
	/* A delivery reports its own failures: it may run inside a pending
	 * call, which must not raise into the code the main thread runs. */
	PyObject *saved_type, *saved_value, *saved_tb;
	PyErr_Fetch(&saved_type, &saved_value, &saved_tb);

	hev2_result_info r;
	memset(&r, 0, sizeof r);
	r.size = sizeof r;
	int rc = hev2_result(self->conn, &r);
	if (rc != HEV2_OK) {
		self->status = rc;
		self->error = PyObject_CallFunction(hev2ext_Error, "is", 0, hev2_last_error());
	} else if (r.status == HEV2_OK && r.fd < 0) {
		/* Never socket.socket(fileno=-1): that makes a new socket. */
		self->status = HEV2_EINTERNAL;
		self->error = PyObject_CallFunction(hev2ext_Error, "is", 0,
		                                    "hev2ext: the library reported a connect without its fd");
	} else if (r.status == HEV2_OK) {
		self->status = HEV2_OK;
		/* The blocking form asked the library for a blocking fd, the
		 * asyncio forms for a non-blocking one. */
		self->sock = socket_for(r.fd, r.family, self->route != ROUTE_PENDING_CALL);
		if (!self->sock)
			self->error = fetch_exception();
	} else {
		self->status = r.status;
		self->error = outcome_error(r.status, &r, hev2_errmsg(self->conn));
	}
	if (!self->sock && !self->error)
		self->error = fetch_exception(); /* making the exception failed */
	hev2_release(self->conn);
	self->conn = 0;

	settle_future(self);
	run_callbacks(self);
	PyErr_Restore(saved_type, saved_value, saved_tb);
	drop_owner(self);
	hev2ext_changed();
	Py_DECREF(self);
}

/* The awaiting code gave up (its future was cancelled) before the outcome
 * came: release cancels the race, closes every socket it made, the
 * winner's included, and the handle's fd. */
static void abandon(ConnectObject *self)
{
	if (self->delivered)
		return;
	Py_INCREF(self);
	self->delivered = 1;
	self->delivered_ns = hev2ext_now_ns();
	self->status = HEV2_ECANCELED;
	if (self->reader_fd >= 0 && self->loop) {
		/* Before release closes it: a loop must never watch a closed
		 * (and perhaps reused) fd number. */
		PyObject *r = PyObject_CallMethod(self->loop, "remove_reader", "i", self->reader_fd);
		if (!r)
			PyErr_WriteUnraisable(self->loop);
		Py_XDECREF(r);
	}
	self->reader_fd = -1;
	hev2_release(self->conn);
	self->conn = 0;
	Py_CLEAR(self->loop);
	run_callbacks(self);
	drop_owner(self);
	hev2ext_changed();
	Py_DECREF(self);
}

void hev2ext_complete_threadsafe(struct completion *comp)
{
	ConnectObject *self = comp->owner;
	if (!self)
		return; /* abandoned before the library finished */
	comp->owner = NULL;
	if (!self->delivered) {
		PyObject *saved_type, *saved_value, *saved_tb;
		PyErr_Fetch(&saved_type, &saved_value, &saved_tb);
		PyObject *cb = PyObject_GetAttrString((PyObject *)self, "_complete");
		PyObject *r = cb ? PyObject_CallMethod(self->loop, "call_soon_threadsafe", "O", cb) : NULL;
		if (!r) {
			/* A closed loop: nobody will run _complete. */
			PyErr_WriteUnraisable(self->loop);
			abandon(self);
		}
		Py_XDECREF(r);
		Py_XDECREF(cb);
		PyErr_Restore(saved_type, saved_value, saved_tb);
	}
	Py_DECREF(self);
}

/* ---- the type ------------------------------------------------------------ */

static int Connect_traverse(ConnectObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->sock);
	Py_VISIT(self->error);
	Py_VISIT(self->callbacks);
	Py_VISIT(self->loop);
	Py_VISIT(self->future);
	return 0;
}

static int Connect_clear(ConnectObject *self)
{
	Py_CLEAR(self->sock);
	Py_CLEAR(self->error);
	Py_CLEAR(self->callbacks);
	Py_CLEAR(self->loop);
	Py_CLEAR(self->future);
	return 0;
}

static void Connect_dealloc(ConnectObject *self)
{
	PyObject_GC_UnTrack(self);
	Connect_clear(self);
	/* Only a connect that never started gets here with a handle: one
	 * that started is kept alive by comp->owner until delivered. */
	if (self->conn)
		hev2_release(self->conn);
	if (self->comp)
		hev2ext_completion_unref(self->comp);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *outcome(ConnectObject *self)
{
	if (self->sock)
		return Py_NewRef(self->sock);
	PyErr_SetObject((PyObject *)Py_TYPE(self->error), self->error);
	return NULL;
}

static PyObject *Connect_wait(ConnectObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"timeout", NULL};
	PyObject *timeout_obj = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:wait", names, &timeout_obj))
		return NULL;
	long long deadline = -1;
	if (timeout_obj != Py_None) {
		double t = PyFloat_AsDouble(timeout_obj);
		if (t == -1.0 && PyErr_Occurred())
			return NULL;
		if (t < 0) {
			PyErr_SetString(PyExc_ValueError, "timeout must be None or >= 0");
			return NULL;
		}
		deadline = hev2ext_now_ns() + (long long)(t * 1e9);
	}
	if (self->route != ROUTE_PENDING_CALL && !self->delivered) {
		PyErr_SetString(PyExc_RuntimeError, "a connect of connect_async is awaited, not waited for");
		return NULL;
	}
	Py_INCREF(self); /* a callback run below may drop the caller's last reference */
	PyObject *result = NULL;
	for (;;) {
		uint64_t seen = hev2ext_generation();
		if (self->delivered) {
			result = outcome(self);
			break;
		}
		/* On the main thread: the interpreter's pending calls (ours
		 * among them) and signal handlers; elsewhere a no-op. */
		if (Py_MakePendingCalls() < 0)
			break;
		if (self->delivered)
			continue;
		/* Not the main thread (or the call was refused): this thread
		 * takes its own connect if it is still queued. */
		if (self->comp && hev2ext_claim(self->comp)) {
			hev2ext_deliver(self);
			continue;
		}
		long long slice = WAIT_SLICE_NS;
		if (deadline >= 0) {
			long long left = deadline - hev2ext_now_ns();
			if (left <= 0) {
				PyErr_SetString(PyExc_TimeoutError, "hev2ext: the connect is still running");
				break;
			}
			if (left < slice)
				slice = left;
		}
		Py_BEGIN_ALLOW_THREADS
		hev2ext_wait_for_change(seen, slice);
		Py_END_ALLOW_THREADS
		if (PyErr_CheckSignals() < 0)
			break;
	}
	Py_DECREF(self);
	return result;
}

static PyObject *Connect_done(ConnectObject *self, PyObject *unused)
{
	(void)unused;
	return PyBool_FromLong(self->delivered);
}

static PyObject *Connect_cancel(ConnectObject *self, PyObject *unused)
{
	(void)unused;
	/* The outcome still comes the usual way: HEV2_ECANCELED, or the one
	 * it had already. Any thread, any moment, any number of times. */
	if (self->conn && !self->delivered)
		hev2_cancel(self->conn);
	Py_RETURN_NONE;
}

static PyObject *Connect_add_done_callback(ConnectObject *self, PyObject *fn)
{
	if (!PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError, "the callback must be callable");
		return NULL;
	}
	if (self->delivered) {
		PyObject *r = PyObject_CallOneArg(fn, (PyObject *)self);
		if (!r)
			return NULL;
		Py_DECREF(r);
		Py_RETURN_NONE;
	}
	if (!self->callbacks && !(self->callbacks = PyList_New(0)))
		return NULL;
	if (PyList_Append(self->callbacks, fn) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* The asyncio routes' delivery, on the loop's thread. */
static PyObject *Connect_complete(ConnectObject *self, PyObject *unused)
{
	(void)unused;
	if (self->delivered)
		Py_RETURN_NONE;
	if (self->reader_fd >= 0 && self->loop) {
		PyObject *r = PyObject_CallMethod(self->loop, "remove_reader", "i", self->reader_fd);
		if (!r)
			return NULL;
		Py_DECREF(r);
		self->reader_fd = -1;
	}
	hev2ext_deliver(self);
	Py_RETURN_NONE;
}

static PyObject *Connect_future_done(ConnectObject *self, PyObject *fut)
{
	PyObject *c = PyObject_CallMethod(fut, "cancelled", NULL);
	if (!c)
		return NULL;
	int cancelled = PyObject_IsTrue(c);
	Py_DECREF(c);
	if (cancelled > 0)
		abandon(self);
	Py_RETURN_NONE;
}

/* await connect: the future's own __await__ (connect_async's form). */
static PyObject *Connect_await(ConnectObject *self)
{
	if (!self->future) {
		PyErr_SetString(PyExc_TypeError, "only a connect of connect_async can be awaited; wait() for this one");
		return NULL;
	}
	return PyObject_CallMethod(self->future, "__await__", NULL);
}

static PyAsyncMethods Connect_async = {.am_await = (unaryfunc)Connect_await};

static PyObject *Connect_get_future(ConnectObject *self, void *unused)
{
	(void)unused;
	if (!self->future)
		Py_RETURN_NONE;
	return Py_NewRef(self->future);
}

static PyObject *Connect_get_status(ConnectObject *self, void *unused)
{
	(void)unused;
	if (!self->delivered)
		Py_RETURN_NONE;
	return PyLong_FromLong(self->status);
}

static PyObject *Connect_get_finished_ns(ConnectObject *self, void *unused)
{
	(void)unused;
	return PyLong_FromLongLong(self->comp ? atomic_load(&self->comp->finished_ns) : 0);
}

static PyObject *Connect_get_delivered_ns(ConnectObject *self, void *unused)
{
	(void)unused;
	return PyLong_FromLongLong(self->delivered_ns);
}

static PyObject *Connect_get_route(ConnectObject *self, void *unused)
{
	(void)unused;
	static const char *names[] = {"pending_call", "fd", "threadsafe"};
	return PyUnicode_FromString(names[self->route]);
}

static PyObject *Connect_repr(ConnectObject *self)
{
	if (!self->delivered)
		return PyUnicode_FromFormat("<hev2ext.Connect running, route %s>",
		                            self->route == ROUTE_PENDING_CALL ? "pending_call" : "loop");
	return PyUnicode_FromFormat("<hev2ext.Connect done: %s>", hev2_strerror(self->status));
}

static PyMethodDef Connect_methods[] = {
	{"wait", (PyCFunction)(void (*)(void))Connect_wait, METH_VARARGS | METH_KEYWORDS,
	 "wait(timeout=None) -> socket.socket\n\n"
	 "Blocks (without the GIL) until the outcome is delivered, then returns\n"
	 "the connected socket (the same object every time) or raises the\n"
	 "failure. TimeoutError if timeout seconds pass first (the connect goes\n"
	 "on)."},
	{"done", (PyCFunction)Connect_done, METH_NOARGS, "True once the outcome is delivered."},
	{"cancel", (PyCFunction)Connect_cancel, METH_NOARGS,
	 "Cancels the connect; its outcome is then delivered as\n"
	 "hev2ext.CancelledError unless it was decided already."},
	{"add_done_callback", (PyCFunction)Connect_add_done_callback, METH_O,
	 "add_done_callback(fn): fn(connect) runs once, on the thread that\n"
	 "delivers (the main thread's pending call, or a thread inside wait());\n"
	 "at once if already delivered."},
	{"_complete", (PyCFunction)Connect_complete, METH_NOARGS, NULL},
	{"_future_done", (PyCFunction)Connect_future_done, METH_O, NULL},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef Connect_getset[] = {
	{"status", (getter)Connect_get_status, NULL,
	 "the library's status once delivered (0: connected), else None", NULL},
	{"finished_ns", (getter)Connect_get_finished_ns, NULL,
	 "CLOCK_MONOTONIC (time.monotonic_ns) when the library's completion callback ran; 0 before", NULL},
	{"delivered_ns", (getter)Connect_get_delivered_ns, NULL,
	 "CLOCK_MONOTONIC when Python began delivering the outcome; 0 before", NULL},
	{"route", (getter)Connect_get_route, NULL, "how the outcome reaches Python", NULL},
	{"future", (getter)Connect_get_future, NULL,
	 "connect_async's asyncio.Future (what await waits for), else None", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject hev2ext_ConnectType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "hev2ext.Connect",
	.tp_doc = "A running connect: wait() for the socket of hev2ext.connect,\n"
	          "await the one of hev2ext.connect_async.",
	.tp_basicsize = sizeof(ConnectObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_traverse = (traverseproc)Connect_traverse,
	.tp_clear = (inquiry)Connect_clear,
	.tp_dealloc = (destructor)Connect_dealloc,
	.tp_repr = (reprfunc)Connect_repr,
	.tp_as_async = &Connect_async,
	.tp_methods = Connect_methods,
	.tp_getset = Connect_getset,
};

int hev2ext_connect_init(PyObject *module)
{
	PyObject *socket_mod = PyImport_ImportModule("socket");
	if (!socket_mod)
		return -1;
	socket_class = PyObject_GetAttrString(socket_mod, "socket");
	gaierror_class = PyObject_GetAttrString(socket_mod, "gaierror");
	Py_DECREF(socket_mod);
	if (!socket_class || !gaierror_class)
		return -1;
	hev2ext_Error = PyErr_NewExceptionWithDoc(
		"hev2ext.Error", "A failure the library reports without an errno (OSError).",
		PyExc_OSError, NULL);
	if (!hev2ext_Error)
		return -1;
	hev2ext_CancelledError = PyErr_NewExceptionWithDoc(
		"hev2ext.CancelledError", "The connect was cancelled (errno ECANCELED).",
		hev2ext_Error, NULL);
	if (!hev2ext_CancelledError)
		return -1;
	if (PyType_Ready(&hev2ext_ConnectType) < 0)
		return -1;
	if (PyModule_AddObjectRef(module, "Error", hev2ext_Error) < 0 ||
	    PyModule_AddObjectRef(module, "CancelledError", hev2ext_CancelledError) < 0 ||
	    PyModule_AddObjectRef(module, "Connect", (PyObject *)&hev2ext_ConnectType) < 0)
		return -1;
	return 0;
}
