/*
 * hev2-connect — connect once with libhev2 and show how the race went.
 *
 *   hev2-connect [options] HOST PORT
 *   hev2-connect --stdio [options] HOST PORT
 *   hev2-connect --version
 *
 * Prints a one-line summary (or, with --json, the scenario-client JSON line,
 * with the race's establishment report as its "report" field) and exits 0
 * when connected, 1 when the connection failed, 2 on a usage error. -v
 * prints the race as a timeline and the report's summary line; --svg,
 * --qlog and --chrome-trace write it as a picture and as standard traces
 * (hev2_write_trace). Ctrl-C cancels the connection
 * cleanly: the signal handler only triggers a postponed job, and the job
 * (run from the main loop, a safe point) calls hev2_cancel.
 *
 * --stdio relays stdin and stdout through the connection (relay.c), as an
 * ssh ProxyCommand does: nothing but the peer's bytes goes to stdout, and
 * exit 3 says the relay broke after the connection was made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hev2.h"
#include "relay.h"
#include "report.h"

enum { EXIT_CONNECTED = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_RELAY = 3 };

static const char usage_text[] =
	"usage: hev2-connect [options] HOST PORT\n"
	"       hev2-connect --stdio [options] HOST PORT\n"
	"       hev2-connect --version\n"
	"      --stdio                   relay stdin/stdout through the connection (like nc;\n"
	"                                for ssh -o ProxyCommand='hev2-connect --stdio %h %p')\n"
	"  -v, --verbose                 print the race as a timeline\n"
	"      --json                    print one JSON line (scenario-client format)\n"
	"      --resolve NAME:ADDR[,ADDR]  static addresses for NAME (repeatable)\n"
	"      --resolver system|builtin|default\n"
	"      --nameserver IP[:PORT]    built-in resolver's server (repeatable)\n"
	"      --resolv-timeout MS       --connect-timeout MS   --open-timeout MS\n"
	"      --resolution-delay MS     (RFC 8305 default 50)\n"
	"      --attempt-delay MS        connection attempt delay (default 250)\n"
	"      --first-family-count N    (default 1)\n"
	"      --family 4|6              only IPv4 or only IPv6\n"
	"      --local ADDR              bind to this local address\n"
	"      --local-port PORT\n"
	"      --no-fast-fallback        serial attempts (Socket.tcp fast_fallback: false)\n"
	"      --nodelay                 TCP_NODELAY on the socket\n"
	"      --keepalive MS            SO_KEEPALIVE with this idle time\n"
	"      --blocking                return the socket in blocking mode\n"
	"      --no-nat64                never reach IPv4 through a NAT64 prefix (on by\n"
	"                                default on a host with IPv6 and no IPv4 route)\n"
	"      --no-history              neither read nor feed this network's history of\n"
	"                                which family works (hev2_options.history = 0)\n"
	"      --https-rr                ask the HTTPS record (RFC 9460) too: its services'\n"
	"                                ports, ALPN, address hints and ECH (Happy Eyeballs v3)\n"
	"      --alpn LIST               the protocols your TLS offers (default h2,http/1.1):\n"
	"                                a service with none of them is skipped\n"
	"      --ech                     wait for the HTTPS answer, and never fall back to\n"
	"                                the origin's addresses when every service has ECH\n"
	"      --repeat N                connect N times, one after the other (1..1000);\n"
	"                                --json adds \"runs\", every connect's outcome\n"
	"      --drive library|waiter    who plays the race: a library thread\n"
	"                                (default) or this thread, inside hev2_wait\n"
	"      --svg FILE                write the race as a waterfall picture (SVG)\n"
	"      --qlog FILE               write the race as qlog (JSON-SEQ, hev3-00 events)\n"
	"      --chrome-trace FILE       write the race as a Chrome trace (Perfetto)\n"
	"  -V, --version                 print this tool's version and the loaded library's\n"
	"  -h, --help\n"
	"exit status: 0 connected (--stdio: relayed until both sides ended), 1 could not\n"
	"connect (every address failed, no address, a timeout; one line on stderr names\n"
	"HOST), 2 usage error, 3 --stdio: the relay failed after connecting (reset, write\n"
	"error); killed by a signal: SIGINT (Ctrl-C), and with --stdio SIGPIPE when the\n"
	"reader of stdout went away, as cat (a shell says 128 + the signal's number)\n";

/* print_version: this tool's version (the header it was built with) and
 * the version of the libhev2 the dynamic linker loaded, which may be newer
 * (the same MAJOR runs a tool built against an older header). */
