/*
 * hev2.h — the C ABI of libhev2, a Happy Eyeballs v2 (RFC 8305) TCP connector.
 *
 * This header is the contract. It is hand-written and append-only: status
 * codes, constants, struct fields and functions are only ever added (at the
 * end), never renumbered, reordered or removed. Structs that may grow carry
 * a `size` field that the caller sets to `sizeof` of the struct it was
 * compiled with, so a program built against an older header keeps working
 * with a newer library.
 *
 * ---------------------------------------------------------------------------
 * Overview
 * ---------------------------------------------------------------------------
 *
 * A caller that blocks until it is connected makes one call; the race is
 * played on its own thread (the cheapest path: `make bench-capi`, row
 * "hev2_connect_wait (1 call)", beside a plain blocking connect):
 *
 *     hev2_options o;
 *     hev2_options_init(&o);
 *     o.connect_timeout_ms = 5000;
 *     hev2_conn c;
 *     int fd;
 *     if (hev2_connect_wait("example.test", "443", &o, -1, &c, &fd) != HEV2_OK) {
 *         puts(hev2_last_error());            // why, in one line
 *         hev2_release(c);                    // a failed race's handle (0: none)
 *         return;
 *     }
 *     // fd is a connected socket, yours
 *
 * An event loop (or a caller that starts many connects at once) takes a
 * handle instead, played by a library thread, and is told when it is done
 * by a pollable fd, a callback or a postponed job; a handle costs a thread
 * hand-off more than the one call when it is waited for with hev2_wait:
 *
 *     hev2_conn c;
 *     int rc = hev2_connect("example.test", "443", &o, &c); // returns at once
 *     if (rc != HEV2_OK) { puts(hev2_strerror(rc)); return; }
 *     // ... poll hev2_fd(c) with the loop's other fds (or on_done, or a job)
 *     hev2_result_info r;
 *     r.size = sizeof r;
 *     hev2_result(c, &r);                     // r.fd is now yours
 *     if (r.status != HEV2_OK) puts(hev2_errmsg(c));
 *     hev2_release(c);
 *
 * A connection handle (`hev2_conn`) is a 64-bit id, never a pointer. Ids are
 * never reused within a process: a stale, released or made-up id reaches no
 * connection and is answered with HEV2_EHANDLE. 0 is never a valid id.
 * No Go pointer ever crosses this ABI.
 *
 * ---------------------------------------------------------------------------
 * Status codes
 * ---------------------------------------------------------------------------
 *
 * Every function that can fail returns an int status: HEV2_OK (0), or a
 * negative HEV2_E... code; results come back through out-parameters. No
 * input makes the library crash, abort or exit the process: a NULL, a
 * stale handle, an out-of-range value each get their code. (A pointer that
 * is not NULL but points at unmapped memory cannot be detected in C; it is
 * the one thing the caller must get right.) A Go panic never crosses the
 * boundary: it is recovered and reported as HEV2_EINTERNAL.
 *
 * The code says what kind of failure; hev2_last_error() says which one, for
 * the calling thread: every function that returns a negative status also
 * records one line naming itself and the detail ("hev2_connect: host
 * longer than 253 characters", "hev2_connect: cannot make the library's
 * permanent fds (...): Too many open files"), and hev2_last_errno() gives
 * the errno behind a HEV2_ESYSTEM. Like errno, a successful call leaves
 * both unchanged: read them right after the call that failed, on the same
 * thread (a signal handler that calls a failing hev2 function changes
 * them, as it would errno). hev2_errmsg, which returns a text, does not
 * touch them. HEV2_EAGAIN counts as a failure here too.
 *
 * ---------------------------------------------------------------------------
 * Threads and signals
 * ---------------------------------------------------------------------------
 *
 * Every function is thread-safe: any function may be called from any thread
 * at any moment, including concurrently on the same handle (hev2_cancel and
 * hev2_release from one thread while another waits, for example: the waiter
 * returns). After hev2_release, other calls on that id return HEV2_EHANDLE.
 *
 *   function              any thread   signal handler   enters the Go runtime
 *   hev2_version          yes          yes (async-signal-safe)      no
 *   hev2_strerror         yes          yes (async-signal-safe)      no
 *   hev2_event_name       yes          yes (async-signal-safe)      no
 *   hev2_job_trigger      yes          yes, for a job not registered
 *                                      HEV2_JOB_DIRECT             no
 *   hev2_jobs_fd          yes          yes (async-signal-safe)      no
 *   hev2_job_register     yes          no                          no
 *   hev2_run_jobs         yes          no (it runs your functions) no
 *   hev2_options_init     yes          yes (async-signal-safe)      no
 *   hev2_options_init_size yes         yes (async-signal-safe)      no
 *   hev2_last_error       yes (its own no                          no
 *                         thread's)
 *   hev2_last_errno       yes (its own yes (async-signal-safe)      no
 *                         thread's)
 *   every other function  yes          NO                          yes
 *
 * To act on a signal (e.g. cancel on SIGINT), trigger a job from the handler
 * and call hev2_cancel from the job at your safe point.
 *
 * What loading the library changes (the Go runtime, measured):
 *   - it installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGPIPE and SIGURG
 *     (the last is used to preempt goroutines); faults in non-Go code are
 *     forwarded to the handler that was there before;
 *   - handlers the host already installed (SIGINT, SIGTERM, SIGCHLD, ...) are
 *     kept, but get SA_ONSTACK added;
 *   - an ignored SIGPIPE (SIG_IGN) is replaced by a forwarding handler that
 *     still ignores it for the host, but children spawned afterwards no
 *     longer inherit SIGPIPE as ignored. Set SIGPIPE in the child (or spawn
 *     children before loading) if they depend on it;
 *   - the first call that enters Go starts the runtime (about 4 ms and
 *     +3 MB RSS, 1 -> 6 threads); call hev2_init() at boot to pay it early.
 * The library never calls signal.Notify: it never takes a host's signal.
 * Every raw system call the library makes itself retries EINTR (with the
 * remaining deadline where there is one): a signal storm (SIGCHLD from a
 * busy process, interval timers) never surfaces as a failure.
 *
 * The library is never unloaded: dlclose() on it unloads nothing (a Go
 * runtime cannot be stopped). Loading two Go c-shared libraries in one
 * process works.
 *
 * ---------------------------------------------------------------------------
 * History (since 1.3)
 * ---------------------------------------------------------------------------
 *
 * The library remembers, per network (the default routers and on-link
 * prefixes netlink reports, so nothing learned on one network is read on
 * another, and a new network starts from the RFC's defaults at once) and
 * per host name, what each family's attempts did. A family that failed
 * (refused, timed out, or still pending after the attempt delay when the
 * other family won: a blackhole) with no success since, while the other
 * family connected, in the last history_lifetime_ms (10 min), is tried
 * second: the next connects do not pay the attempt delay again. When the
 * failure is that old, the RFC 6724 order is tried again: a path still
 * broken is paid once more (one attempt delay) and demoted again, a healed
 * one wins. So per host name and network at most one connect per lifetime
 * pays a broken path, and a healed path is used again within one lifetime.
 * Once a family has 3 connects on record and connection_attempt_delay_ms
 * is 0, the attempt delay is 2 x its smoothed connect RTT, clamped to
 * [100, 2000] ms. IP literals and fast_fallback = 0 are untouched.
 * hev2_result_info.history_* and HEV2_EV_HISTORY say what was decided;
 * hev2_stats_info.history_* count it. Bounded: at most
 * history_max_entries keys (least recently used evicted) of
 * history_entry_bytes each plus the host name.
 *
 * ---------------------------------------------------------------------------
 * Capacity
 * ---------------------------------------------------------------------------
 *
 * Go aborts the whole process when it reaches 10,000 OS threads, and a
 * blocked getaddrinfo holds one thread: a library must never take its host
 * down that way. So at most hev2_set_max_handles() handles run at once
 * (default HEV2_DEFAULT_MAX_HANDLES); beyond it hev2_connect answers
 * HEV2_ECAPACITY and starts nothing. The system resolver runs at most
 * hev2_stats_info.max_lookups getaddrinfo calls at once (128) for lookups
 * someone still waits for; further lookups wait for a slot, still
 * cancellable. A canceled lookup is abandoned, never waited for: its call
 * finishes on its own thread (when the C library gives up: its DNS
 * timeout, 5-30 s), and its slot goes to the next lookup at once, so a
 * burst of abandoned lookups of silent names never holds up a healthy one.
 * Threads stay bounded by two rules:
 *  - hand-over: once hev2_stats_info.handover_at (128) getaddrinfo calls
 *    are in flight, abandoned ones included, a name that getaddrinfo would
 *    answer from DNS alone (nsswitch.conf's hosts line is "files" then
 *    "dns", at most nss-mdns's *_minimal modules between them for a name
 *    outside .local, the hosts file does not list the name, and neither
 *    resolv.conf's options (no-aaaa, inet6, ...) nor RES_OPTIONS,
 *    LOCALDOMAIN or HOSTALIASES change glibc's answer) is asked of the
 *    built-in DNS client instead, with the same resolv.conf; it holds no
 *    thread and really cancels (lookups_handed_over counts them), so a
 *    burst of connects to silent names leaves the process with about
 *    handover_at threads, and healthy names keep resolving.
 *  - cap: every other name goes to getaddrinfo up to
 *    hev2_stats_info.max_resolver_threads (192) calls in flight, abandoned
 *    ones included; at that cap a new lookup fails at once, with
 *    EAI_SYSTEM and errno EAGAIN ("too many getaddrinfo calls in flight
 *    ... (the resolver thread cap)"), rather than queue without end.
 * With the Go runtime's own threads, the library stays under 300 threads.
 *
 * ---------------------------------------------------------------------------
 * fork()
 * ---------------------------------------------------------------------------
 *
 * The Go runtime does not survive fork(): in a forked child, anything that
 * needs a goroutine can hang forever. So every function that would enter Go
 * first checks, in C, whether the process is a fork child of the process
 * that loaded the library and returns HEV2_EFORKED at once, without
 * entering Go. The check costs no system call: at load the library maps
 * one private page marked MADV_WIPEONFORK (Linux >= 4.14), which the kernel
 * zero-fills in every child that does not share the parent's memory (fork(),
 * a raw fork or clone syscall that skips the pthread_atfork handlers), plus
 * a pthread_atfork flag. If that page cannot be made at load (a kernel
 * older than 4.14, a seccomp filter refusing madvise, no memory), the
 * library falls back to comparing getpid() with the pid it recorded at
 * load: still correct, but one getpid() system call per call that enters
 * Go. A vfork() (CLONE_VM) child is not detected; it may only exec or
 * _exit. Handles and fds of the parent are unusable in the child; the
 * child may close inherited fds.
 * The pure-C functions (hev2_version, hev2_strerror, the job functions,
 * hev2_options_init, hev2_last_error, hev2_last_errno) keep working in a
 * child.
 * Safe patterns: load the library after forking (Puma/Unicorn without
 * preload_app, or load it in on_worker_boot); Python multiprocessing with
 * the "spawn" or "forkserver" start method; fork+exec (posix_spawn) is
 * always fine.
 *
 * ---------------------------------------------------------------------------
 * Completion: wait, fd, callback, postponed job
 * ---------------------------------------------------------------------------
 *
 * A handle is "running" from hev2_connect until its outcome is known, then
 * "done". Four ways to learn it, usable together:
 *   1. hev2_wait(c, timeout_ms) blocks the calling thread;
 *   2. hev2_fd(c) is a file descriptor (an eventfd) that becomes readable
 *      when the handle is done and stays readable: watch it from
 *      select/poll/epoll, IO#wait_readable or asyncio's add_reader;
 *   3. hev2_options.on_done: a callback called on a library thread;
 *   4. hev2_options.job: a postponed job (see hev2_job_register) triggered
 *      at completion and run by the host at a safe point of its choosing.
 * The callback never fires inside hev2_connect (it runs on a library thread,
 * never on the caller's stack, and only after *out holds the handle), never
 * fires if hev2_connect returned an error, and otherwise fires exactly once
 * with the final status
 * (HEV2_ECANCELED included) — even if the handle was released before (its
 * user data must stay valid until then). The same holds for the job
 * trigger (triggers of one job coalesce: see below). A job that is not
 * HEV2_JOB_DIRECT, on a handle without on_done, is triggered by whichever
 * thread decides the race, hev2_wait or hev2_cancel included: the trigger
 * only sets its flag and makes hev2_jobs_fd readable, and the job itself
 * runs in your hev2_run_jobs as always.
 * Order: a handle with both gets on_done first, then its job's trigger, on
 * the same library thread, so a job may rely on what on_done queued. The
 * library announces completions one at a time on that thread: a callback
 * (or a HEV2_JOB_DIRECT job) that waits, for an interpreter lock say,
 * delays every other handle's completion in the process. A job carries one
 * fixed data pointer and cannot say which handle finished: on_done can.
 * hev2_fd may become readable before on_done runs, and a race decided inside
 * hev2_connect (a loopback connect often is) is announced afterwards.
 * The winner's fd is non-blocking unless hev2_options.blocking is 1; a
 * host whose socket objects assume a blocking fd asks for that.
 *
 * Cancellation: after hev2_cancel(c) returns, the outcome of c is either the
 * one it already had, or HEV2_ECANCELED: a connection that wins the race
 * concurrently with the cancel is closed, never handed over.
 *
 * ---------------------------------------------------------------------------
 * Driven by the waiter (hev2_options.drive = HEV2_DRIVE_WAITER, since 1.2)
 * ---------------------------------------------------------------------------
 *
 * By default a handle's race runs on a library thread from hev2_connect on,
 * and a blocking caller may pay for hand-offs between threads. Two things
 * keep them off the healthy path: a connect to a loopback address (which the
 * kernel completes or refuses inside connect(2)) is settled inside
 * hev2_connect, and hev2_wait with a timeout first looks at the race's
 * sockets without waiting, on the calling thread, before it blocks (a
 * connect done by then is decided there). Otherwise the race is stepped by a
 * library thread as the answers come. A handle made with drive
 * = HEV2_DRIVE_WAITER is instead played by the thread that waits for it,
 * inside hev2_wait, with poll(2) over the race's own sockets: no library
 * thread is involved on the healthy path, and a connect costs about what
 * socket() + connect() + poll() cost. For blocking callers and interpreters:
 *
 *     o.drive = HEV2_DRIVE_WAITER;
 *     hev2_connect(host, port, &o, &c);  // starts the first connect or
 *                                        // the lookups, returns c at once
 *     while (hev2_wait(c, 50) == HEV2_EAGAIN)
 *         check_for_interrupts();        // e.g. Ctrl-C: hev2_cancel(c)
 *     hev2_result(c, &r); hev2_release(c);
 *
 *   - The race progresses only while a thread is inside hev2_wait on it
 *     (hev2_wait(c, 0) makes what progress is possible without blocking).
 *     Waiting in slices loses nothing: each slice resumes the race.
 *   - One thread drives at a time; other threads in hev2_wait on the same
 *     handle just wait (and take over if the driver's slice ends first).
 *   - hev2_cancel and hev2_release work from any thread at any moment: they
 *     wake the driving thread, which closes its own sockets and returns at
 *     once; with no thread driving, hev2_cancel settles the outcome itself.
 *     An interpreter's unblocking function calls hev2_cancel(c).
 *   - Signals: hev2_wait retries EINTR within its timeout; a host that must
 *     run its signal handlers waits in slices.
 *   - hev2_fd, on_done and job work as described above, with the race
 *     driven by the waiter: the callback and a HEV2_JOB_DIRECT job come from
 *     a library thread, never from inside hev2_wait, once a waiter has
 *     decided the race.
 *   - Each thread inside hev2_wait on such a handle holds one library eventfd
 *     (kept for the life of the process and reused, never made per connect:
 *     the process holds as many as threads ever waited at once); hev2_init
 *     makes the first.
 */
