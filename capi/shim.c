/* The public symbols of libhev2.so (the version script exports these and
 * nothing else). Each one that needs Go first checks, in C, that this is
 * not a fork child (see fork_check.c), then handles what is cheaper and
 * safer in C — the size-versioned structs, the thread-local errmsg buffer —
 * and calls the Go export. Pure-C functions never enter Go. Every status
 * a function returns goes through last_error.c: a failure becomes the
 * thread's hev2_last_error, under the public function's name. */
#include <errno.h>
#include <string.h>

#include "_cgo_export.h"
#include "internal.h"
#include "options_gen.h"

/* A size field beyond this is garbage (an uninitialised struct), not a
 * future version: refuse it rather than read that far. */
#define HEV2_MAX_STRUCT_SIZE 4096

#define FORKED_TEXT                                                            \
	"called in a fork() child of the process that loaded libhev2 (its Go " \
	"runtime does not survive fork)"

#define CHECK_FORK(fn)                                                         \
	do {                                                                   \
		if (hev2c_forked())                                            \
			return hev2c_fail(fn, HEV2_EFORKED, 0, FORKED_TEXT);   \
	} while (0)

int hev2_version(void) { return HEV2_VERSION_NUM; }

int hev2_init(void)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_init());
}

int hev2_set_max_handles(int max)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_set_max_handles(max));
}

int hev2_set_history(int on)
{
	if (on != 0 && on != 1)
		return hev2c_failf(__func__, HEV2_EINVAL, "on must be 0 or 1, not %d", on);
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_set_history(on));
}

int hev2_clear_history(void)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_clear_history());
}

/* out_begin checks a caller's size-versioned output struct (what names the
 * argument in the error text). */
static int out_begin(const char *fn, const char *what, const size_t *size_field,
                     size_t v1)
{
	if (!size_field)
		return hev2c_failf(fn, HEV2_EINVAL, "%s is NULL", what);
	if (*size_field < v1 || *size_field > HEV2_MAX_STRUCT_SIZE)
		return hev2c_failf(fn, HEV2_EINVAL,
		                   "%s->size %zu out of range [%zu, %d] (set it to sizeof the struct)",
		                   what, *size_field, v1, HEV2_MAX_STRUCT_SIZE);
	return HEV2_OK;
}

/* out_end copies the library's full struct into the caller's, which may be
 * smaller (older header) or larger (newer header: the unknown tail is
 * zeroed); the caller's size field is kept. */
static void out_end(void *dst, const void *src, size_t ours)
{
	size_t theirs = *(const size_t *)dst;
	size_t n = theirs < ours ? theirs : ours;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       n - sizeof(size_t));
	if (theirs > ours)
		memset((char *)dst + ours, 0, theirs - ours);
}

/* FILL_OUT is the body of every call that fills a caller's size-versioned
 * struct of type T: check it (out_begin), let the Go call `fill` complete a
 * zeroed full-size copy named `mine`, copy that out (out_end). */
#define FILL_OUT(T, out, what, v1, fill)                                      \
	do {                                                                  \
		int rc_ = out_begin(__func__, what, (out) ? &(out)->size : NULL, v1); \
		if (rc_)                                                      \
			return rc_;                                           \
		CHECK_FORK(__func__);                                         \
		T mine;                                                       \
		memset(&mine, 0, sizeof mine);                                \
		mine.size = sizeof mine;                                      \
		rc_ = hev2c_return(__func__, fill);                           \
		if (rc_)                                                      \
			return rc_;                                           \
		out_end((out), &mine, sizeof mine);                           \
		return HEV2_OK;                                               \
	} while (0)

int hev2_stats(hev2_stats_info *s)
{
	int rc = out_begin(__func__, "s", s ? &s->size : NULL, HEV2_STATS_SIZE_V1);
	if (rc)
		return rc;
	CHECK_FORK(__func__);
	hev2_stats_info mine;
	memset(&mine, 0, sizeof mine);
	mine.size = sizeof mine;
	rc = hev2c_return(__func__, hev2go_stats(&mine));
	if (rc)
		return rc;
	mine.jobs_registered = hev2c_jobs_registered();
	mine.jobs_triggered = hev2c_jobs_triggered();
	mine.jobs_run = hev2c_jobs_run();
	out_end(s, &mine, sizeof mine);
	return HEV2_OK;
}

/* The defaults are written only as far as the caller's struct goes: a
 * program built against an older header has a shorter struct. */