static void print_version(void)
{
	int lib = hev2_version();
	printf("hev2-connect %d.%d.%d (libhev2 %d.%d.%d)\n", HEV2_VERSION_MAJOR, HEV2_VERSION_MINOR,
	       HEV2_VERSION_PATCH, lib / 10000, lib / 100 % 100, lib % 100);
}

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "hev2-connect: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	exit(EXIT_USAGE);
}

/* parse_int accepts a whole decimal number that fits an int. Whether the
 * value makes sense is the library's rule (hev2_connect refuses it). */
static int parse_int(const char *flag, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < INT_MIN || v > INT_MAX) {
		fprintf(stderr, "hev2-connect: %s: bad value '%s' (want a whole number)\n", flag, s);
		fprintf(stderr, "%s", usage_text);
		exit(EXIT_USAGE);
	}
	return (int)v;
}

/* append joins repeated flags into one option string. */
static char *append(char *list, const char *item, const char *sep)
{
	size_t n = list ? strlen(list) : 0;
	char *s = realloc(list, n + strlen(sep) + strlen(item) + 1);
	if (!s) {
		perror("hev2-connect");
		exit(EXIT_FAILED);
	}
	if (n)
		strcpy(s + n, sep), n += strlen(sep);
	strcpy(s + n, item);
	return s;
}

/* ---- output ---------------------------------------------------------------- */

static const char *family_name(int af)
{
	return af == AF_INET6 ? "ipv6" : af == AF_INET ? "ipv4" : "";
}

static const char *eai_name(int eai)
{
	switch (eai) {
	case 0: return "";
	case EAI_BADFLAGS: return "EAI_BADFLAGS";
	case EAI_NONAME: return "EAI_NONAME";
	case EAI_AGAIN: return "EAI_AGAIN";
	case EAI_FAIL: return "EAI_FAIL";
	case EAI_NODATA: return "EAI_NODATA";
	case EAI_FAMILY: return "EAI_FAMILY";
	case EAI_SOCKTYPE: return "EAI_SOCKTYPE";
	case EAI_SERVICE: return "EAI_SERVICE";
	case EAI_ADDRFAMILY: return "EAI_ADDRFAMILY";
	case EAI_MEMORY: return "EAI_MEMORY";
	case EAI_SYSTEM: return "EAI_SYSTEM";
	case EAI_OVERFLOW: return "EAI_OVERFLOW";
	}
	return "EAI_UNKNOWN";
}

static const char *errno_name(int e)
{
	const char *n = e ? strerrorname_np(e) : NULL;
	return n ? n : "";
}

static const char *timeout_name(int t)
{
	switch (t) {
	case HEV2_TIMEOUT_RESOLV: return "resolv_timeout";
	case HEV2_TIMEOUT_CONNECT: return "connect_timeout";
	case HEV2_TIMEOUT_OPEN: return "open_timeout";
	}
	return "";
}

static void print_timeline(FILE *f, hev2_conn c, const hev2_result_info *r)
{
	for (int i = 0; i < r->n_events; i++) {
		hev2_event_info e = {.size = sizeof e};
		if (hev2_get_event(c, i, &e) != HEV2_OK)
			continue;
		fprintf(f, "%9.3f ms  %-17s", e.at_ms, hev2_event_name(e.kind));
		switch (e.kind) {
		case HEV2_EV_LOOKUP_STARTED:
		case HEV2_EV_LOOKUP_ANSWERED:
		case HEV2_EV_LOOKUP_FAILED:
		case HEV2_EV_LOOKUP_CANCELED:
			fprintf(f, " %s", e.family == AF_INET6 ? "AAAA" : "A");
			break;
		case HEV2_EV_ATTEMPT_STARTED:
		case HEV2_EV_ATTEMPT_FAILED:
		case HEV2_EV_ATTEMPT_WON:
		case HEV2_EV_ATTEMPT_CLOSED:
			fprintf(f, " #%d %s%s%s port %d", e.attempt, e.family == AF_INET6 ? "[" : "",
			        e.address, e.family == AF_INET6 ? "]" : "", e.port);
			break;
		case HEV2_EV_TIMEOUT:
			fprintf(f, " %s", timeout_name(e.timeout));
			break;
		case HEV2_EV_SYNTHESIZED:
			fprintf(f, " [%s]", e.address); /* .detail: "from IPv4" */
			break;
		case HEV2_EV_RESOLUTION_DELAY:
		case HEV2_EV_ATTEMPT_DELAY:
			fprintf(f, " %s", e.detail); /* "until N ms" */
			e.detail[0] = '\0';
			break;
		}
		if (e.error)
			fprintf(f, " (%s)", errno_name(e.error));
		if (e.eai)
			fprintf(f, " (%s)", eai_name(e.eai));
		if (e.detail[0])
			fprintf(f, ": %s", e.detail);
		fputc('\n', f);
	}
}