#ifndef HEV2_H
#define HEV2_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header: MAJOR*10000 + MINOR*100 + PATCH. hev2_version()
 * returns the library's; the library is compatible with every header of the
 * same MAJOR whose number is not greater than its own.
 *   1.0  the first ABI
 *   1.1  hev2_last_error, hev2_last_errno (per-thread detail of a failure)
 *   1.2  hev2_options.drive: a race played on the thread that waits for it;
 *        hev2_connect_wait, the same in one call; hev2_options_init_size
 *   1.3  NAT64: hev2_options.nat64, synthesized_from in hev2_result_info and
 *        hev2_attempt_info, HEV2_EV_NAT64_* and HEV2_EV_SYNTHESIZED;
 *        hev2_report, hev2_report_lookup, hev2_report_attempt: the
 *        establishment report of a recorded race;
 *        hev2_write_trace: a recorded race as a picture (SVG), qlog or a
 *        Chrome trace; the history (hev2_options.history and
 *        history_lifetime_ms, hev2_set_history, hev2_clear_history)
 *   1.4  hev2_stats_info.handover_at and lookups_handed_over: the system
 *        resolver hands DNS names to the built-in client under a burst of
 *        abandoned lookups (see "Capacity")
 *   1.5  Happy Eyeballs v3's HTTPS records: hev2_options.https_rr, alpn,
 *        ech and ech_wait_ms; hev2_service (the winner's service: its port,
 *        ALPN set and ECH configuration); the report's HTTPS part:
 *        hev2_report_info.https_state and its counts,
 *        hev2_report_service_lookup, hev2_report_service,
 *        hev2_report_skipped, hev2_report_replaced, and
 *        hev2_report_attempt_info.service and origin */
#define HEV2_VERSION_MAJOR 1
#define HEV2_VERSION_MINOR 5
#define HEV2_VERSION_PATCH 0
#define HEV2_VERSION_NUM                                                      \
	(HEV2_VERSION_MAJOR * 10000 + HEV2_VERSION_MINOR * 100 + HEV2_VERSION_PATCH)

