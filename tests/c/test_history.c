/* The network's history through the C ABI: ::1 drops SYNs and 127.0.0.1
 * accepts on the same port, under one static name. The first connect pays
 * the attempt delay and records IPv6's loss (hev2_attempt_info.lost); the
 * next ones go IPv4 first and say why (history_family, history_reason,
 * HEV2_EV_HISTORY), on both drives; options.history = 0, hev2_set_history
 * and hev2_clear_history restore IPv6 first; hev2_stats counts it all. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static char port[16];

/* connect_once connects dual.test and returns the first attempt's family
 * (AF_INET6 / AF_INET), filling *r. */
static int connect_once(const hev2_options *o, hev2_result_info *r, int *lost0, int *history_event)
{
	hev2_conn c;
	CHECK_RC(hev2_connect("dual.test", port, o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	memset(r, 0, sizeof *r);
	r->size = sizeof *r;
	CHECK_RC(hev2_result(c, r), HEV2_OK);
	CHECK_RC(r->status, HEV2_OK);
	CHECK_INT(r->family, AF_INET);
	hev2_attempt_info a = {.size = sizeof a};
	CHECK_RC(hev2_get_attempt(c, 0, &a), HEV2_OK);
	*lost0 = a.lost;
	*history_event = 0;
	for (int i = 0; i < r->n_events; i++) {
		hev2_event_info e = {.size = sizeof e};
		CHECK_RC(hev2_get_event(c, i, &e), HEV2_OK);
		if (e.kind == HEV2_EV_HISTORY) {
			CHECK_INT(i, 0);
			CHECK_INT(e.family, r->history_family);
			CHECK(strcmp(e.detail, r->history_reason) == 0 ||
			      strncmp(e.detail, r->history_reason, HEV2_DETAILLEN - 1) == 0);
			CHECK(strcmp(hev2_event_name(e.kind), "history") == 0);
			*history_event = 1;
		}
	}
	if (r->fd >= 0)
		close(r->fd);
	CHECK_RC(hev2_release(c), HEV2_OK);
	return a.family;
}

int main(void)
{
	if (!have_ipv6_loopback()) {
		printf("test_history: no ::1 on lo, nothing to race\n");
		return 1;
	}
	struct server s4;
	struct blackhole bh;
	if (fallback_start(&s4, &bh) != 0) {
		perror("listeners");
		return 1;
	}
	snprintf(port, sizeof port, "%d", bh.port);
	CHECK_RC(hev2_init(), HEV2_OK);
	CHECK_RC(hev2_clear_history(), HEV2_OK);
	hev2_stats_info s0 = {.size = sizeof s0};
	CHECK_RC(hev2_stats(&s0), HEV2_OK);
	CHECK_INT((int)s0.history_enabled, 1);
	CHECK(s0.history_max_entries > 0 && s0.history_entry_bytes > 0);

	hev2_options o;
	hev2_options_init(&o);
	CHECK_INT(o.history, 1);
	o.connection_attempt_delay_ms = 250; /* longer than a late driver: IPv4 first wins before ::1 starts */
	o.static_hosts = "dual.test:::1,127.0.0.1";
	o.record_events = 1;
	hev2_result_info r;
	int lost, ev;

	CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET6);
	CHECK_INT(lost, 1);
	CHECK_INT(r.history_family, 0);
	CHECK(r.history_reason[0] == 0 && ev == 0);

	for (int drive = HEV2_DRIVE_LIBRARY; drive <= HEV2_DRIVE_WAITER; drive++) {
		o.drive = drive;
		CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET);
		CHECK_INT(r.history_family, AF_INET);
		CHECK(strstr(r.history_reason, "IPv4 first: IPv6 to dual.test lost 1 race") == r.history_reason);
		CHECK_INT(r.n_attempts, 1);
		CHECK(ev);
	}
	o.drive = HEV2_DRIVE_LIBRARY;

	hev2_stats_info s1 = {.size = sizeof s1};
	CHECK_RC(hev2_stats(&s1), HEV2_OK);
	CHECK(s1.history_entries == 1);
	CHECK(s1.history_reordered - s0.history_reordered == 2);
	CHECK(s1.history_recorded - s0.history_recorded == 4); /* lost, 3 won */

	o.history = 0; /* this handle only */
	CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET6);
	CHECK_INT(r.history_family, 0);
	o.history = 1;

	CHECK_RC(hev2_set_history(0), HEV2_OK); /* the whole process */
	CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET6);
	hev2_stats_info s2 = {.size = sizeof s2};
	CHECK_RC(hev2_stats(&s2), HEV2_OK);
	CHECK_INT((int)s2.history_enabled, 0);
	CHECK_RC(hev2_set_history(1), HEV2_OK);
	/* Kept while off (those two connects neither read nor fed it)... */
	CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET);
	/* ...and forgotten when cleared. */
	CHECK_RC(hev2_clear_history(), HEV2_OK);
	CHECK_INT(connect_once(&o, &r, &lost, &ev), AF_INET6);

	/* A caller built against the 1.2 header (no history fields) gets the
	 * default: history on. */
	hev2_options old;
	hev2_options_init_size(&old, offsetof(hev2_options, nat64));
	old.connection_attempt_delay_ms = 250; /* longer than a late driver: IPv4 first wins before ::1 starts */
	old.static_hosts = o.static_hosts;
	hev2_conn c;
	CHECK_RC(hev2_connect("dual.test", port, &old, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, -1), HEV2_OK);
	hev2_result_info small;
	memset(&small, 0, sizeof small);
	small.size = offsetof(hev2_result_info, history_family); /* a 1.2 caller */
	CHECK_RC(hev2_result(c, &small), HEV2_OK);
	CHECK_INT(small.family, AF_INET);
	CHECK_INT(small.n_attempts, 1); /* IPv4 first: history on by default */
	if (small.fd >= 0)
		close(small.fd);
	hev2_release(c);

	server_stop(&s4);
	blackhole_stop(&bh);
	return check_done("test_history");
}
