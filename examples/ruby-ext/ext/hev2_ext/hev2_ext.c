/* Hev2Ext: the module, and Hev2Ext.connect.
 *
 *   pending = Hev2Ext.connect("127.0.0.1", 8080, connect_timeout: 5)
 *   sock = pending.value      # a Socket, or raises Hev2Ext::Error
 *
 * connect starts the race with hev2_connect, played by a library thread,
 * and returns at once; the library calls hev2_ext_on_done when it is
 * decided, and the postponed job (completion.c) delivers it (pending.c). */
#include "hev2_ext.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>

VALUE hev2_ext_module, hev2_ext_error, hev2_ext_canceled;

static ID id_ipv4, id_ipv6;

/* A duration in seconds as the options' milliseconds, rounded up (0.0001 s
 * is 1 ms, not "none"); out of range raises, the rest is the library's
 * rule (a negative or too long duration is its HEV2_EOPTIONS). */
static int milliseconds(VALUE seconds, const char *name)
{
	double ms = ceil(NUM2DBL(seconds) * 1000.0);
	if (!(ms >= INT_MIN && ms <= INT_MAX))
		rb_raise(rb_eArgError, "Hev2Ext.connect: %s out of range", name);
	return (int)ms;
}

static int family(VALUE v)
{
	if (NIL_P(v))
		return AF_UNSPEC;
	if (SYMBOL_P(v) && SYM2ID(v) == id_ipv4)
		return AF_INET;
	if (SYMBOL_P(v) && SYM2ID(v) == id_ipv6)
		return AF_INET6;
	rb_raise(rb_eArgError, "Hev2Ext.connect: family must be nil, :ipv4 or :ipv6");
}

/* addresses: ["::1", "127.0.0.1"] -> static_hosts "HOST:[::1],127.0.0.1":
 * the host is then never looked up, its addresses are these. */
static VALUE static_hosts(VALUE host, VALUE addresses)
{
	Check_Type(addresses, T_ARRAY);
	if (RARRAY_LEN(addresses) == 0)
		rb_raise(rb_eArgError, "Hev2Ext.connect: addresses is empty");
	VALUE s = rb_str_dup(host);
	for (long i = 0; i < RARRAY_LEN(addresses); i++) {
		VALUE a = rb_ary_entry(addresses, i);
		StringValue(a);
		int v6 = memchr(RSTRING_PTR(a), ':', (size_t)RSTRING_LEN(a)) != NULL;
		rb_str_cat_cstr(s, i == 0 ? ":" : ",");
		if (v6)
			rb_str_cat_cstr(s, "[");
		rb_str_append(s, a);
		if (v6)
			rb_str_cat_cstr(s, "]");
	}
	return s;
}

/* The keywords into o; returns the static_hosts String (or nil), which
 * must stay alive until hev2_connect has copied it. */
static VALUE read_options(VALUE opts, VALUE host, hev2_options *o)
{
	static ID ids[6];
	if (!ids[0]) {
		const char *names[6] = {"connect_timeout", "open_timeout", "attempt_delay",
		                        "family", "addresses", "history"};
		for (int i = 0; i < 6; i++)
			ids[i] = rb_intern(names[i]);
	}
	VALUE v[6];
	rb_get_kwargs(opts, ids, 0, 6, v);
	if (v[0] != Qundef && !NIL_P(v[0]))
		o->connect_timeout_ms = milliseconds(v[0], "connect_timeout");
	if (v[1] != Qundef && !NIL_P(v[1]))
		o->open_timeout_ms = milliseconds(v[1], "open_timeout");
	if (v[2] != Qundef && !NIL_P(v[2]))
		o->connection_attempt_delay_ms = milliseconds(v[2], "attempt_delay");
	if (v[3] != Qundef)
		o->family = family(v[3]);
	VALUE statics = Qnil;
	if (v[4] != Qundef && !NIL_P(v[4])) {
		statics = static_hosts(host, v[4]);
		o->static_hosts = StringValueCStr(statics);
	}
	if (v[5] != Qundef)
		o->history = RTEST(v[5]) ? 1 : 0;
	return statics;
}

/* Hev2Ext.connect(host, port, connect_timeout: nil, open_timeout: nil,
 *                 attempt_delay: nil, family: nil, addresses: nil,
 *                 history: true) -> Hev2Ext::Pending
 *
 * Starts the race and returns at once. host: a name or an IP literal;
 * port: an Integer or a String. Durations in seconds. addresses: the IP
 * addresses of host (it is then not looked up). */