/* ---- status codes (append-only numbering) -------------------------------
 * Codes -1..-11 say the call itself failed. Codes -12..-15 are outcomes of a
 * connection (hev2_result_info.status, the callback's status).
 * HEV2_EHOST, HEV2_EPORT and HEV2_EOPTIONS are the library's input rules,
 * the same for C, Go, Ruby and Python (stated once in its core); the
 * thread's hev2_last_error() names the function, the field and the reason
 * ("hev2_connect: invalid open_timeout: cannot be combined with
 * resolv_timeout or connect_timeout"). */
#define HEV2_OK          0
#define HEV2_EINVAL     -1  /* bad argument: NULL out-pointer, bad index, bad
                               wait timeout, unknown flag, bad job id */
#define HEV2_EHOST      -2  /* bad host: NULL, empty, a NUL byte inside, or
                               longer than 253 characters (an IPv6
                               literal's brackets not counted) */
#define HEV2_EPORT      -3  /* bad port: NULL, 0, > 65535, or a service name
                               unknown to /etc/services */
#define HEV2_EOPTIONS   -4  /* bad options: size too small (or unknown
                               non-zero trailing bytes), a delay or timeout
                               negative or over 24 h, unknown family or
                               resolver, bad local address/port, bad static
                               address list or nameserver, open_timeout
                               combined with resolv/connect timeout */
#define HEV2_EHANDLE    -5  /* handle unknown: 0, never issued, or released */
#define HEV2_EAGAIN     -6  /* not done yet: hev2_wait's timeout elapsed, or
                               hev2_result on a running handle */
#define HEV2_ECAPACITY  -7  /* over capacity: too many handles in flight, or
                               no free job slot; nothing was started */
#define HEV2_EFORKED    -8  /* called in a fork() child of the process that
                               loaded the library; see "fork()" above */
#define HEV2_ENOTSUP    -9  /* valid but not supported by this build (e.g. a
                               resolver that is not compiled in) */
#define HEV2_ESYSTEM   -10  /* a system resource failed (e.g. eventfd() with
                               EMFILE); the thread's errno is set, and
                               hev2_last_errno() gives it too */
#define HEV2_EINTERNAL -11  /* a bug in hev2 was caught (never a crash) */
/* outcomes */
#define HEV2_ECONNECT  -12  /* every connection attempt failed; see .error
                               and the attempts */
#define HEV2_ERESOLVE  -13  /* name resolution gave no address; see .eai and
                               .lookups[] */
#define HEV2_ETIMEOUT  -14  /* one of the caller's timeouts fired; see
                               .timeout */
#define HEV2_ECANCELED -15  /* cancelled by hev2_cancel or hev2_release */

/* ---- enums ---------------------------------------------------------------- */

/* hev2_options.family / hev2_*_info.family use the AF_* constants of
 * <sys/socket.h>: AF_UNSPEC (both), AF_INET, AF_INET6. */

/* hev2_options.resolver */
#define HEV2_RESOLVER_DEFAULT 0 /* the system resolver, or the built-in one
                                   when nameservers are given */
#define HEV2_RESOLVER_SYSTEM  1 /* getaddrinfo(3), one call per family on its
                                   own thread (honours nsswitch, hosts file) */
#define HEV2_RESOLVER_BUILTIN 2 /* built-in DNS client, truly cancellable;
                                   nameservers from .nameservers or else
                                   /etc/resolv.conf */

/* Which of the caller's timeouts fired (hev2_result_info.timeout). */
#define HEV2_TIMEOUT_NONE    0
#define HEV2_TIMEOUT_RESOLV  1 /* resolv_timeout_ms */
#define HEV2_TIMEOUT_CONNECT 2 /* connect_timeout_ms */
#define HEV2_TIMEOUT_OPEN    3 /* open_timeout_ms */

/* State of one family's lookup (hev2_lookup_info.state). */
#define HEV2_LOOKUP_NOT_STARTED 0 /* not needed (IP literal, static list,
                                     family restriction) */
#define HEV2_LOOKUP_PENDING     1 /* abandoned: the race ended first */
#define HEV2_LOOKUP_ANSWERED    2
#define HEV2_LOOKUP_FAILED      3

/* Race events (hev2_event_info.kind); hev2_event_name() gives the text. */
#define HEV2_EV_LOOKUP_STARTED   1  /* .family */
#define HEV2_EV_LOOKUP_ANSWERED  2  /* .family, .detail lists the addresses */
#define HEV2_EV_LOOKUP_FAILED    3  /* .family, .eai, .error */
#define HEV2_EV_LOOKUP_CANCELED  4  /* .family: no longer needed */
#define HEV2_EV_RESOLUTION_DELAY 5  /* A answered first: waiting for AAAA;
                                        .detail "until 50.000 ms" */
#define HEV2_EV_ATTEMPT_STARTED  6  /* .attempt, .address, .port */
#define HEV2_EV_ATTEMPT_FAILED   7  /* .attempt, .address, .port, .error */
#define HEV2_EV_ATTEMPT_WON      8  /* .attempt, .address, .port */
#define HEV2_EV_ATTEMPT_CLOSED   9  /* a loser, closed */
#define HEV2_EV_TIMEOUT          10 /* .timeout */
#define HEV2_EV_CANCELED         11
#define HEV2_EV_DONE             12 /* .error / .eai: the outcome */
#define HEV2_EV_ATTEMPT_DELAY    13 /* the next attempt is due at .detail
                                        ("until 250.000 ms"), unless an
                                        attempt fails first (since 1.1) */
/* NAT64 (since 1.3; only on a host with IPv6 and no IPv4 route, see
 * hev2_options.nat64): */
#define HEV2_EV_NAT64_DISCOVERY  14 /* the race waits for this network's
                                        NAT64 prefix discovery; .detail
                                        says through which resolver */
#define HEV2_EV_NAT64_PREFIX     15 /* the NAT64 prefixes in use, .detail
                                        "2001:db8:64::/96 (cached, ...)";
                                        none: no NAT64 on this network */
#define HEV2_EV_SYNTHESIZED      16 /* .address (IPv6) synthesized from the
                                        IPv4 address in .detail
                                        ("from 192.0.2.1") */
#define HEV2_EV_HISTORY          17 /* sent first when the network's history
                                        decided something (see "History"):
                                        .family is tried first (0: RFC 6724's
                                        order), .detail the reason (since 1.3) */
/* The HTTPS query (hev2_options.https_rr; since 1.5). A lookup of its
 * part: .detail is "HTTPS NAME" (the query name, or an alias target) or
 * "A NAME"/"AAAA NAME" (a service's target), followed on an answer by the
 * addresses or the number of ServiceMode records. */
#define HEV2_EV_SERVICE_LOOKUP_STARTED  18
#define HEV2_EV_SERVICE_LOOKUP_ANSWERED 19
#define HEV2_EV_SERVICE_LOOKUP_FAILED   20 /* .eai, .error */
#define HEV2_EV_SERVICE_LOOKUP_CANCELED 21
#define HEV2_EV_SERVICE_STATE   22 /* the query is final: .detail its state
                                      ("answered", "nodata", "nxdomain",
                                      "failed", "timeout", "malformed",
                                      "alias-limit") */
#define HEV2_EV_SERVICE_ADDED   23 /* a usable service, .attempt its number
                                      (1 first), .detail its priority,
                                      target, port, ALPN set, "ech" */
#define HEV2_EV_SERVICE_SKIPPED 24 /* a record set aside, .detail why */
#define HEV2_EV_ENDPOINT_REMOVED 25 /* .address/.port: an untried hint
                                       replaced by its target's answer */

/* hev2_options.nat64 (since 1.3). */
#define HEV2_NAT64_AUTO 0 /* default: on a host with IPv6 and no IPv4 route,
                             discover the network's NAT64 prefix and reach
                             IPv4 addresses through it */
#define HEV2_NAT64_OFF  1 /* never: IPv4 addresses are tried as IPv4 */

/* Who plays a handle's race (hev2_options.drive; since 1.2). */
#define HEV2_DRIVE_LIBRARY 0 /* default: a library thread, from hev2_connect
                                on; wait, fd, callback and job all work */
#define HEV2_DRIVE_WAITER  1 /* the thread inside hev2_wait: see "Driven by
                                the waiter" above */

/* hev2_job_register flags */
#define HEV2_JOB_DIRECT 1u /* call the job on the triggering thread (a
                              library thread) instead of queueing it */

/* Buffer sizes (include the terminating NUL). */
#define HEV2_ADDRSTRLEN  64  /* an IP address as text, with %zone */
#define HEV2_DETAILLEN   160 /* hev2_event_info.detail */
#define HEV2_ERRMSGLEN   1024 /* the longest text hev2_errmsg or
                                 hev2_last_error returns */
