/* The hev2ext module: connect (the blocking-friendly form), connect_async
 * (the asyncio form), stats, and the shutdown that atexit runs. */
#include "hev2ext.h"

#include <math.h>

/* What connect and connect_async take, as the library wants it. */
struct request {
	const char *host;
	char port[32];
	const char *static_hosts;
	int attempt_delay_ms, connect_timeout_ms, open_timeout_ms;
};

/* Seconds (None: the library's default) to ms, rounded up so that a small
 * positive value never becomes 0 (which means "default" or "none"). */
static int to_ms(PyObject *seconds, const char *name, int *ms)
{
	*ms = 0;
	if (seconds == Py_None)
		return 0;
	double s = PyFloat_AsDouble(seconds);
	if (s == -1.0 && PyErr_Occurred())
		return -1;
	if (!(s >= 0 && s <= HEV2_MAX_TIMEOUT_MS / 1000.0)) {
		PyErr_Format(PyExc_ValueError, "%s must be between 0 and %d seconds", name,
		             HEV2_MAX_TIMEOUT_MS / 1000);
		return -1;
	}
	*ms = (int)ceil(s * 1000);
	return 0;
}

static int parse_port(PyObject *port, char *out, size_t size)
{
	if (PyLong_Check(port)) {
		long p = PyLong_AsLong(port);
		if (p == -1 && PyErr_Occurred())
			return -1;
		snprintf(out, size, "%ld", p);
		return 0;
	}
	const char *s = PyUnicode_Check(port) ? PyUnicode_AsUTF8(port) : NULL;
	if (!s) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "port must be an int or a str");
		return -1;
	}
	if (strlen(s) >= size) {
		PyErr_SetString(PyExc_ValueError, "port is too long");
		return -1;
	}
	snprintf(out, size, "%s", s);
	return 0;
}

/* The keywords both forms share; extra: connect_async's route. */
static int parse_request(PyObject *args, PyObject *kw, struct request *req, const char **route)
{
	/* The same list for both; connect's ends before "route". */
	static char *names[] = {"host", "port", "static_hosts", "connection_attempt_delay",
	                        "connect_timeout", "open_timeout", "route", NULL};
	static char *names_no_route[] = {"host", "port", "static_hosts", "connection_attempt_delay",
	                                 "connect_timeout", "open_timeout", NULL};
	PyObject *port, *delay = Py_None, *connect_timeout = Py_None, *open_timeout = Py_None;
	memset(req, 0, sizeof *req);
	if (!PyArg_ParseTupleAndKeywords(args, kw, route ? "sO|$zOOOs" : "sO|$zOOO",
	                                 route ? names : names_no_route, &req->host, &port,
	                                 &req->static_hosts, &delay, &connect_timeout,
	                                 &open_timeout, route))
		return -1;
	if (parse_port(port, req->port, sizeof req->port) < 0 ||
	    to_ms(delay, "connection_attempt_delay", &req->attempt_delay_ms) < 0 ||
	    to_ms(connect_timeout, "connect_timeout", &req->connect_timeout_ms) < 0 ||
	    to_ms(open_timeout, "open_timeout", &req->open_timeout_ms) < 0)
		return -1;
	return 0;
}

static ConnectObject *connect_new(enum route route)
{
	ConnectObject *self = PyObject_GC_New(ConnectObject, &hev2ext_ConnectType);
	if (!self)
		return NULL;
	self->conn = 0;
	self->comp = NULL;
	self->route = route;
	self->delivered = 0;
	self->status = 0;
	self->sock = self->error = self->callbacks = self->loop = self->future = NULL;
	self->reader_fd = -1;
	self->delivered_ns = 0;
	PyObject_GC_Track(self);
	return self;
}

/* hev2_connect with the route's completion. With the GIL: the call returns
 * at once (lookups and connects run on library threads), and the callback
 * never runs inside it. */
