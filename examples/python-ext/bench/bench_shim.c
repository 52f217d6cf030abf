/* bench_shim.so: the packaged binding's finish moment, stamped in C.
 *
 * bench_latency.py puts these in place of two of the binding's ctypes
 * functions (bindings/python calls them by name): each calls the library's
 * own function and records, with CLOCK_MONOTONIC, when the library had the
 * connect finished, as hev2ext's completion callback records it for its
 * own forms:
 *   shim_connect_wait  hev2.create_connection's hev2_connect_wait: the race
 *                      is decided on the calling thread, so the finish is
 *                      the moment the call returns;
 *   shim_connect_len   hev2.aio's hev2_connect_len, with an on_done added
 *                      that stamps; a race decided inside the call (a
 *                      loopback connect) is finished when the call
 *                      returns, the earlier of the two. */
#define _GNU_SOURCE
#include <hev2.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static atomic_llong finish_ns;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The earliest stamp since the last reset wins. */
static void stamp(long long t)
{
	long long seen = atomic_load(&finish_ns);
	while ((seen == 0 || t < seen) && !atomic_compare_exchange_weak(&finish_ns, &seen, t))
		;
}

long long shim_finish_ns(void) { return atomic_load(&finish_ns); }

int shim_connect_wait(const char *host, const char *port, const hev2_options *o, int timeout_ms,
                      hev2_conn *out, int *fd)
{
	atomic_store(&finish_ns, 0);
	int rc = hev2_connect_wait(host, port, o, timeout_ms, out, fd);
	stamp(now_ns());
	return rc;
}

static void on_done(hev2_conn c, int status, void *data)
{
	(void)c;
	(void)status;
	(void)data;
	stamp(now_ns());
}

int shim_connect_len(const char *host, size_t host_len, const char *port, const hev2_options *o,
                     hev2_conn *out)
{
	hev2_options mine;
	hev2_options_init(&mine);
	if (o) {
		memcpy(&mine, o, o->size < sizeof mine ? o->size : sizeof mine);
		mine.size = sizeof mine;
	}
	mine.on_done = on_done;
	atomic_store(&finish_ns, 0);
	int rc = hev2_connect_len(host, host_len, port, &mine, out);
	long long returned = now_ns();
	if (rc == HEV2_OK && hev2_wait(*out, 0) == HEV2_OK)
		stamp(returned);
	return rc;
}