#define HEV2_REASONLEN   256 /* hev2_result_info.history_reason (since 1.3),
                                hev2_report_skipped_info.reason */

/* Hard limits. */
#define HEV2_MAX_HOSTLEN  253  /* characters of a host name */
#define HEV2_MAX_JOBS     256  /* jobs that can be registered per process */
#define HEV2_MAX_TIMEOUT_MS 86400000 /* 24 h: anything larger is a mistake */
#define HEV2_DEFAULT_MAX_HANDLES 4096 /* handles running at once */

/* ---- types ---------------------------------------------------------------- */

/* A connection handle: a 64-bit id, never reused; 0 is never valid. */
typedef uint64_t hev2_conn;

/* A registered postponed job: 1..HEV2_MAX_JOBS; 0 means "none". */
typedef uint32_t hev2_job;

/* Completion callback (hev2_options.on_done): called once per successful
 * hev2_connect, on a library thread, never inside hev2_connect, with the
 * final status (HEV2_OK or an outcome code). It may call any hev2 function
 * (including hev2_result and hev2_release on c); it must not block for long
 * and must not unwind (longjmp, C++ exception) through the library. */
typedef void (*hev2_done_fn)(hev2_conn c, int status, void *user_data);

/* A postponed job's function. */
typedef void (*hev2_job_fn)(void *data);

/* Options of one connection. Always fill with hev2_options_init first, then
 * change fields. Pointers in it only need to stay valid during the
 * hev2_connect call (everything is copied). Zero in a delay/timeout field
 * means "the default" for delays and "no timeout" for timeouts.
 *
 * The "@option" note after each member declares how the Python and Ruby
 * bindings offer it; tools/abigen generates their keyword, type check,
 * unit conversion and struct filling, and capi's conversion into core,
 * from it (docs/adding-an-option.md). "@option NAME: KIND, ...; core
 * FIELD": the keyword NAME in both bindings (the member's name without
 * "_ms"), of KIND: seconds (the member in ms; "0 = default" or "0 = none"
 * says what 0 means here), bool (its default; its two values when they
 * are constants) or int; "parameter": a named parameter of the bindings'
 * connect call; FIELD: the core.Dialer field ("!": the opposite of the
 * flag). "special" and "internal" members are written by hand. */
typedef struct hev2_options {
	size_t size; /* = sizeof(hev2_options); set by hev2_options_init
	                @option internal: the struct's version */

	/* RFC 8305 tuning (ms). 0: the RFC defaults (50, 250, 1). The attempt
	 * delay is clamped to [10, 2000] ms as the RFC asks. */
	int resolution_delay_ms; /* @option resolution_delay: seconds,
	                            0 = default; core ResolutionDelay */
	int connection_attempt_delay_ms; /* @option connection_attempt_delay:
	                                    seconds, 0 = default;
	                                    core ConnectionAttemptDelay */
	int first_address_family_count; /* 0..64; 0: 1
	                                   @option first_address_family_count:
	                                   int; core FirstAddressFamilyCount */

	/* Timeouts (ms, 0: none), with Ruby Socket.tcp's meaning:
	 * resolv: name resolution; connect: after every resolved address was
	 * tried (fast_fallback = 0: each attempt); open: the whole call, and it
	 * cannot be combined with the other two. */
	int resolv_timeout_ms; /* @option resolv_timeout: seconds, 0 = none,
	                          parameter; core ResolvTimeout */
	int connect_timeout_ms; /* @option connect_timeout: seconds, 0 = none,
	                           parameter; core ConnectTimeout */
	int open_timeout_ms; /* @option open_timeout: seconds, 0 = none,
	                        parameter; core OpenTimeout */

	int fast_fallback; /* 1 (default): the race; 0: serial, one at a time
	                      @option fast_fallback: bool, default true,
	                      parameter; core !DisableFastFallback */
	int family;        /* AF_UNSPEC (default), AF_INET or AF_INET6
	                      @option special: each language names the
	                      families its own way (socket.AF_INET, :ipv4) */

	/* Local address to bind: an IP literal (no name), or NULL. It restricts
	 * the destinations to its family. local_port 0..65535 (0: any). */
	const char *local_host; /* @option special: each binding's form of a
	                           source address (source_address, local_host) */
	int local_port; /* @option special: with local_host */

	/* Resolver: HEV2_RESOLVER_*. nameservers (built-in resolver only):
	 * comma-separated "IP", "IP:PORT" or "[IPv6]:PORT"; NULL: none. */
	int resolver; /* @option special: a name in each language ('builtin',
	                 :builtin), read with nameservers */
	const char *nameservers; /* @option special: a list, joined */

	/* Static address list, like curl's --resolve: entries separated by ';'
	 * or white space, each "NAME:ADDR[,ADDR...]" (IPv6 addresses bare or in
	 * brackets). A host matching a NAME exactly skips the resolver. */
	const char *static_hosts; /* @option special: Python's hosts mapping,
	                             Ruby's addresses of the host, as text */

	/* Socket options of the returned fd. nodelay: TCP_NODELAY. keepalive_ms
	 * > 0: SO_KEEPALIVE with that idle time (rounded up to seconds).
	 * blocking: 1 returns the fd in blocking mode (default 0: O_NONBLOCK).
	 * The fd is always close-on-exec. */
	int nodelay; /* @option nodelay: bool, default false; core NoDelay */
	int keepalive_ms; /* @option keepalive: seconds, 0 = none;
	                     core KeepAlive */
	int blocking; /* @option internal: each binding asks for the mode its
	                 socket objects want */

	/* Completion (see "Completion" above). on_done: NULL for none.
	 * job: 0 for none, else a registered job (HEV2_EOPTIONS otherwise). */
	hev2_done_fn on_done; /* @option internal: C's completion routes */
	void *on_done_data;   /* @option internal: with on_done */
	hev2_job job;         /* @option internal: C's completion routes */

	/* 1: record the race's events (hev2_get_event); costs a little memory
	 * per event. Default 0. */
	int record_events; /* @option internal: set for a binding's trace,
	                      report or trace files */

	/* HEV2_DRIVE_LIBRARY (default) or HEV2_DRIVE_WAITER: see "Driven by the
	 * waiter" above (since 1.2). */
	int drive; /* @option internal: each binding picks who plays its race */

	/* NAT64 (since 1.3): HEV2_NAT64_AUTO (0, default) or HEV2_NAT64_OFF.
	 * On a host with IPv6 and no IPv4 route (known from netlink; a host
	 * with one pays nothing), the network's NAT64 prefix is discovered
	 * once per network (RFC 7050: the AAAA query for ipv4only.arpa,
	 * through the handle's resolver, or a router advertisement's PREF64
	 * option, RFC 8781; the first connect waits for it only
	 * with its IPv4 destinations, at most 2 s; "none" is remembered for
	 * 30 s; a network change forgets it). IPv4 literals, static entries
	 * and A answers are then tried as IPv6 addresses inside the prefix
	 * (RFC 6052): the fd is AF_INET6 and synthesized_from names the IPv4
	 * address. Never for 127/8, 0/8, 169.254/16 or multicast. A DNS64
	 * answer inside the prefix is sorted as IPv4. Off with family or
	 * local_host restricting the family. */
	int nat64; /* @option nat64: bool, default true,
	              true = HEV2_NAT64_AUTO, false = HEV2_NAT64_OFF;
	              core !DisableNAT64 */
	/* History (see "History" above; since 1.3). history: 1 (default) reads
	 * and feeds the process's history of this network, 0 neither (and
	 * hev2_set_history(0) turns it off for every handle). history_lifetime_ms:
	 * how long a failure keeps its family second, the convergence setting
	 * (0: 600000, 10 min; at most HEV2_MAX_TIMEOUT_MS). */
	int history; /* @option history: bool, default true;
	                core !DisableHistory */
	int history_lifetime_ms; /* @option history_lifetime: seconds,
	                            0 = default; core HistoryLifetime */
	/* HTTPS records (since 1.5; Happy Eyeballs v3, RFC 9460). https_rr: 1
	 * adds the HTTPS query to a connect to a name (never to an IP literal,
	 * a static_hosts entry or a hosts-file name), asked of the handle's
	 * resolver (the system resolver asks resolv.conf's servers, as
	 * getaddrinfo has no HTTPS query): HOST for port 443,
	 * "_PORT._https.HOST" otherwise. Its services are tried first, by
	 * priority (equal ones shuffled), on their own port, each at its
	 * target's A/AAAA (its ipv4hint/ipv6hint until they answer); the
	 * origin's own addresses last. AliasMode is followed (8 at most); a
	 * record whose mandatory keys include one hev2 does not know, or whose
	 * ALPN set shares no protocol with alpn, is ignored. The HTTPS answer
	 * is waited for at most the resolution delay once an address answer is
	 * in; a later one joins the race. hev2_service says which service won.
	 * The TLS name stays the host given to hev2_connect (a service's
	 * target is no TLS name). Default 0: no query nobody asked for. */
	int https_rr; /* @option https_rr: bool, default false; core HTTPSRR */
	/* The protocols the caller's TLS offers, comma-separated, in its order
	 * ("h2,http/1.1" when NULL; at most 16, 1 to 255 bytes each): a service
	 * that offers none of them is skipped, so that an h3-only record is
	 * never used over TCP. Read during hev2_connect only. */
	const char *alpn; /* @option special: a list in each language (a
	                     sequence of str, an Array of String) */
	/* ech: 1 when the caller's TLS uses ECH: no connection is handed over
	 * before the HTTPS answer is final (waiting at most ech_wait_ms once
	 * the addresses are in; 0: 5000 ms; HEV2_MAX_TIMEOUT_MS: until the
	 * answer, bounded by resolv_timeout), and when every service carries
	 * an ECH configuration the origin's own addresses are not tried (RFC
	 * 9848: no fallback without ECH). */
	int ech; /* @option ech: bool, default false; core ECH */
	int ech_wait_ms; /* @option ech_wait: seconds, 0 = default;
	                    core ECHWait */
} hev2_options;