static int connect_start(ConnectObject *self, const struct request *req)
{
	struct completion *comp = hev2ext_completion_new(self->route, self);
	if (!comp) {
		PyErr_NoMemory();
		return -1;
	}
	self->comp = comp;
	hev2_options o;
	hev2_options_init(&o);
	o.on_done = hev2ext_done_fn(self->route);
	o.on_done_data = comp;
	o.job = self->route == ROUTE_PENDING_CALL ? hev2ext_job() : 0;
	/* socket.socket(fileno=) believes a new socket blocks (timeout None):
	 * the blocking form asks for a blocking fd so that both agree; asyncio
	 * wants a non-blocking one (the library's default). */
	o.blocking = self->route == ROUTE_PENDING_CALL;
	o.static_hosts = req->static_hosts;
	o.connection_attempt_delay_ms = req->attempt_delay_ms;
	o.connect_timeout_ms = req->connect_timeout_ms;
	o.open_timeout_ms = req->open_timeout_ms;
	int rc = hev2_connect(req->host, req->port, &o, &self->conn);
	if (rc != HEV2_OK) {
		/* No callback will come: let go of what it would have. */
		PyErr_Format(hev2ext_Error, "%s", hev2_last_error());
		comp->owner = NULL;
		hev2ext_completion_unref(comp);
		self->delivered = 1;
		self->status = rc;
		Py_DECREF(self); /* comp->owner's reference */
		return -1;
	}
	return 0;
}

static PyObject *hev2ext_connect(PyObject *module, PyObject *args, PyObject *kw)
{
	(void)module;
	struct request req;
	if (parse_request(args, kw, &req, NULL) < 0)
		return NULL;
	ConnectObject *self = connect_new(ROUTE_PENDING_CALL);
	if (!self)
		return NULL;
	if (connect_start(self, &req) < 0) {
		Py_DECREF(self);
		return NULL;
	}
	return (PyObject *)self;
}

/* The loop watches the handle's fd; readable when the race is decided. */
static int watch_fd(ConnectObject *self)
{
	int fd = hev2_fd(self->conn);
	if (fd < 0) {
		PyErr_Format(hev2ext_Error, "%s", hev2_last_error());
		return -1;
	}
	PyObject *cb = PyObject_GetAttrString((PyObject *)self, "_complete");
	PyObject *r = cb ? PyObject_CallMethod(self->loop, "add_reader", "iO", fd, cb) : NULL;
	Py_XDECREF(cb);
	if (!r)
		return -1;
	Py_DECREF(r);
	self->reader_fd = fd;
	return 0;
}

static PyObject *asyncio_module;

static PyObject *hev2ext_connect_async(PyObject *module, PyObject *args, PyObject *kw)
{
	(void)module;
	struct request req;
	const char *route_name = "fd";
	if (parse_request(args, kw, &req, &route_name) < 0)
		return NULL;
	enum route route;
	if (strcmp(route_name, "fd") == 0) {
		route = ROUTE_LOOP_FD;
	} else if (strcmp(route_name, "threadsafe") == 0) {
		route = ROUTE_LOOP_THREADSAFE;
	} else {
		PyErr_SetString(PyExc_ValueError, "route must be 'fd' or 'threadsafe'");
		return NULL;
	}
	if (!asyncio_module && !(asyncio_module = PyImport_ImportModule("asyncio")))
		return NULL;
	PyObject *loop = PyObject_CallMethod(asyncio_module, "get_running_loop", NULL);
	if (!loop)
		return NULL;
	PyObject *fut = PyObject_CallMethod(loop, "create_future", NULL);
	ConnectObject *self = fut ? connect_new(route) : NULL;
	if (!self) {
		Py_DECREF(loop);
		Py_XDECREF(fut);
		return NULL;
	}
	self->loop = loop;
	self->future = Py_NewRef(fut);
	/* Cancelling the future (the awaiting task) releases the handle. */
	PyObject *on_future = PyObject_GetAttrString((PyObject *)self, "_future_done");
	PyObject *r = on_future ? PyObject_CallMethod(fut, "add_done_callback", "O", on_future) : NULL;
	Py_XDECREF(on_future);
	if (!r || connect_start(self, &req) < 0)
		goto fail;
	Py_DECREF(r);
	r = NULL;
	if (route == ROUTE_LOOP_FD && watch_fd(self) < 0) {
		/* Started, not watched: the handle and its sockets go now. */
		PyObject *type, *value, *tb;
		PyErr_Fetch(&type, &value, &tb);
		PyObject *c = PyObject_CallMethod(fut, "cancel", NULL);
		Py_XDECREF(c);
		PyErr_Restore(type, value, tb);
		goto fail;
	}
	Py_DECREF(fut);
	return (PyObject *)self;
fail:
	Py_XDECREF(r);
	Py_DECREF(self);
	Py_DECREF(fut);
	return NULL;
}

static PyObject *hev2ext_stats_fn(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return hev2ext_stats();
}