/* print_run writes one connect of --repeat as a JSON object: the
 * contract's fields, the address tried first and history's reason. */
static void print_run(FILE *f, hev2_conn c, const hev2_result_info *r, int port)
{
	fprintf(f, "{\"ok\":%s,\"address\":", r->status == HEV2_OK ? "true" : "false");
	json_string(f, r->address);
	fprintf(f, ",\"family\":\"%s\",\"port\":%d,\"elapsed_ms\":%.3f",
	        family_name(r->family), r->status == HEV2_OK ? r->port : port, r->elapsed_ms);
	if (r->status != HEV2_OK) {
		fprintf(f, ",\"error\":{\"errno\":\"%s\",\"eai\":\"%s\",\"timeout\":\"%s\",\"message\":",
		        errno_name(r->error), eai_name(r->eai), timeout_name(r->timeout));
		json_string(f, hev2_errmsg(c));
		fputc('}', f);
	}
	hev2_attempt_info a = {.size = sizeof a};
	if (r->n_attempts > 0 && hev2_get_attempt(c, 0, &a) == HEV2_OK) {
		fprintf(f, ",\"first_attempt\":");
		json_string(f, a.address);
	}
	if (r->history_reason[0]) {
		fprintf(f, ",\"history\":");
		json_string(f, r->history_reason);
	}
	fputc('}', f);
}

/* The HTTPS query's states as the contract spells them (HEV2_HTTPS_*). */
static const char *https_state_name(int state)
{
	switch (state) {
	case HEV2_HTTPS_ANSWERED: return "answered";
	case HEV2_HTTPS_NODATA: return "nodata";
	case HEV2_HTTPS_NXDOMAIN: return "nxdomain";
	case HEV2_HTTPS_FAILED: return "failed";
	case HEV2_HTTPS_TIMEOUT: return "timeout";
	case HEV2_HTTPS_MALFORMED: return "malformed";
	case HEV2_HTTPS_ALIAS_LIMIT: return "alias-limit";
	}
	return "timeout"; /* HEV2_HTTPS_PENDING: the race ended before the answer */
}

/* print_svcb_json writes "svcb": null when no HTTPS query was made, else
 * its state and the service the winner came from (null: the origin's own
 * addresses; port 0: the origin's port). */
static void print_svcb_json(FILE *f, hev2_conn c)
{
	hev2_service_info s = {.size = sizeof s};
	if (hev2_service(c, &s) != HEV2_OK || s.state == HEV2_HTTPS_NONE) {
		fprintf(f, ",\"svcb\":null");
		return;
	}
	fprintf(f, ",\"svcb\":{\"state\":\"%s\",\"service\":", https_state_name(s.state));
	if (!s.has_service) {
		fprintf(f, "null}");
		return;
	}
	fprintf(f, "{\"priority\":%d,\"target\":", s.priority);
	json_string(f, s.target);
	fprintf(f, ",\"port\":%d,\"alpn\":[", s.port);
	const char *p = s.alpn;
	for (int first = 1; *p; first = 0) {
		size_t n = strcspn(p, ",");
		char one[256];
		snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), p);
		fprintf(f, "%s", first ? "" : ",");
		json_string(f, one);
		p += n;
		if (*p == ',')
			p++;
	}
	fprintf(f, "],\"ech\":%s}}", s.ech_len > 0 ? "true" : "false");
}

/* print_json writes the contract's line for connect c; runs, if not NULL,
 * is the "runs" list of --repeat, already written. */
