/* The per-thread "last error" of hev2_last_error / hev2_last_errno.
 *
 * Recording is split from formatting. A failing call stores only what it
 * knows — the public function's name (a static string), the status, the
 * errno behind HEV2_ESYSTEM, and a detail text — and hev2_last_error()
 * composes "function: detail: strerror(errno)" when it is read. So the
 * recording done by the async-signal-safe functions (hev2_job_trigger,
 * hev2_jobs_fd, hev2_options_init) is a few stores and a bounded copy,
 * never snprintf or strerror.
 *
 * The Go side cannot know which public function it serves (hev2_connect
 * and hev2_connect_len share one export), so it hands its detail over as
 * "pending" (hev2c_error_detail); the shim then publishes it under the
 * function's name (hev2c_return). The pending detail only counts for the
 * status it was given with, and is dropped on every return, so a stale one
 * can never be attached to a later failure. Success leaves the published
 * record unchanged, as errno does.
 *
 * Thread-local storage is kept to a few words: the Go runtime makes this
 * library's TLS "static" (initial-exec), and a library loaded with dlopen
 * (Python's ctypes, Ruby's Fiddle) only gets the small static TLS surplus
 * glibc keeps — kilobytes of buffers there made dlopen fail ("cannot
 * allocate memory in static TLS block"). The text buffers are allocated
 * per thread on its first failure that needs one, and freed at thread
 * exit; the async-signal-safe paths only store a static text's address. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct buffers {
	char detail[HEV2_ERRMSGLEN];  /* the published detail, unless static */
	char pending[HEV2_ERRMSGLEN]; /* a Go export's detail, not yet claimed */
	char text[HEV2_ERRMSGLEN];    /* what hev2_last_error last returned */
};

/* The published record. */
static __thread const char *last_fn; /* NULL until a call failed here */
static __thread const char *last_detail; /* static text, bufs->detail or NULL */
static __thread int last_status, last_errno;
/* The pending detail of a Go export. */
static __thread int pending_set, pending_status, pending_errno;
static __thread struct buffers *bufs;

static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;

static void free_buffers(void *p)
{
	free(p);
	bufs = NULL;
}

static void make_key(void) { pthread_key_create(&bufs_key, free_buffers); }

/* buffers_of_thread allocates this thread's buffers once; NULL if out of
 * memory (the texts then fall back to hev2_strerror's). Never called from
 * the async-signal-safe paths. */
static struct buffers *buffers_of_thread(void)
{
	if (bufs)
		return bufs;
	pthread_once(&bufs_once, make_key);
	struct buffers *b = calloc(1, sizeof *b);
	if (b && pthread_setspecific(bufs_key, b) != 0) {
		free(b);
		b = NULL;
	}
	bufs = b;
	return b;
}

/* copy_text is a bounded copy of at most n bytes of src (stopping at a NUL). */
static void copy_text(char *dst, size_t size, const char *src, size_t n)
{
	if (n > size - 1)
		n = size - 1;
	for (size_t i = 0; i < n && src[i]; i++, dst++)
		*dst = src[i];
	*dst = 0;
}

static int publish(const char *fn, int status, int err, const char *detail)
{
	last_fn = fn;
	last_status = status;
	last_errno = status == HEV2_ESYSTEM ? err : 0;
	last_detail = detail;
	/* The header promises errno for HEV2_ESYSTEM: a Go export cannot set
	 * the caller's errno itself. */
	if (status == HEV2_ESYSTEM && err)
		errno = err;
	return status;
}

int hev2c_fail(const char *fn, int status, int err, const char *detail)
{
	return publish(fn, status, err, detail);
}

int hev2c_failf(const char *fn, int status, const char *fmt, ...)
{
	struct buffers *b = buffers_of_thread();
	if (!b)
		return publish(fn, status, 0, NULL);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->detail, sizeof b->detail, fmt, ap);
	va_end(ap);
	return publish(fn, status, 0, b->detail);
}

void hev2c_error_detail(int status, int err, const char *detail, size_t n)
{
	struct buffers *b = buffers_of_thread();
	if (b)
		copy_text(b->pending, sizeof b->pending, detail ? detail : "", detail ? n : 0);
	pending_status = status;
	pending_errno = err;
	pending_set = b != NULL;
}

int hev2c_return(const char *fn, int rc)
{
	int had = pending_set;
	pending_set = 0;
	if (rc >= 0)
		return rc;
	if (had && pending_status == rc && bufs) {
		memcpy(bufs->detail, bufs->pending, sizeof bufs->detail);
		return publish(fn, rc, pending_errno, bufs->detail);
	}
	return publish(fn, rc, 0, NULL);
}

/* append adds s to text at *n, cut to fit, NUL-terminated. */
static void append(char *text, size_t *n, const char *s)
{
	while (*s && *n < HEV2_ERRMSGLEN - 1)
		text[(*n)++] = *s++;
	text[*n] = 0;
}

const char *hev2_last_error(void)
{
	if (!last_fn)
		return "";
	const char *detail = last_detail && *last_detail ? last_detail : hev2_strerror(last_status);
	struct buffers *b = buffers_of_thread();
	if (!b)
		return detail;
	/* Composed piece by piece, cut at HEV2_ERRMSGLEN - 1 characters. */
	size_t n = 0;
	append(b->text, &n, last_fn);
	append(b->text, &n, ": ");
	append(b->text, &n, detail);
	if (last_errno) {
		char eb[256];
		append(b->text, &n, ": ");
		append(b->text, &n, strerror_r(last_errno, eb, sizeof eb));
	}
	return b->text;
}

int hev2_last_errno(void) { return last_errno; }