int hev2_options_init_size(hev2_options *o, size_t size)
{
	if (!o)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "o is NULL");
	if (size < HEV2_OPTIONS_SIZE_V1 || size > HEV2_MAX_STRUCT_SIZE)
		return hev2c_failf(__func__, HEV2_EINVAL, "size %zu out of range [%zu, %d]",
		                   size, HEV2_OPTIONS_SIZE_V1, HEV2_MAX_STRUCT_SIZE);
	hev2_options defaults;
	memset(&defaults, 0, sizeof defaults);
	defaults.size = size;
	hev2c_plain_defaults(&defaults); /* fast_fallback, history ... (generated) */
	defaults.family = AF_UNSPEC;
	defaults.resolver = HEV2_RESOLVER_DEFAULT;
	defaults.drive = HEV2_DRIVE_LIBRARY;
	memset(o, 0, size);
	memcpy(o, &defaults, size < sizeof defaults ? size : sizeof defaults);
	return HEV2_OK;
}

/* The 1.0/1.1 entry point: its callers' struct has 1.0's layout. */
int(hev2_options_init)(hev2_options *o)
{
	if (!o)
		return hev2c_fail("hev2_options_init", HEV2_EINVAL, 0, "o is NULL");
	return hev2_options_init_size(o, HEV2_OPTIONS_SIZE_V1);
}

/* options_in copies a caller's options (NULL: defaults) into a full-size
 * struct: a caller built against an older header (a smaller size, at least
 * 1.0's) gets the defaults for the fields it does not know; a larger size
 * is accepted only if the fields this library does not know are all zero
 * (asking for nothing it cannot give). */
static int options_in(const char *fn, const hev2_options *o, hev2_options *mine)
{
	hev2_options_init(mine);
	if (!o)
		return HEV2_OK;
	if (o->size < HEV2_OPTIONS_SIZE_V1 || o->size > HEV2_MAX_STRUCT_SIZE)
		return hev2c_failf(fn, HEV2_EOPTIONS,
		                   "options size %zu out of range [%zu, %d] (fill them with hev2_options_init)",
		                   o->size, HEV2_OPTIONS_SIZE_V1, HEV2_MAX_STRUCT_SIZE);
	if (o->size < sizeof *mine && o->size != HEV2_OPTIONS_SIZE_V1 &&
	    o->size != HEV2_OPTIONS_SIZE_V1_2)
		return hev2c_failf(fn, HEV2_EOPTIONS,
		                   "options size %zu is not the size of any header's struct (%zu for 1.0-1.1, %zu for 1.2, %zu now)",
		                   o->size, HEV2_OPTIONS_SIZE_V1, HEV2_OPTIONS_SIZE_V1_2, sizeof *mine);
	for (size_t i = sizeof *mine; i < o->size; i++)
		if (((const unsigned char *)o)[i] != 0)
			return hev2c_failf(fn, HEV2_EOPTIONS,
			                   "options byte %zu is set: a field newer than this library (%zu bytes)",
			                   i, sizeof *mine);
	memcpy(mine, o, o->size < sizeof *mine ? o->size : sizeof *mine);
	mine->size = sizeof *mine;
	return HEV2_OK;
}

/* start_connect is both hev2_connect and hev2_connect_len; fn names the one the
 * caller used. */
static int start_connect(const char *fn, const char *host, size_t host_len,
                         const char *port, const hev2_options *o,
                         hev2_conn *out)
{
	if (!out)
		return hev2c_fail(fn, HEV2_EINVAL, 0, "out is NULL");
	*out = 0;
	CHECK_FORK(fn);
	hev2_options mine;
	int rc = options_in(fn, o, &mine);
	if (rc)
		return rc;
	return hev2c_return(fn, hev2go_connect((char *)host, host_len, (char *)port, &mine, out));
}

int hev2_connect_len(const char *host, size_t host_len, const char *port,
                     const hev2_options *o, hev2_conn *out)
{
	return start_connect(__func__, host, host_len, port, o, out);
}

int hev2_connect_wait(const char *host, const char *port, const hev2_options *o,
                      int timeout_ms, hev2_conn *out, int *fd)
{
	if (!out)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "out is NULL");
	*out = 0;
	if (!fd)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "fd is NULL");
	*fd = -1;
	CHECK_FORK(__func__);
	hev2_options mine;
	int rc = options_in(__func__, o, &mine);
	if (rc)
		return rc;
	mine.drive = HEV2_DRIVE_WAITER;
	size_t n = host ? strnlen(host, HEV2_MAX_HOSTLEN + 8) : 0;
	return hev2c_return(__func__, hev2go_connect_wait((char *)host, n, (char *)port, &mine, timeout_ms, out, fd));
}

int hev2_connect(const char *host, const char *port, const hev2_options *o,
                 hev2_conn *out)
{
	/* Bounded: a huge string is refused as too long without reading it all. */
	size_t n = host ? strnlen(host, HEV2_MAX_HOSTLEN + 8) : 0;
	return start_connect(__func__, host, n, port, o, out);
}

int hev2_wait(hev2_conn c, int timeout_ms)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_wait(c, timeout_ms));
}

int hev2_fd(hev2_conn c)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_fd(c));
}

int hev2_cancel(hev2_conn c)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_cancel(c));
}

