/* hev2-connect's view of the establishment report (report.c). */
#ifndef HEV2_CONNECT_REPORT_H
#define HEV2_CONNECT_REPORT_H

#include <stdio.h>

#include "hev2.h"

/* Appends `,"report":{...}` (the --json field, documented in
 * docs/traces.md) for c, a done handle that recorded its events; eai_text names a
 * getaddrinfo code ("" for 0). Returns hev2_report's status: nothing is
 * printed unless HEV2_OK. */
int print_report_json(FILE *f, hev2_conn c, const char *(*eai_text)(int));

/* Writes s as a JSON string: quotes, backslashes and control characters
 * escaped (addresses, DNS names, messages). */
void json_string(FILE *f, const char *s);

/* One line for -v: who won and why, the phases, each attempt's outcome. */
int print_report_summary(FILE *f, hev2_conn c);

#endif
