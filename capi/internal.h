/* Declarations shared by the C side of capi (the public shims, the job
 * machinery, the fork check) and the Go side (through cgo's preamble).
 * Nothing here is exported: the version script keeps only hev2.h's API. */
#ifndef HEV2_CAPI_INTERNAL_H
#define HEV2_CAPI_INTERNAL_H

#include <stddef.h>

#include "hev2.h"

/* The smallest sizes the library accepts in a caller's size field: the
 * structs as version 1.0 of the header defined them. They never change;
 * later fields are appended after these. */
#define HEV2_OPTIONS_SIZE_V1 offsetof(hev2_options, drive)
/* 1.2's hev2_options: up to drive. */
#define HEV2_OPTIONS_SIZE_V1_2 offsetof(hev2_options, nat64)
#define HEV2_RESULT_SIZE_V1  offsetof(hev2_result_info, synthesized_from)
#define HEV2_ATTEMPT_SIZE_V1 offsetof(hev2_attempt_info, synthesized_from)
#define HEV2_EVENT_SIZE_V1   sizeof(hev2_event_info)
/* Since 1.3: the report's structs, as 1.3 defined them. */
#define HEV2_REPORT_SIZE_V1         offsetof(hev2_report_info, https_state)
#define HEV2_REPORT_LOOKUP_SIZE_V1  sizeof(hev2_report_lookup_info)
#define HEV2_REPORT_ATTEMPT_SIZE_V1 offsetof(hev2_report_attempt_info, service)
/* Since 1.5: the report's HTTPS part. */
#define HEV2_REPORT_SERVICE_LOOKUP_SIZE_V1 sizeof(hev2_report_service_lookup_info)
#define HEV2_REPORT_SERVICE_SIZE_V1        sizeof(hev2_report_service_info)
#define HEV2_REPORT_SKIPPED_SIZE_V1        sizeof(hev2_report_skipped_info)
#define HEV2_REPORT_REPLACED_SIZE_V1       sizeof(hev2_report_replaced_info)
#define HEV2_SERVICE_SIZE_V1        sizeof(hev2_service_info)
/* hev2_stats_info grew (the lookups_* fields) after bindings were written
 * against its first layout: that shorter size stays accepted. */
#define HEV2_STATS_SIZE_V1   offsetof(hev2_stats_info, lookups_in_flight)

/* fork_check.c */
int hev2c_forked(void);

/* last_error.c: the thread's last error (hev2_last_error). fn is the public
 * function's name, a static string. hev2c_fail/hev2c_failf publish at once
 * and return status (hev2c_fail is async-signal-safe; err is the errno of a
 * HEV2_ESYSTEM). The Go exports leave their detail pending with
 * hev2c_error_detail; the shim passes every Go result through
 * hev2c_return, which publishes a failure under fn and returns rc. */
int hev2c_fail(const char *fn, int status, int err, const char *detail);
int hev2c_failf(const char *fn, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hev2c_error_detail(int status, int err, const char *detail, size_t n);
int hev2c_return(const char *fn, int rc);

/* jobs.c: a registered job's hev2_job_register flags, -1 for an id that is
 * not registered (hev2_options.job is checked at connect), and the
 * counters of hev2_stats. */
int hev2c_job_flags(hev2_job j);
uint64_t hev2c_jobs_registered(void);
uint64_t hev2c_jobs_triggered(void);
uint64_t hev2c_jobs_run(void);

/* sys.c: raw system calls, each retrying EINTR. */
int hev2c_eventfd_new(void);             /* -1 and errno on failure */
void hev2c_eventfd_signal(int fd);       /* makes fd readable */

/* glue.c: what Go cannot do itself (call a C function pointer, fill a
 * union-laden struct). */
void hev2c_call_done_u(uintptr_t fn, hev2_conn c, int status, uintptr_t data);
void hev2c_fill_sockaddr(hev2_result_info *r, const unsigned char *addr,
                         int addr_len, int port, uint32_t scope_id);

#endif