int hev2_release(hev2_conn c)
{
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_release(c));
}

int hev2_result(hev2_conn c, hev2_result_info *r)
{
	FILL_OUT(hev2_result_info, r, "r", HEV2_RESULT_SIZE_V1, hev2go_result(c, &mine));
}

int hev2_get_attempt(hev2_conn c, int i, hev2_attempt_info *a)
{
	FILL_OUT(hev2_attempt_info, a, "a", HEV2_ATTEMPT_SIZE_V1, hev2go_get_attempt(c, i, &mine));
}

int hev2_get_event(hev2_conn c, int i, hev2_event_info *e)
{
	FILL_OUT(hev2_event_info, e, "e", HEV2_EVENT_SIZE_V1, hev2go_get_event(c, i, &mine));
}

int hev2_report(hev2_conn c, hev2_report_info *r)
{
	FILL_OUT(hev2_report_info, r, "r", HEV2_REPORT_SIZE_V1, hev2go_report(c, &mine));
}

int hev2_report_lookup(hev2_conn c, int i, hev2_report_lookup_info *l)
{
	FILL_OUT(hev2_report_lookup_info, l, "l", HEV2_REPORT_LOOKUP_SIZE_V1, hev2go_report_lookup(c, i, &mine));
}

int hev2_report_attempt(hev2_conn c, int i, hev2_report_attempt_info *a)
{
	FILL_OUT(hev2_report_attempt_info, a, "a", HEV2_REPORT_ATTEMPT_SIZE_V1, hev2go_report_attempt(c, i, &mine));
}

int hev2_report_service_lookup(hev2_conn c, int i, hev2_report_service_lookup_info *l)
{
	FILL_OUT(hev2_report_service_lookup_info, l, "l", HEV2_REPORT_SERVICE_LOOKUP_SIZE_V1,
	         hev2go_report_service_lookup(c, i, &mine));
}

int hev2_report_service(hev2_conn c, int i, hev2_report_service_info *s)
{
	FILL_OUT(hev2_report_service_info, s, "s", HEV2_REPORT_SERVICE_SIZE_V1, hev2go_report_service(c, i, &mine));
}

int hev2_report_skipped(hev2_conn c, int i, hev2_report_skipped_info *s)
{
	FILL_OUT(hev2_report_skipped_info, s, "s", HEV2_REPORT_SKIPPED_SIZE_V1, hev2go_report_skipped(c, i, &mine));
}

int hev2_report_replaced(hev2_conn c, int i, hev2_report_replaced_info *r)
{
	FILL_OUT(hev2_report_replaced_info, r, "r", HEV2_REPORT_REPLACED_SIZE_V1, hev2go_report_replaced(c, i, &mine));
}

const char *hev2_errmsg(hev2_conn c)
{
	static __thread char buf[HEV2_ERRMSGLEN];
	if (hev2c_forked())
		return hev2_strerror(HEV2_EFORKED);
	buf[0] = 0;
	int rc = hev2go_errmsg(c, buf, sizeof buf);
	if (rc)
		return hev2_strerror(rc);
	return buf;
}

int hev2_write_trace(hev2_conn c, int format, int fd, const char *path)
{
	if (format < HEV2_TRACE_SVG || format > HEV2_TRACE_CHROME)
		return hev2c_failf(__func__, HEV2_EINVAL, "format %d unknown (HEV2_TRACE_SVG, _QLOG or _CHROME)", format);
	if (path && fd != -1)
		return hev2c_failf(__func__, HEV2_EINVAL, "both a path and fd %d: give one (fd -1 with a path)", fd);
	if (!path && fd < 0)
		return hev2c_failf(__func__, HEV2_EINVAL, "path is NULL and fd %d is not a file descriptor", fd);
	if (path && !*path)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "path is empty");
	CHECK_FORK(__func__);
	return hev2c_return(__func__, hev2go_write_trace(c, format, fd, (char *)path, path ? strlen(path) : 0));
}

int hev2_service(hev2_conn c, hev2_service_info *s)
{
	int rc = out_begin(__func__, "s", s ? &s->size : NULL, HEV2_SERVICE_SIZE_V1);
	if (rc)
		return rc;
	if (s->ech_size > 0 && !s->ech)
		return hev2c_fail(__func__, HEV2_EINVAL, 0, "s->ech is NULL and s->ech_size is not 0");
	CHECK_FORK(__func__);
	/* The caller's ECH buffer is an input: it goes in with the struct the
	 * library fills, and the library copies into it directly. */
	hev2_service_info mine;
	memset(&mine, 0, sizeof mine);
	mine.size = sizeof mine;
	mine.ech = s->ech;
	mine.ech_size = s->ech_size;
	rc = hev2c_return(__func__, hev2go_service(c, &mine));
	if (rc)
		return rc;
	out_end(s, &mine, sizeof mine);
	return HEV2_OK;
}