/* One family's lookup. */
typedef struct hev2_lookup_info {
	int family;    /* AF_INET6 (lookups[0]) or AF_INET (lookups[1]) */
	int state;     /* HEV2_LOOKUP_* */
	int eai;       /* getaddrinfo code (glibc's EAI_* numbers), 0 if none */
	int sys_errno; /* errno captured on the resolver's thread when eai is
	                  EAI_SYSTEM (else 0) */
	int n_addrs;   /* addresses it answered */
	double elapsed_ms;
} hev2_lookup_info;

/* The outcome of a handle (hev2_result). Set .size = sizeof before calling. */
typedef struct hev2_result_info {
	size_t size;

	int status; /* HEV2_OK or an outcome code (HEV2_ECONNECT ...) */

	/* The winner (status == HEV2_OK), else fd = -1 and the rest zero. */
	int fd; /* yours from now on: hev2_release no longer closes it */
	int family; /* AF_INET or AF_INET6 */
	int port;
	char address[HEV2_ADDRSTRLEN]; /* no brackets */
	struct sockaddr_storage sockaddr;
	socklen_t sockaddr_len;

	double elapsed_ms; /* from hev2_connect to the outcome */

	/* The primary cause of a failure: the errno of the last failed attempt
	 * (ECONNREFUSED ...; ETIMEDOUT for a timeout), and the getaddrinfo code
	 * when resolution is the cause. */
	int error;
	int eai;
	int timeout; /* HEV2_TIMEOUT_*: which timeout fired */

	hev2_lookup_info lookups[2]; /* [0] AAAA, [1] A */

	int n_attempts; /* for hev2_get_attempt */
	int n_events;   /* for hev2_get_event (0 unless record_events) */

	/* NAT64 (since 1.3): the IPv4 address the winner was synthesized from
	 * (address is then the IPv6 address it was reached at, family
	 * AF_INET6); "" when the winner was not synthesized. */
	char synthesized_from[HEV2_ADDRSTRLEN];
	/* What the network's history decided (see "History"; since 1.3).
	 * history_family: AF_INET or AF_INET6 tried first because of history,
	 * 0 when RFC 6724's order stood; history_reason says why, in one line
	 * ("IPv4 first: IPv6 to example.com lost 3 races without connecting in
	 * the last 10m0s on this network"), "" if nothing. history_samples > 0:
	 * the attempt delay was attempt_delay_ms = 2 x history_srtt_ms (the
	 * smoothed connect RTT of that many connects), clamped to [100, 2000]. */
	int history_family;
	int history_samples;
	double history_srtt_ms;
	double attempt_delay_ms;
	char history_reason[HEV2_REASONLEN];
} hev2_result_info;

/* One connection attempt (hev2_get_attempt). Set .size before calling. */
typedef struct hev2_attempt_info {
	size_t size;
	char address[HEV2_ADDRSTRLEN];
	int family;
	int port;
	int error;     /* errno; 0 for the winner or a loser closed early */
	int won;       /* 1 for the winner */
	int bind_failed; /* 1 if .error came from binding the local address */
	double start_ms, end_ms; /* since hev2_connect; end 0 if cut short */
	/* NAT64 (since 1.3): the IPv4 address .address was synthesized from,
	 * "" if it was not. */
	char synthesized_from[HEV2_ADDRSTRLEN];
	/* 1: pending for at least the attempt delay, then closed because
	 * another attempt won: how a blackholed path shows (since 1.3). */
	int lost;
} hev2_attempt_info;

/* One step of the race (hev2_get_event). Set .size before calling. */
typedef struct hev2_event_info {
	size_t size;
	double at_ms; /* since hev2_connect */
	int kind;     /* HEV2_EV_* */
	int family;   /* AF_INET6, AF_INET or 0 */
	int attempt;  /* attempt index for attempt events, else -1 */
	char address[HEV2_ADDRSTRLEN];
	int port;
	int error;   /* errno, 0 if none */
	int eai;     /* getaddrinfo code for lookup-failed, else 0 */
	int timeout; /* HEV2_TIMEOUT_* for a timeout event */
	char detail[HEV2_DETAILLEN]; /* readable detail (addresses, message) */
} hev2_event_info;

/* Process-wide counters (hev2_stats). Set .size before calling. */
typedef struct hev2_stats_info {
	size_t size;
	uint64_t handles_created;  /* since load */
	uint64_t handles_live;     /* not yet released */
	uint64_t handles_running;  /* not yet done, or done with its callback
	                              or job not yet fired */
	uint64_t max_handles;      /* the cap on handles_running */
	uint64_t over_capacity;    /* hev2_connect calls refused with ECAPACITY */
	uint64_t callbacks_fired;
	uint64_t jobs_registered;
	uint64_t jobs_triggered;   /* trigger calls (before coalescing) */
	uint64_t jobs_run;
	/* Added in 1.0 after the first cut (callers passing the shorter size
	 * still work): the system resolver. Each getaddrinfo call holds a
	 * thread; at most max_lookups run at once, further lookups queue (and
	 * stay cancellable). An abandoned call (its connection canceled or
	 * decided) finishes on its own thread and is freed there. */
	uint64_t lookups_in_flight; /* getaddrinfo calls running, abandoned included */
	uint64_t lookups_queued;    /* lookups waiting for a free slot (a slot is
	                               held only while someone waits) */
	uint64_t lookups_abandoned; /* calls left running by their caller, ever */
	uint64_t resolver_threads;  /* threads of the getaddrinfo pool, now */
	uint64_t max_lookups;       /* the cap on lookups still waited for */
	/* Added in 1.2: the thread cap of the system resolver (see "Capacity"). */
	uint64_t max_resolver_threads; /* the cap on lookups_in_flight */
	uint64_t lookups_refused;   /* lookups failed at once at that cap */
	/* Added in 1.2: the Go runtime inside the library, for leak hunting
	 * (filling these stops the Go world for a few microseconds). */
	uint64_t go_goroutines;     /* goroutines alive now */
	uint64_t go_heap_inuse;     /* bytes of the Go heap in use */
	/* Added in 1.3: the history (see "History"). */
	uint64_t history_enabled;     /* the process-wide switch: 1 on, 0 off */
	uint64_t history_entries;     /* (network, host name) keys held now */
	uint64_t history_max_entries; /* the LRU bound on history_entries */
	uint64_t history_entry_bytes; /* memory per key, its host name aside */
	uint64_t history_recorded;    /* attempt outcomes recorded, ever */
	uint64_t history_evicted;     /* keys evicted by the bound, ever */
	uint64_t history_reordered;   /* connects whose family order history set */
	uint64_t history_delay_set;   /* connects whose attempt delay came from
	                                 the observed RTT */
	/* Added in 1.4: the system resolver's hand-over (see "Capacity"). */
	uint64_t handover_at;         /* getaddrinfo calls in flight from which
	                                 DNS names go to the built-in client */
	uint64_t lookups_handed_over; /* lookups asked of the built-in client
	                                 that way, ever */
} hev2_stats_info;

/* ---- library ---------------------------------------------------------------- */

/* HEV2_VERSION_NUM of the library. Async-signal-safe. */
int hev2_version(void);

/* A static, readable text for any status (unknown codes included); never
 * NULL. Async-signal-safe. */
const char *hev2_strerror(int status);

/* Starts the Go runtime now rather than on the first connect (~4 ms). (The
 * fork check needs no call: its MADV_WIPEONFORK page is made when the
 * library is loaded; see "fork()" above.) It also makes the descriptors
 * the library keeps for the life of the process (its epoll fd, and the Go
 * runtime's own poller; hev2_connect makes them too, first thing):
 * HEV2_ESYSTEM with errno EMFILE if no fd is free, where the Go runtime
 * would otherwise abort the process later. Optional; idempotent. */
int hev2_init(void);

/* Sets the cap on handles running at once (1..1000000; default
 * HEV2_DEFAULT_MAX_HANDLES). Beyond it hev2_connect returns HEV2_ECAPACITY.
 * Lowering it below the current count refuses new ones until enough finish. */