static PyObject *hev2ext_shutdown_fn(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	hev2ext_shutdown();
	Py_RETURN_NONE;
}

/* For the tests: a connect whose completion meets a full pending-call
 * queue (see hev2ext_fill_pending_queue). Returns (calls that filled the
 * queue, the Connect). Call it on the main thread. */
static PyObject *hev2ext_testing_fill(PyObject *module, PyObject *args, PyObject *kw)
{
	(void)module;
	struct request req;
	if (parse_request(args, kw, &req, NULL) < 0)
		return NULL;
	/* Made first: allocating may run the garbage collector, and with it
	 * Python code that would run the queued calls. */
	ConnectObject *self = connect_new(ROUTE_PENDING_CALL);
	if (!self)
		return NULL;
	long added = hev2ext_fill_pending_queue();
	unsigned long long jobs = hev2ext_jobs_run();
	if (connect_start(self, &req) < 0) {
		Py_DECREF(self);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	hev2ext_wait_for_job(jobs, 10 * 1000000000LL);
	Py_END_ALLOW_THREADS
	PyObject *result = Py_BuildValue("lO", added, (PyObject *)self);
	Py_DECREF(self);
	return result;
}

static PyMethodDef module_methods[] = {
	{"connect", (PyCFunction)(void (*)(void))hev2ext_connect, METH_VARARGS | METH_KEYWORDS,
	 "connect(host, port, *, static_hosts=None, connection_attempt_delay=None,\n"
	 "        connect_timeout=None, open_timeout=None) -> Connect\n\n"
	 "Starts a Happy Eyeballs connect and returns at once. Its outcome is\n"
	 "delivered through a pending call (Py_AddPendingCall) on the main\n"
	 "thread: Connect.wait() returns the connected socket.socket."},
	{"connect_async", (PyCFunction)(void (*)(void))hev2ext_connect_async,
	 METH_VARARGS | METH_KEYWORDS,
	 "connect_async(host, port, *, ..., route='fd') -> Connect\n\n"
	 "The same connect for the running loop: await the Connect for the\n"
	 "socket.socket (non-blocking). Cancelling the awaiting task (or\n"
	 "connect.cancel()) cancels the connect.\n"
	 "route: 'fd' (the loop watches the handle's fd) or 'threadsafe' (the\n"
	 "library's callback calls loop.call_soon_threadsafe); see README.md."},
	{"stats", (PyCFunction)hev2ext_stats_fn, METH_NOARGS,
	 "Counters of the pending-call route (jobs, calls added, refused,\n"
	 "retried and run, nudges, deliveries)."},
	{"_shutdown", (PyCFunction)hev2ext_shutdown_fn, METH_NOARGS, NULL},
	{"_testing_fill_pending_calls", (PyCFunction)(void (*)(void))hev2ext_testing_fill,
	 METH_VARARGS | METH_KEYWORDS, NULL},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "hev2ext",
	.m_doc = "An example extension over libhev2: Happy Eyeballs connects whose\n"
	         "outcome reaches Python through a pending call, or an asyncio loop.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_hev2ext(void)
{
	/* The header this was compiled with must not be newer than the
	 * library the loader found (hev2.h: "Version"). */
	int lib = hev2_version();
	if (lib / 10000 != HEV2_VERSION_MAJOR || lib < HEV2_VERSION_NUM) {
		PyErr_Format(PyExc_ImportError,
		             "hev2ext was built against libhev2 %d.%d, the loaded library is %d.%d.%d",
		             HEV2_VERSION_MAJOR, HEV2_VERSION_MINOR, lib / 10000, lib / 100 % 100, lib % 100);
		return NULL;
	}
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (hev2ext_connect_init(m) < 0 ||
	    PyModule_AddIntConstant(m, "LIBRARY_VERSION", lib) < 0 ||
	    hev2ext_completion_init() < 0)
		goto fail;
	/* Before the interpreter goes: stop calling into it from the
	 * library's threads (see hev2ext_shutdown). */
	PyObject *atexit = PyImport_ImportModule("atexit");
	PyObject *shutdown = atexit ? PyObject_GetAttrString(m, "_shutdown") : NULL;
	PyObject *r = shutdown ? PyObject_CallMethod(atexit, "register", "O", shutdown) : NULL;
	Py_XDECREF(atexit);
	Py_XDECREF(shutdown);
	if (!r)
		goto fail;
	Py_DECREF(r);
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