static void print_json(FILE *f, hev2_conn c, const hev2_result_info *r, int port, const char *runs)
{
	fprintf(f, "{\"ok\":%s", r->status == HEV2_OK ? "true" : "false");
	fprintf(f, ",\"address\":");
	json_string(f, r->address);
	fprintf(f, ",\"family\":\"%s\",\"port\":%d,\"elapsed_ms\":%.3f",
	        family_name(r->family), r->status == HEV2_OK ? r->port : port, r->elapsed_ms);
	if (r->synthesized_from[0]) {
		fprintf(f, ",\"synthesized_from\":");
		json_string(f, r->synthesized_from);
	}
	if (r->status != HEV2_OK) {
		fprintf(f, ",\"error\":{\"errno\":\"%s\",\"eai\":\"%s\",\"timeout\":\"%s\",\"status\":",
		        errno_name(r->error), eai_name(r->eai), timeout_name(r->timeout));
		json_string(f, hev2_strerror(r->status));
		fprintf(f, ",\"message\":");
		json_string(f, hev2_errmsg(c));
		fprintf(f, "}");
	}
	fprintf(f, ",\"events\":[");
	for (int i = 0; i < r->n_events; i++) {
		hev2_event_info e = {.size = sizeof e};
		if (hev2_get_event(c, i, &e) != HEV2_OK)
			continue;
		fprintf(f, "%s{\"at_ms\":%.3f,\"kind\":\"%s\"", i ? "," : "", e.at_ms,
		        hev2_event_name(e.kind));
		if (e.family)
			fprintf(f, ",\"family\":\"%s\"", family_name(e.family));
		if (e.attempt >= 0) {
			fprintf(f, ",\"attempt\":%d,\"address\":", e.attempt);
			json_string(f, e.address);
			fprintf(f, ",\"port\":%d", e.port);
		} else if (e.address[0]) {
			fprintf(f, ",\"address\":");
			json_string(f, e.address);
		}
		if (e.error)
			fprintf(f, ",\"errno\":\"%s\"", errno_name(e.error));
		if (e.eai)
			fprintf(f, ",\"eai\":\"%s\"", eai_name(e.eai));
		if (e.timeout)
			fprintf(f, ",\"timeout\":\"%s\"", timeout_name(e.timeout));
		if (e.detail[0]) {
			fprintf(f, ",\"detail\":");
			json_string(f, e.detail);
		}
		fputc('}', f);
	}
	fputc(']', f);
	print_report_json(f, c, eai_name);
	if (r->history_reason[0]) {
		fprintf(f, ",\"history\":");
		json_string(f, r->history_reason);
	}
	print_svcb_json(f, c);
	if (runs)
		fprintf(f, ",\"runs\":[%s]", runs);
	fprintf(f, "}\n");
}

/* ---- Ctrl-C: signal -> job -> hev2_cancel at the main loop's safe point ---- */

static hev2_job cancel_job;
static hev2_conn current;

static void on_sigint(int sig)
{
	(void)sig;
	hev2_job_trigger(cancel_job); /* async-signal-safe */
}

static void cancel_current(void *data)
{
	(void)data;
	hev2_cancel(current);
}

/* wait_driving plays a waiter-driven race on this thread, in slices, and
 * runs the jobs (a Ctrl-C's cancel) between them. */
static int wait_driving(hev2_conn c)
{
	int rc;
	while ((rc = hev2_wait(c, 20)) == HEV2_EAGAIN)
		hev2_run_jobs();
	return rc;
}

/* wait_done waits for the handle's fd, running jobs as they come. */
static int wait_done(hev2_conn c)
{
	struct pollfd p[2] = {{.fd = hev2_fd(c), .events = POLLIN},
	                      {.fd = hev2_jobs_fd(), .events = POLLIN}};
	if (p[0].fd < 0)
		return p[0].fd;
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return HEV2_ESYSTEM;
		}
		if (p[1].revents)
			hev2_run_jobs();
		if (p[0].revents)
			return HEV2_OK;
	}
}

/* print_verbose is -v's output: the race as a timeline and the report's
 * summary line. */
static void print_verbose(FILE *f, const char *host, const char *port, const hev2_result_info *r)
{
	fprintf(f, "hev2-connect %s port %s\n", host, port);
	print_timeline(f, current, r);
	print_report_summary(f, current);
}

/* finish_stdio: the --stdio end of main. stdout belongs to the peer's
 * bytes, so the timeline (-v) and every message go to stderr; a failure is
 * one line that names the host. */