int hev2_set_max_handles(int max);

/* Fills *s (s->size set by the caller). */
int hev2_stats(hev2_stats_info *s);

/* ---- connections ------------------------------------------------------------ */

/* Fills *o with the defaults and o->size. HEV2_EINVAL if o is NULL.
 * Since 1.2 this name is a macro (below) that passes the caller's
 * sizeof(hev2_options) to hev2_options_init_size, so the library never
 * writes past a struct compiled against an older header; the function of
 * this name (called by programs built against 1.0/1.1, or as
 * (hev2_options_init)(o)) fills the 1.0 layout only. */
int hev2_options_init(hev2_options *o);

/* Fills the first size bytes of *o with the defaults and sets o->size =
 * size (since 1.2). size is the caller's sizeof(hev2_options): at least
 * 1.0's, at most 4096; HEV2_EINVAL otherwise or if o is NULL. Bindings
 * that lay the struct out themselves call this with their own size.
 * Async-signal-safe. */
int hev2_options_init_size(hev2_options *o, size_t size);
#define hev2_options_init(o) hev2_options_init_size((o), sizeof *(o))

/* Starts connecting to host:port and returns at once with *out set to a new
 * handle; nothing blocks on the calling thread (lookups run on library
 * threads, connects are non-blocking; a loopback connect, which the kernel
 * settles inside connect(2), may decide the race before the call returns:
 * its callback still fires on a library thread, after *out is set). host: a
 * name, or an IPv4/IPv6 literal (brackets allowed). port: decimal 1..65535
 * or a service name from /etc/services. o: NULL for the defaults.
 * On error *out is set to 0 and no callback or job will fire. */
int hev2_connect(const char *host, const char *port, const hev2_options *o,
                 hev2_conn *out);

/* The same with an explicit host length, for callers whose strings are not
 * NUL-terminated or may contain NUL bytes (a NUL inside -> HEV2_EHOST). */
int hev2_connect_len(const char *host, size_t host_len, const char *port,
                     const hev2_options *o, hev2_conn *out);

/* Connects on the calling thread in one call (since 1.2): hev2_connect with
 * drive = HEV2_DRIVE_WAITER (whatever o says), then hev2_wait(*out,
 * timeout_ms). For FFIs that pay per call (ctypes, Fiddle), a healthy
 * connect is this one call:
 *   - HEV2_OK: the race is won; *fd is the connected socket (yours, as from
 *     hev2_result), and the handle is already released (*out is 0).
 *   - HEV2_EAGAIN: timeout_ms elapsed first; *out is the running handle:
 *     go on with hev2_wait(*out, ...) (nothing is lost), then hev2_result.
 *   - an outcome code (HEV2_ECONNECT, HEV2_ERESOLVE, HEV2_ETIMEOUT,
 *     HEV2_ECANCELED): the race failed; *out is the handle, for hev2_result,
 *     hev2_errmsg and hev2_get_attempt; release it.
 *   - any other code: the call was refused (bad host, port, options,
 *     timeout_ms, NULL out or fd); *out is 0, nothing was started.
 * *out is set before the wait begins, so another thread may hev2_cancel it
 * (an interpreter's unblocking function). A race won at its first look,
 * before the call could block (a loopback or LAN connect), never gets a
 * handle: *out stays 0 throughout. *fd is -1 unless HEV2_OK. */
int hev2_connect_wait(const char *host, const char *port, const hev2_options *o,
                      int timeout_ms, hev2_conn *out, int *fd);

/* Blocks until c is done (HEV2_OK) or timeout_ms elapses (HEV2_EAGAIN).
 * timeout_ms: -1 forever, 0 just check, 1..HEV2_MAX_TIMEOUT_MS. The outcome
 * itself is in hev2_result. A concurrent hev2_release makes it return
 * HEV2_EHANDLE. For a handle driven by the waiter (HEV2_DRIVE_WAITER), the
 * race is played on the calling thread while it waits. */
int hev2_wait(hev2_conn c, int timeout_ms);

/* An fd that becomes readable when c is done and stays readable (an eventfd,
 * created on first call). It belongs to the handle: do not read it, do not
 * close it; it is closed by hev2_release. Returns the fd (>= 0) or a
 * negative status. */
int hev2_fd(hev2_conn c);

/* Cancels c: any thread, any moment, idempotent; a no-op once c is done.
 * The outcome becomes HEV2_ECANCELED unless c was already done. */
int hev2_cancel(hev2_conn c);

/* Fills *r (r->size set by the caller) once c is done: HEV2_EAGAIN while it
 * runs. When r->status is HEV2_OK, r->fd (connected, close-on-exec) becomes
 * the caller's: the library never touches it again, hev2_release will not
 * close it, and later hev2_result calls report the same number. */
int hev2_result(hev2_conn c, hev2_result_info *r);

/* Attempt i (0 <= i < n_attempts) of a done handle. */
int hev2_get_attempt(hev2_conn c, int i, hev2_attempt_info *a);

/* Event i (0 <= i < n_events) of a done handle. */
int hev2_get_event(hev2_conn c, int i, hev2_event_info *e);

/* The name of an event kind ("attempt-started" ...; "unknown" for others).
 * Async-signal-safe. */
const char *hev2_event_name(int kind);

/* One readable line explaining c's outcome ("connected to ...",
 * "connect example.test:443: connection refused [...]", "in progress", or
 * the text of a status such as "invalid handle" when c is not usable).
 * Never NULL. The text lives in a thread-local buffer: valid until the next
 * hev2_errmsg call on the same thread. */
const char *hev2_errmsg(hev2_conn c);

/* Releases c: cancels it if still running, closes its winner fd unless
 * hev2_result handed it over, closes hev2_fd's fd, and makes the id invalid.
 * hev2_release(0) is a no-op returning HEV2_OK; a second release of the same
 * id returns HEV2_EHANDLE. The callback of a running handle still fires
 * (with HEV2_ECANCELED). */
int hev2_release(hev2_conn c);

/* ---- postponed jobs ----------------------------------------------------------
 * Modelled on Ruby's rb_postponed_job_preregister/trigger. Register a job
 * once (at start-up, on the host's thread); completion (hev2_options.job) or
 * anyone (hev2_job_trigger) only *triggers* it: a lock-free flag, safe from
 * any thread and from a signal handler. Triggers coalesce: a job triggered
 * several times before it runs runs once (a HEV2_JOB_DIRECT job, below, is
 * called once per trigger instead). The host runs triggered jobs with
 * hev2_run_jobs() at a safe point (e.g. holding its interpreter lock),
 * watching hev2_jobs_fd() from its event loop to know when to. A job
 * registered HEV2_JOB_DIRECT is instead called on the triggering thread (for
 * C hosts, or a Ruby 3.3+ extension whose direct job only calls
 * rb_postponed_job_trigger; an interpreter asleep in a blocking call runs
 * no postponed job until something wakes it, so such an extension keeps a
 * wake-up of its own: examples/ruby-ext and examples/python-ext show one).
 * Jobs are never unregistered. These functions are
 * pure C: they never enter Go and work in a fork child. */

/* Registers fn(data); *out receives the job id. HEV2_ECAPACITY once
 * HEV2_MAX_JOBS are registered; HEV2_EINVAL for a NULL fn/out or an unknown
 * flag. */
int hev2_job_register(hev2_job_fn fn, void *data, unsigned flags,
                      hev2_job *out);

/* Triggers job j (lock-free; async-signal-safe unless j is DIRECT).
 * HEV2_EINVAL for an unregistered id. */
int hev2_job_trigger(hev2_job j);

/* Runs, on the calling thread, every job triggered since its last run.
 * Returns how many ran (>= 0). Jobs triggered while it runs are run by the
 * next call (and hev2_jobs_fd is readable again). */
int hev2_run_jobs(void);

/* An fd (an eventfd) readable while triggered jobs wait to be run; reading
 * it is not needed (hev2_run_jobs drains it). Owned by the library. */
int hev2_jobs_fd(void);

/* ---- the thread's last error (added in 1.1) ----------------------------------
 * See "Status codes" above. Both read only the calling thread's record. */

/* One line explaining the last negative status a hev2 function returned on
 * this thread: "<function>: <detail>", with ": <strerror(errno)>" appended
 * for HEV2_ESYSTEM; at most HEV2_ERRMSGLEN - 1 characters. The empty string
 * if no hev2 call on this thread has failed yet; never NULL. A successful
 * call leaves it unchanged. The text lives in a thread-local buffer: valid
 * until the next hev2_last_error call on the same thread. */
const char *hev2_last_error(void);

/* The errno behind the thread's last failure if it was HEV2_ESYSTEM
 * (EMFILE ...), else 0. Async-signal-safe. */
int hev2_last_errno(void);