static VALUE ext_connect(int argc, VALUE *argv, VALUE self)
{
	VALUE host, port, opts;
	(void)self;
	rb_scan_args(argc, argv, "2:", &host, &port, &opts);
	const char *h = StringValueCStr(host);
	char port_text[24];
	const char *p = port_text;
	if (RB_INTEGER_TYPE_P(port))
		snprintf(port_text, sizeof port_text, "%lld", NUM2LL(port));
	else
		p = StringValueCStr(port);

	hev2_options o;
	hev2_options_init(&o);
	VALUE statics = NIL_P(opts) ? Qnil : read_options(opts, host, &o);

	VALUE pending = hev2_ext_pending_new();
	struct hev2_ext_completion *n = ALLOC(struct hev2_ext_completion);
	o.on_done = hev2_ext_on_done;
	o.on_done_data = n;

	/* The GVL stays held: hev2_connect returns at once, and the job cannot
	 * run (on this thread or another) before the Pending is registered
	 * below, even if a library thread has called on_done already. */
	hev2_conn c = 0;
	uint64_t started = hev2_ext_now_ns();
	int rc = hev2_connect(h, p, &o, &c);
	if (rc != HEV2_OK) { /* nothing started, no callback will come */
		VALUE e = hev2_ext_new_error(hev2_ext_error, hev2_last_error(), rc, hev2_last_errno());
		xfree(n);
		rb_exc_raise(e);
	}
	hev2_ext_pending_started(pending, c, started);
	/* After a connect that started: in a fork child hev2_connect refuses
	 * (HEV2_EFORKED), so no child starts a pump of its own that would read
	 * the doorbell it shares with its parent. A completion that comes
	 * first leaves the doorbell readable for it. */
	hev2_ext_start_pump();
	RB_GC_GUARD(host);
	RB_GC_GUARD(port);
	RB_GC_GUARD(statics);
	return pending;
}

/* Hev2Ext.stats -> Hash: the extension's counters (for tests and the
 * curious): connects started, callbacks, doorbell rings, pump wake-ups,
 * job runs (fewer than callbacks when they coalesce), deliveries. */
static VALUE ext_stats(VALUE self)
{
	(void)self;
	VALUE h = rb_hash_new();
	hev2_ext_pending_stats(h);
	hev2_ext_completion_stats(h);
	return h;
}

void Init_hev2_ext(void)
{
	rb_require("socket");
	id_ipv4 = rb_intern("ipv4");
	id_ipv6 = rb_intern("ipv6");

	hev2_ext_module = rb_define_module("Hev2Ext");
	hev2_ext_error = rb_define_class_under(hev2_ext_module, "Error", rb_eStandardError);
	rb_define_attr(hev2_ext_error, "status", 1, 0); /* HEV2_E... */
	rb_define_attr(hev2_ext_error, "errno", 1, 0);  /* e.g. ECONNREFUSED, or 0 */
	hev2_ext_canceled = rb_define_class_under(hev2_ext_module, "Canceled", hev2_ext_error);

	/* The library must be of the header's major version, and not older. */
	int version = hev2_version();
	if (version / 10000 != HEV2_VERSION_MAJOR || version < HEV2_VERSION_NUM)
		rb_raise(rb_eLoadError, "hev2_ext: built against hev2.h %d, loaded libhev2 %d",
		         HEV2_VERSION_NUM, version);
	/* The Go runtime's start-up (a few ms) now, not inside the first connect. */
	if (hev2_init() != HEV2_OK)
		rb_raise(rb_eLoadError, "hev2_ext: %s", hev2_last_error());

	rb_define_const(hev2_ext_module, "LIBRARY_VERSION", INT2FIX(version));
	rb_define_const(hev2_ext_module, "POSTPONED_JOB_API", rb_str_freeze(rb_str_new_cstr(hev2_ext_postponed_api)));
	rb_define_const(hev2_ext_module, "ECANCELED", INT2FIX(HEV2_ECANCELED));
	rb_define_const(hev2_ext_module, "ECONNECT", INT2FIX(HEV2_ECONNECT));
	rb_define_const(hev2_ext_module, "ETIMEOUT", INT2FIX(HEV2_ETIMEOUT));
	rb_define_module_function(hev2_ext_module, "connect", ext_connect, -1);
	rb_define_module_function(hev2_ext_module, "stats", ext_stats, 0);

	hev2_ext_completion_init();
	hev2_ext_pending_init();
}