static int finish_stdio(const hev2_result_info *r, const char *host, const char *port,
                        int verbose)
{
	if (verbose)
		print_verbose(stderr, host, port, r);
	if (r->status != HEV2_OK) {
		const char *msg = hev2_errmsg(current);
		if (!strncmp(msg, "hev2: ", 6))
			msg += 6;
		fprintf(stderr, "hev2-connect: cannot connect to %s port %s: %s\n", host, port, msg);
		hev2_release(current);
		return EXIT_FAILED;
	}
	int fd = r->fd;
	hev2_release(current);
	/* Connected: Ctrl-C now ends the process as it would nc (the cancel
	 * job has nothing left to cancel). */
	signal(SIGINT, SIG_DFL);
	return relay_stdio(fd, host, port) == 0 ? EXIT_CONNECTED : EXIT_RELAY;
}

int main(int argc, char **argv)
{
	enum {
		O_JSON = 256, O_RESOLVE, O_RESOLVER, O_NAMESERVER, O_RESOLV_TIMEOUT,
		O_CONNECT_TIMEOUT, O_OPEN_TIMEOUT, O_RESOLUTION_DELAY, O_ATTEMPT_DELAY,
		O_FIRST_COUNT, O_FAMILY, O_LOCAL, O_LOCAL_PORT, O_NO_FAST_FALLBACK,
		O_NODELAY, O_KEEPALIVE, O_BLOCKING, O_DRIVE, O_STDIO, O_NO_NAT64, O_SVG, O_QLOG, O_CHROME,
		O_NO_HISTORY, O_REPEAT, O_HTTPS_RR, O_ALPN, O_ECH,
	};
	static const struct option longopts[] = {
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"json", no_argument, NULL, O_JSON},
		{"resolve", required_argument, NULL, O_RESOLVE},
		{"resolver", required_argument, NULL, O_RESOLVER},
		{"nameserver", required_argument, NULL, O_NAMESERVER},
		{"resolv-timeout", required_argument, NULL, O_RESOLV_TIMEOUT},
		{"connect-timeout", required_argument, NULL, O_CONNECT_TIMEOUT},
		{"open-timeout", required_argument, NULL, O_OPEN_TIMEOUT},
		{"resolution-delay", required_argument, NULL, O_RESOLUTION_DELAY},
		{"attempt-delay", required_argument, NULL, O_ATTEMPT_DELAY},
		{"first-family-count", required_argument, NULL, O_FIRST_COUNT},
		{"family", required_argument, NULL, O_FAMILY},
		{"local", required_argument, NULL, O_LOCAL},
		{"local-port", required_argument, NULL, O_LOCAL_PORT},
		{"no-fast-fallback", no_argument, NULL, O_NO_FAST_FALLBACK},
		{"nodelay", no_argument, NULL, O_NODELAY},
		{"keepalive", required_argument, NULL, O_KEEPALIVE},
		{"blocking", no_argument, NULL, O_BLOCKING},
		{"drive", required_argument, NULL, O_DRIVE},
		{"stdio", no_argument, NULL, O_STDIO},
		{"no-nat64", no_argument, NULL, O_NO_NAT64},
		{"svg", required_argument, NULL, O_SVG},
		{"qlog", required_argument, NULL, O_QLOG},
		{"chrome-trace", required_argument, NULL, O_CHROME},
		{"no-history", no_argument, NULL, O_NO_HISTORY},
		{"repeat", required_argument, NULL, O_REPEAT},
		{"https-rr", no_argument, NULL, O_HTTPS_RR},
		{"alpn", required_argument, NULL, O_ALPN},
		{"ech", no_argument, NULL, O_ECH},
		{NULL, 0, NULL, 0},
	};
	hev2_options o;
	hev2_options_init(&o);
	char *static_hosts = NULL, *nameservers = NULL;
	int verbose = 0, json = 0, stdio = 0, repeat = 1, ch;
	/* The trace files to write, by HEV2_TRACE_* (index 0 unused). */
	const char *trace_files[HEV2_TRACE_CHROME + 1] = {NULL};
	static const char *const trace_flags[HEV2_TRACE_CHROME + 1] = {
		NULL, "--svg", "--qlog", "--chrome-trace"};

	while ((ch = getopt_long(argc, argv, "vhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'v': verbose = 1; break;
		case 'h': fputs(usage_text, stdout); return EXIT_CONNECTED;
		case 'V': print_version(); return EXIT_CONNECTED;
		case O_JSON: json = 1; break;
		case O_HTTPS_RR: o.https_rr = 1; break;
		case O_ALPN: o.alpn = optarg; break;
		case O_ECH: o.ech = 1; break;
		case O_RESOLVE:
			if (!strchr(optarg, ':'))
				usage_error("--resolve wants NAME:ADDR[,ADDR], not '%s'", optarg);
			static_hosts = append(static_hosts, optarg, ";");
			break;
		case O_RESOLVER:
			if (!strcmp(optarg, "system"))
				o.resolver = HEV2_RESOLVER_SYSTEM;
			else if (!strcmp(optarg, "builtin"))
				o.resolver = HEV2_RESOLVER_BUILTIN;
			else if (!strcmp(optarg, "default"))
				o.resolver = HEV2_RESOLVER_DEFAULT;
			else
				usage_error("--resolver wants system, builtin or default, not '%s'", optarg);
			break;
		case O_NAMESERVER: nameservers = append(nameservers, optarg, ","); break;
		case O_RESOLV_TIMEOUT: o.resolv_timeout_ms = parse_int("--resolv-timeout", optarg); break;
		case O_CONNECT_TIMEOUT: o.connect_timeout_ms = parse_int("--connect-timeout", optarg); break;
		case O_OPEN_TIMEOUT: o.open_timeout_ms = parse_int("--open-timeout", optarg); break;
		case O_RESOLUTION_DELAY: o.resolution_delay_ms = parse_int("--resolution-delay", optarg); break;
		case O_ATTEMPT_DELAY: o.connection_attempt_delay_ms = parse_int("--attempt-delay", optarg); break;
		case O_FIRST_COUNT: o.first_address_family_count = parse_int("--first-family-count", optarg); break;
		case O_FAMILY:
			if (strcmp(optarg, "4") && strcmp(optarg, "6"))
				usage_error("--family wants 4 or 6, not '%s'", optarg);
			o.family = optarg[0] == '4' ? AF_INET : AF_INET6;
			break;
		case O_LOCAL: o.local_host = optarg; break;
		case O_LOCAL_PORT: o.local_port = parse_int("--local-port", optarg); break;
		case O_NO_FAST_FALLBACK: o.fast_fallback = 0; break;
		case O_NODELAY: o.nodelay = 1; break;
		case O_KEEPALIVE: o.keepalive_ms = parse_int("--keepalive", optarg); break;
		case O_BLOCKING: o.blocking = 1; break;
		case O_STDIO: stdio = 1; break;
		case O_NO_NAT64: o.nat64 = HEV2_NAT64_OFF; break;
		case O_NO_HISTORY: o.history = 0; break;
		case O_REPEAT:
			repeat = parse_int("--repeat", optarg);
			if (repeat < 1 || repeat > 1000)
				usage_error("--repeat wants 1..1000, not '%s'", optarg);
			break;
		case O_DRIVE:
			if (!strcmp(optarg, "library"))
				o.drive = HEV2_DRIVE_LIBRARY;
			else if (!strcmp(optarg, "waiter"))
				o.drive = HEV2_DRIVE_WAITER;
			else {
				fprintf(stderr, "hev2-connect: --drive wants library or waiter, not %s\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case O_SVG: trace_files[HEV2_TRACE_SVG] = optarg; break;
		case O_QLOG: trace_files[HEV2_TRACE_QLOG] = optarg; break;
		case O_CHROME: trace_files[HEV2_TRACE_CHROME] = optarg; break;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
	}
	int want_trace = 0;
	for (int f = HEV2_TRACE_SVG; f <= HEV2_TRACE_CHROME; f++) {
		if (trace_files[f] && !*trace_files[f])
			usage_error("%s wants a file name", trace_flags[f]);
		want_trace |= trace_files[f] != NULL;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "hev2-connect: want HOST and PORT\n%s", usage_text);
		return EXIT_USAGE;
	}
	const char *host = argv[optind], *port = argv[optind + 1];
	if (stdio && (json || o.blocking || repeat > 1)) {
		/* stdout carries the peer's bytes; the relay needs a non-blocking socket */
		fprintf(stderr, "hev2-connect: --stdio cannot be combined with %s\n%s",
		        json ? "--json" : o.blocking ? "--blocking" : "--repeat", usage_text);
		return EXIT_USAGE;
	}
	o.static_hosts = static_hosts;
	o.nameservers = nameservers;
	o.record_events = verbose || json || want_trace;

	if (hev2_job_register(cancel_current, NULL, 0, &cancel_job) == HEV2_OK) {
		struct sigaction sa = {.sa_handler = on_sigint};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
	}

	/* --repeat: every connect after the first is written to runs and let
	 * go; the first stays current for the output below. */
	hev2_result_info r, first_r;
	hev2_conn first = 0;
	char *runs = NULL;
	size_t runs_len = 0;
	FILE *runs_f = repeat > 1 && json ? open_memstream(&runs, &runs_len) : NULL;
	int all_ok = 1;
	for (int i = 0; i < repeat; i++) {
		memset(&r, 0, sizeof r);
		int rc = hev2_connect(host, port, &o, &current);
		if (rc == HEV2_EHOST || rc == HEV2_EPORT || rc == HEV2_EOPTIONS || rc == HEV2_ENOTSUP) {
			/* The library refused the arguments (its rules, the only ones):
			 * a usage error, with the library's reason. */
			fprintf(stderr, "hev2-connect: %s\n%s", hev2_last_error(), usage_text);
			return EXIT_USAGE;
		}
		if (rc != HEV2_OK) {
			fprintf(stderr, "hev2-connect: %s\n", hev2_strerror(rc));
			if (json) {
				printf("{\"ok\":false,\"address\":\"\",\"family\":\"\",\"port\":%d,"
				       "\"elapsed_ms\":0,\"error\":{\"errno\":\"\",\"eai\":\"\",\"timeout\":\"\","
				       "\"message\":",
				       atoi(port));
				json_string(stdout, hev2_strerror(rc));
				printf("}}\n");
			}
			return EXIT_FAILED;
		}
		rc = o.drive == HEV2_DRIVE_WAITER ? wait_driving(current) : wait_done(current);
		r.size = sizeof r;
		if (rc == HEV2_OK)
			rc = hev2_result(current, &r);
		if (rc != HEV2_OK) {
			fprintf(stderr, "hev2-connect: %s\n", hev2_strerror(rc));
			hev2_release(current);
			return EXIT_FAILED;
		}
		all_ok &= r.status == HEV2_OK;
		if (verbose && repeat > 1) {
			/* every connect's timeline, in order (the 2nd on show
			 * history's decision) */
			FILE *tl = json ? stderr : stdout;
			fprintf(tl, "-- connect %d of %d\n", i + 1, repeat);
			print_verbose(tl, host, port, &r);
		}
		if (runs_f) {
			if (i)
				fputc(',', runs_f);
			print_run(runs_f, current, &r, atoi(port));
		}
		if (i == 0) {
			first = current, first_r = r;
			if (repeat > 1 && r.fd >= 0)
				close(r.fd); /* only the race is measured */
			continue;
		}
		if (r.fd >= 0)
			close(r.fd);
		hev2_release(current);
	}
	current = first, r = first_r;
	if (repeat > 1)
		r.fd = -1; /* closed above */
	if (runs_f)
		fclose(runs_f);
	/* The trace files first: they describe the race, whatever follows. */
	int trace_failed = 0;
	for (int f = HEV2_TRACE_SVG; f <= HEV2_TRACE_CHROME; f++) {
		if (trace_files[f] && hev2_write_trace(current, f, -1, trace_files[f]) != HEV2_OK) {
			fprintf(stderr, "hev2-connect: %s %s: %s\n", trace_flags[f], trace_files[f], hev2_last_error());
			trace_failed = 1;
		}
	}
	if (stdio && trace_failed) {
		if (r.fd >= 0)
			close(r.fd);
		hev2_release(current);
		return EXIT_FAILED;
	}
	if (stdio)
		return finish_stdio(&r, host, port, verbose);
	FILE *timeline = json ? stderr : stdout;
	if (verbose && repeat == 1)
		print_verbose(timeline, host, port, &r);
	if (json)
		print_json(stdout, current, &r, atoi(port), runs);
	else if (r.status == HEV2_OK)
		printf("connected to %s port %d (%s%s%s) in %.3f ms, fd %d\n", r.address, r.port,
		       family_name(r.family), r.synthesized_from[0] ? ", NAT64 from " : "",
		       r.synthesized_from, r.elapsed_ms, r.fd);
	else
		printf("failed: %s\n", hev2_errmsg(current));
	if (r.fd >= 0)
		close(r.fd);
	int status = r.status;
	hev2_release(current);
	free(static_hosts);
	free(nameservers);
	free(runs);
	return status == HEV2_OK && all_ok && !trace_failed ? EXIT_CONNECTED : EXIT_FAILED;
}
