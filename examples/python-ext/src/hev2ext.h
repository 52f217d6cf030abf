/* hev2ext: an example CPython extension over libhev2 (see README.md).
 *
 * Three files: completion.c is the C side of a finished connect (the
 * library's callback, the extension's own queue, the postponed job that
 * asks the interpreter for a pending call, and the thread that makes sure
 * the interpreter notices it); connect.c is the Connect type (the pending
 * object Python holds, its delivery into a socket.socket or an exception);
 * module.c is the module (connect, connect_async, stats, shutdown). */
#ifndef HEV2EXT_H
#define HEV2EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <hev2.h>
#include <stdatomic.h>
#include <stdint.h>

/* How a finished connect reaches Python. */
enum route {
	/* on_done queues it; the postponed job asks for a pending call
	 * (Py_AddPendingCall), which the main thread runs. */
	ROUTE_PENDING_CALL,
	/* the asyncio loop watches the handle's fd (loop.add_reader). */
	ROUTE_LOOP_FD,
	/* on_done takes the GIL and calls loop.call_soon_threadsafe. */
	ROUTE_LOOP_THREADSAFE,
};

struct ConnectObject;

/* One connect, from hev2_connect until both the library's callback and the
 * Connect object are done with it (refs counts them: it is the callback's
 * user data, which must outlive the callback, and the Connect reads its
 * stamp). Nothing here is a Python object except owner. */
struct completion {
	struct completion *prev, *next; /* in the ready queue; queue lock */
	int queued;                     /* in the ready queue; queue lock */
	atomic_int refs;
	enum route route;
	int status;                 /* the callback's status */
	atomic_llong finished_ns;   /* CLOCK_MONOTONIC when the callback ran */
	/* A strong reference that keeps the Connect alive until its outcome
	 * is delivered, even if Python dropped it: touched with the GIL
	 * only (see connect.c for who lets it go on each route). */
	struct ConnectObject *owner;
};

typedef struct ConnectObject {
	PyObject_HEAD
	hev2_conn conn;          /* 0 once released */
	struct completion *comp; /* ours until dealloc */
	enum route route;
	int delivered;           /* the outcome reached Python (or was abandoned) */
	int status;              /* HEV2_OK or an outcome code, once delivered */
	PyObject *sock;          /* the socket.socket that owns the fd */
	PyObject *error;         /* the exception of a failure */
	PyObject *callbacks;     /* add_done_callback's list, or NULL */
	PyObject *loop, *future; /* the asyncio forms, until delivered */
	int reader_fd;           /* hev2_fd watched by the loop, or -1 */
	long long delivered_ns;  /* CLOCK_MONOTONIC when delivery began */
} ConnectObject;

/* completion.c */
long long hev2ext_now_ns(void);
int hev2ext_completion_init(void); /* registers the job; -1 with an exception */
struct completion *hev2ext_completion_new(enum route route, ConnectObject *owner);
void hev2ext_completion_unref(struct completion *comp);
hev2_done_fn hev2ext_done_fn(enum route route);
hev2_job hev2ext_job(void);
int hev2ext_claim(struct completion *comp); /* 1: taken out of the queue by the caller */
uint64_t hev2ext_generation(void);
void hev2ext_wait_for_change(uint64_t seen, long long max_ns); /* without the GIL */
void hev2ext_changed(void); /* wakes every thread in hev2ext_wait_for_change */
int hev2ext_enter_python(void); /* 0 once the interpreter is shutting down */
void hev2ext_leave_python(void);
void hev2ext_shutdown(void); /* with the GIL; idempotent */
PyObject *hev2ext_stats(void);
long hev2ext_fill_pending_queue(void); /* tests only */
unsigned long long hev2ext_jobs_run(void);
void hev2ext_wait_for_job(unsigned long long before, long long max_ns); /* without the GIL */

/* connect.c */
extern PyTypeObject hev2ext_ConnectType;
extern PyObject *hev2ext_Error, *hev2ext_CancelledError;
int hev2ext_connect_init(PyObject *module); /* -1 with an exception */
void hev2ext_deliver(ConnectObject *self); /* with the GIL; exactly once */
void hev2ext_complete_threadsafe(struct completion *comp); /* with the GIL */

#endif
