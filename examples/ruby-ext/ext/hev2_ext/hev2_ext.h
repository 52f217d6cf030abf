/* Hev2Ext: a Ruby C extension that links libhev2 (found by pkg-config) and
 * hands each finished connect to Ruby through Ruby's own postponed jobs.
 *
 * The files, each with one purpose:
 *   hev2_ext.c    the module: Hev2Ext.connect (arguments -> hev2_options,
 *                 hev2_connect), Hev2Ext.stats, Init_hev2_ext
 *   completion.c  the path from a library thread into the interpreter: the
 *                 C trigger callback, the queue, the postponed job (Ruby
 *                 3.3+ and 3.1), the pump thread that guarantees a safe point
 *   pending.c     Hev2Ext::Pending, and what the job does with one finished
 *                 connect: the result, a real Socket, waking the waiters
 */
#ifndef HEV2_EXT_H
#define HEV2_EXT_H

#include <ruby.h>
#include <stdint.h>

#include <hev2.h>

/* One finished connect on its way from a library thread to the postponed
 * job. Allocated by Hev2Ext.connect, filled and queued by the C trigger
 * callback, freed by the job once delivered. */
struct hev2_ext_completion {
	struct hev2_ext_completion *next;
	hev2_conn conn;
	int status;           /* as the library gave it to the callback */
	uint64_t finished_ns; /* CLOCK_MONOTONIC in the callback */
};

extern VALUE hev2_ext_module;        /* Hev2Ext */
extern VALUE hev2_ext_error;         /* Hev2Ext::Error */
extern VALUE hev2_ext_canceled;      /* Hev2Ext::Canceled < Hev2Ext::Error */

/* CLOCK_MONOTONIC in nanoseconds: the clock of
 * Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond). */
uint64_t hev2_ext_now_ns(void);

/* An exception of class klass (Hev2Ext::Error or a subclass) carrying the
 * library's status and an errno (0: none). */
VALUE hev2_ext_new_error(VALUE klass, const char *message, int status, int sys_errno);

/* completion.c */
void hev2_ext_completion_init(void);
void hev2_ext_on_done(hev2_conn c, int status, void *data); /* a hev2_done_fn */
void hev2_ext_start_pump(void);
void hev2_ext_completion_stats(VALUE hash);
extern const char hev2_ext_postponed_api[];

/* pending.c */
void hev2_ext_pending_init(void);
VALUE hev2_ext_pending_new(void);
void hev2_ext_pending_started(VALUE pending, hev2_conn c, uint64_t started_ns);
void hev2_ext_deliver(struct hev2_ext_completion *n); /* in the job, GVL held */
void hev2_ext_pending_stats(VALUE hash);

#endif