/* ---- the establishment report (since 1.3) -------------------------------------
 * How a finished race went, in numbers: which family won and why, how long
 * it spent resolving, waiting on the Resolution Delay and connecting, when
 * each lookup answered (or failed) and how each attempt ended. Computed
 * from the race's recorded events the first time it is asked for (one
 * implementation in the library, the Go API's core.Report), so it costs
 * nothing unless the handle was made with hev2_options.record_events = 1.
 *
 * Times are milliseconds since the race's start, on the race's own clock
 * (the moment the lookups, or for an IP literal or a static list the first
 * attempt, were started; hev2_result_info.elapsed_ms counts from
 * hev2_connect and can be a few microseconds longer). The phases overlap:
 * one family may race while the other still resolves, and the Resolution
 * Delay lies inside resolving. Each is a span, not a share of the total:
 *   resolving          from the first lookup's start to the end of the last
 *                      one: its answer, its failure, or the moment the race
 *                      stopped waiting for it (resolv_timeout, or the race's
 *                      end). Not entered without lookups (an IP literal, a
 *                      static list).
 *   resolution_delay   from A's answer, when it came while AAAA was still
 *                      pending and before any attempt (RFC 8305 section 3),
 *                      to the first of: AAAA's answer or failure, the
 *                      delay's expiry, the race's end.
 *   connecting         from the first attempt's start to the race's outcome
 *                      (the winner's connect, or the failure).
 *
 * Use hev2_connect (+ hev2_wait), not hev2_connect_wait, for a handle you
 * want the report of: hev2_connect_wait releases the handle of a won race
 * before it returns. */

/* Why the winner's family won (hev2_report_info.reason): looking at the
 * other family, the first that applies (an address synthesized for NAT64
 * counts as the IPv4 destination it stands for). */
#define HEV2_REPORT_REASON_NONE                0 /* nothing connected */
#define HEV2_REPORT_REASON_FIRST_TO_CONNECT    1 /* an attempt of the other
                                                    family was still in
                                                    flight (it lost) */
#define HEV2_REPORT_REASON_OTHER_FAMILY_FAILED 2 /* every attempt of the
                                                    other family (one at
                                                    least) had failed */
#define HEV2_REPORT_REASON_ONLY_FAMILY_RESOLVED 3 /* the other family's lookup
                                                    failed, timed out, or had
                                                    not answered yet */
#define HEV2_REPORT_REASON_OTHER_FAMILY_NOT_TRIED 4 /* it had answered, but
                                                    none of its addresses had
                                                    been tried yet */
#define HEV2_REPORT_REASON_ONLY_FAMILY_ASKED   5 /* only the winner's family
                                                    was looked up (family
                                                    restriction, local
                                                    address) */
#define HEV2_REPORT_REASON_GIVEN_ADDRESSES     6 /* no lookup (IP literal,
                                                    static list) and no
                                                    address of the other
                                                    family was tried */

/* How a lookup ended (hev2_report_lookup_info.state). */
#define HEV2_REPORT_LOOKUP_NOT_ASKED 0 /* never started (IP literal, static
                                          list, family restriction) */
#define HEV2_REPORT_LOOKUP_ABANDONED 1 /* still pending when the race ended */
#define HEV2_REPORT_LOOKUP_ANSWERED  2 /* answered with addresses */
#define HEV2_REPORT_LOOKUP_FAILED    3 /* failed: .eai (NODATA included) */
#define HEV2_REPORT_LOOKUP_TIMED_OUT 4 /* cut short by resolv_timeout */

/* How an attempt ended (hev2_report_attempt_info.outcome). */
#define HEV2_REPORT_ATTEMPT_CONNECTED 1 /* it won */
#define HEV2_REPORT_ATTEMPT_FAILED    2 /* connect (or bind) failed: .error */
#define HEV2_REPORT_ATTEMPT_TIMED_OUT 3 /* a caller's timeout closed it */
#define HEV2_REPORT_ATTEMPT_LOST      4 /* closed as a loser: another won */
#define HEV2_REPORT_ATTEMPT_CANCELED  5 /* closed by hev2_cancel/release */

/* One span of the race (see the phases above). */
typedef struct hev2_report_phase {
	int happened;    /* 1 if the race entered the phase; else all zero */
	double start_ms; /* since the race's start */
	double end_ms;
} hev2_report_phase;

/* The whole race (hev2_report). Set .size = sizeof before calling. */
typedef struct hev2_report_info {
	size_t size;
	int status;    /* the handle's outcome, as hev2_result_info.status */
	int connected; /* 1 if an attempt won the race (with status
	                  HEV2_ECANCELED: a win that raced hev2_cancel; the
	                  socket was closed, never handed over) */
	int winner;    /* that attempt's index (hev2_report_attempt), else -1 */
	int family;    /* its family, AF_INET6 or AF_INET; 0 if none */
	int reason;    /* HEV2_REPORT_REASON_* */
	int timeout;   /* HEV2_TIMEOUT_*: the last of the caller's timeouts that
	                  fired, if any; a won race may have seen one (a
	                  resolv_timeout that gave up a silent family) */
	double elapsed_ms; /* the race's start to its outcome */
	hev2_report_phase resolving;
	hev2_report_phase resolution_delay;
	hev2_report_phase connecting;
	int resolution_delay_expired; /* 1 if the Resolution Delay ran its
	                                 whole length (AAAA had not answered) */
	int n_attempts; /* for hev2_report_attempt (lookups: always 2) */
	/* Since 1.5: the HTTPS part (hev2_options.https_rr), all 0 without it. */
	int https_state;       /* HEV2_HTTPS_*: NONE if no HTTPS query was made */
	int n_service_lookups; /* for hev2_report_service_lookup */
	int n_services;        /* usable services, for hev2_report_service */
	int n_skipped;         /* records set aside, for hev2_report_skipped */
	int n_replaced;        /* replaced hints, for hev2_report_replaced */
} hev2_report_info;

/* One family's lookup (hev2_report_lookup). Set .size before calling. */
typedef struct hev2_report_lookup_info {
	size_t size;
	int family;    /* AF_INET6 (i = 0) or AF_INET (i = 1), asked or not */
	int state;     /* HEV2_REPORT_LOOKUP_* */
	int eai;       /* getaddrinfo code of a failure (FAILED), else 0 */
	int sys_errno; /* errno behind an EAI_SYSTEM, else 0 */
	int n_addrs;   /* addresses it answered (ANSWERED) */
	double start_ms, end_ms; /* asked; answered, failed or given up (its
	                            answer time is end - start); 0 if not asked */
} hev2_report_lookup_info;

/* One connection attempt (hev2_report_attempt). Set .size before calling. */
typedef struct hev2_report_attempt_info {
	size_t size;
	char address[HEV2_ADDRSTRLEN]; /* no brackets */
	int family;      /* AF_INET6 or AF_INET */
	int port;
	int outcome;     /* HEV2_REPORT_ATTEMPT_* */
	int error;       /* errno: of a FAILED attempt (ECONNREFUSED ...);
	                    ETIMEDOUT for one TIMED_OUT; else 0 */
	int bind_failed; /* 1 if .error came from binding the local address */
	double start_ms, end_ms; /* started; connected, failed or closed */
	char synthesized_from[HEV2_ADDRSTRLEN]; /* NAT64: the IPv4 address
	                    .address was synthesized from, else ""; such an
	                    attempt counts as IPv4 in .reason (it reaches an
	                    IPv4 destination) */
	/* Since 1.5. */
	int service; /* the HTTPS service its endpoint belongs to
	                (hev2_report_service's number, 1 first); 0: the
	                origin's own addresses */
	int origin;  /* HEV2_ORIGIN_*: where its endpoint came from (0: a
	                trace recorded without it) */
} hev2_report_attempt_info;

/* Where an attempt's endpoint came from (hev2_report_attempt_info.origin;
 * since 1.5). */
#define HEV2_ORIGIN_DNS         1 /* the origin's A/AAAA answer */
#define HEV2_ORIGIN_STATIC      2 /* an IP literal or a static list */
#define HEV2_ORIGIN_SYNTHESIZED 3 /* NAT64: synthesized from an IPv4 address */
#define HEV2_ORIGIN_HINT        4 /* a service's ipv4hint/ipv6hint */
#define HEV2_ORIGIN_SERVICE     5 /* the A/AAAA answer of a service's target */

/* The record type a lookup of the HTTPS part asked
 * (hev2_report_service_lookup_info.query; DNS's numbers). */
#define HEV2_REPORT_QUERY_A     1
#define HEV2_REPORT_QUERY_AAAA  28
#define HEV2_REPORT_QUERY_HTTPS 65

/* How a lookup of the HTTPS part ended
 * (hev2_report_service_lookup_info.state). */
#define HEV2_REPORT_SERVICE_LOOKUP_PENDING  0 /* still pending at the end */
#define HEV2_REPORT_SERVICE_LOOKUP_ANSWERED 1 /* .n_records or .n_addrs */
#define HEV2_REPORT_SERVICE_LOOKUP_FAILED   2 /* .eai (NODATA, NXDOMAIN ...) */
#define HEV2_REPORT_SERVICE_LOOKUP_CANCELED 3 /* the race ended, or
                                                 resolv_timeout fired */

/* One lookup of the HTTPS part (hev2_report_service_lookup; since 1.5): the
 * HTTPS query, an alias target's, or a service target's A or AAAA. Set
 * .size before calling. */
typedef struct hev2_report_service_lookup_info {
	size_t size;
	int query; /* HEV2_REPORT_QUERY_* */
	int state; /* HEV2_REPORT_SERVICE_LOOKUP_* */
	char name[HEV2_MAX_HOSTLEN + 2]; /* fully qualified, final dot */
	int n_records; /* ServiceMode records of an answered HTTPS query (0:
	                  an alias) */
	int n_addrs;   /* addresses of an answered A/AAAA */
	int eai;       /* getaddrinfo code of a failure (FAILED), else 0 */
	int sys_errno; /* errno behind an EAI_SYSTEM, else 0 */
	double start_ms, end_ms; /* asked; answered, failed or canceled */
} hev2_report_service_lookup_info;

#define HEV2_ALPNLEN 512 /* hev2_service_info.alpn, hev2_report_service_info.alpn */

/* One usable service (hev2_report_service; since 1.5), in the order they
 * were tried. Set .size before calling. */
typedef struct hev2_report_service_info {
	size_t size;
	int number;   /* 1 first: hev2_report_attempt_info.service */
	int priority;
	int port;     /* the service's port; 0: the origin's */
	char target[HEV2_MAX_HOSTLEN + 2]; /* fully qualified, final dot */
	char alpn[HEV2_ALPNLEN]; /* its ALPN set, comma-separated */
	int ech;      /* 1 if it carries an ECH configuration */
	int n_hints;  /* address hints the race tried for it */
} hev2_report_service_info;


/* A ServiceMode record the rules set aside (hev2_report_skipped; since
 * 1.5). Set .size before calling. */
typedef struct hev2_report_skipped_info {
	size_t size;
	int priority;
	int port;
	char target[HEV2_MAX_HOSTLEN + 2]; /* as the record gave it ("." too) */
	char reason[HEV2_REASONLEN]; /* why: "mandatory key65000 unknown", "no
	                                protocol in common (h3)" ... */
	double at_ms;
} hev2_report_skipped_info;

/* An untried hint its target's own answer replaced (hev2_report_replaced;
 * since 1.5). Set .size before calling. */
typedef struct hev2_report_replaced_info {
	size_t size;
	int service; /* its service's number */
	char address[HEV2_ADDRSTRLEN];
	int family;  /* AF_INET6 or AF_INET */
	int port;
	double at_ms;
} hev2_report_replaced_info;

/* Fills *r (r->size set by the caller) with c's report. HEV2_EINVAL for a
 * NULL r, a size out of range, or a handle whose race was not recorded
 * (record_events was 0, or it ended before it started: a static list with
 * no address of the wanted family); HEV2_EHANDLE for 0, an unknown or a
 * released handle; HEV2_EAGAIN while c is running. hev2_last_error says
 * which. Since 1.3. */
int hev2_report(hev2_conn c, hev2_report_info *r);

/* Lookup i (0: AAAA, 1: A) of c's report; the same errors, and HEV2_EINVAL
 * for an i out of range. Since 1.3. */
int hev2_report_lookup(hev2_conn c, int i, hev2_report_lookup_info *l);

/* Attempt i (0 <= i < n_attempts, in the order they started) of c's
 * report; the same errors, and HEV2_EINVAL for an i out of range.
 * Since 1.3. */
int hev2_report_attempt(hev2_conn c, int i, hev2_report_attempt_info *a);

/* The HTTPS part of c's report (since 1.5): lookup i (0 <= i <
 * n_service_lookups, in the order they started), usable service i (0 <= i
 * < n_services), set-aside record i (< n_skipped), replaced hint i (<
 * n_replaced). The same errors as hev2_report, and HEV2_EINVAL for an i out
 * of range (any i when the race made no HTTPS query). */
int hev2_report_service_lookup(hev2_conn c, int i, hev2_report_service_lookup_info *l);
int hev2_report_service(hev2_conn c, int i, hev2_report_service_info *s);
int hev2_report_skipped(hev2_conn c, int i, hev2_report_skipped_info *s);
int hev2_report_replaced(hev2_conn c, int i, hev2_report_replaced_info *r);

/* ---- trace files (since 1.3) --------------------------------------------------
 * A done handle whose race was recorded (hev2_options.record_events = 1)
 * can be written as a file other tools read. One implementation in the
 * library (the Go API's core.WriteTrace), the same bytes for the same
 * race; docs/trace-names.md in the source lists every name each format holds.
 * Use hev2_connect (+ hev2_wait): hev2_connect_wait releases the handle of
 * a won race before returning, with its events. */
#define HEV2_TRACE_SVG    1 /* a waterfall picture: one lane per lookup, per
                               delay and per attempt on a time axis in ms;
                               self-contained SVG (no script, no external
                               font or stylesheet) */
#define HEV2_TRACE_QLOG   2 /* qlog JSON-SEQ (RFC 7464) with the events of
                               draft-kuehlewind-happy-qlog-00 (event schema
                               hev3-00), hev2's own where it has none */
#define HEV2_TRACE_CHROME 3 /* Chrome trace-event JSON (Perfetto,
                               chrome://tracing): one track per lookup,
                               delay and attempt */

/* Writes c's race in format (HEV2_TRACE_*): to the file at path (created,
 * or truncated, with mode 0644 less the umask; close-on-exec) when path is
 * not NULL and fd is -1, or to fd (>= 0, when path is NULL: written at
 * its current offset, all of it, and left open). Returns HEV2_OK, or
 * HEV2_EINVAL (format unknown; both or neither of path and fd; an empty
 * path; a handle that recorded no events: record_events was 0),
 * HEV2_EHANDLE (0, unknown or released), HEV2_EAGAIN (c is still running),
 * HEV2_ESYSTEM (opening or writing failed: hev2_last_errno says why).
 * Since 1.3. */
int hev2_write_trace(hev2_conn c, int format, int fd, const char *path);

/* History (since 1.3; see "History" above). hev2_set_history(1) turns the
 * process-wide history on (the default at load), 0 off: off, no handle
 * reads or feeds it, whatever its options say; what was learned is kept.
 * Other values: HEV2_EINVAL. hev2_clear_history forgets everything learned,
 * on every network. Both thread-safe. */
int hev2_set_history(int on);
int hev2_clear_history(void);

/* ---- HTTPS records (since 1.5) -------------------------------------------
 * What the HTTPS query (hev2_options.https_rr) gave a handle. */
#define HEV2_HTTPS_NONE        0 /* no HTTPS query was made */
#define HEV2_HTTPS_ANSWERED    1 /* services came (possibly none usable) */
#define HEV2_HTTPS_NODATA      2 /* the name has no HTTPS records */
#define HEV2_HTTPS_NXDOMAIN    3 /* the name does not exist */
#define HEV2_HTTPS_FAILED      4 /* SERVFAIL, refused, a network error */
#define HEV2_HTTPS_TIMEOUT     5 /* no answer in time */
#define HEV2_HTTPS_MALFORMED   6 /* records came and none could be decoded */
#define HEV2_HTTPS_ALIAS_LIMIT 7 /* the AliasMode chain was too long */
#define HEV2_HTTPS_PENDING     8 /* the race ended before the answer */

/* HEV2_ALPNLEN (hev2_service_info.alpn) is defined with the report. */

/* The winner's service (hev2_service). Set .size = sizeof, and ech and
 * ech_size to a buffer for the ECH configuration (or NULL and 0). */
typedef struct hev2_service_info {
	size_t size;
	int state;       /* HEV2_HTTPS_* */
	int n_services;  /* usable services */
	/* 1: the winner is a service's endpoint (the fields below); 0: it came
	 * from the origin's own A/AAAA (or the race failed). */
	int has_service;
	int priority;
	int port; /* the service's port; 0: the origin's */
	char target[HEV2_MAX_HOSTLEN + 2]; /* fully qualified, final dot */
	/* Its ALPN set, comma-separated: information, since the caller's TLS
	 * still offers its own full list in its ClientHello. */
	char alpn[HEV2_ALPNLEN];
	/* Its ECHConfigList, ready for SSL_set1_ech_config_list: ech_len bytes
	 * (0: none), copied into ech when ech_len <= ech_size (else nothing is
	 * copied: call again with a bigger buffer). The TLS server name stays
	 * the host given to hev2_connect. */
	unsigned char *ech;
	size_t ech_size;
	size_t ech_len;
} hev2_service_info;

/* Fills s for c (done). Returns HEV2_OK, HEV2_EINVAL (s NULL or its size
 * too small), HEV2_EHANDLE (0, unknown or released), HEV2_EAGAIN (still
 * running). */
int hev2_service(hev2_conn c, hev2_service_info *s);

#ifdef __cplusplus
}
#endif

#endif /* HEV2_H */
