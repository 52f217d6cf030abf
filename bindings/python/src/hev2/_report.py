"""The establishment report of a connection: how its race went.

``hev2.create_connection(address, report=True)`` records the race and reads
the library's report (hev2_report, built by the library's core from the
race's events: one implementation for every binding) before the handle is
released. The connected socket's report is ``hev2.report_of(sock)``; a
failed connection's exception carries it as ``exc.hev2_report``.

Times are seconds since the race's start (the moment the lookups, or for an
IP literal or a static address list the first attempt, were started). The
phases overlap; each is a span of the race, not a share of the total:

- resolving: from the first lookup's start to the end of the last one (its
  answer, its failure, or the moment the race stopped waiting for it);
  None without lookups (IP literal, ``hosts=``);
- resolution_delay: from A's answer, when it came while AAAA was still
  pending and before any attempt (RFC 8305 section 3), to the first of
  AAAA's answer or failure, the delay's expiry, the race's end;
- connecting: from the first attempt's start to the outcome.
"""

from __future__ import annotations

import ctypes
import socket
import weakref
from dataclasses import dataclass

from . import _abi
from ._connect import WAIT_SLICE_MS, wrap_socket
from ._handle import Handle, Winner, check, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._options import ConnectRequest


@dataclass(frozen=True)
class Phase:
    """One span of the race, in seconds since its start."""

    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class LookupReport:
    """One family's lookup."""

    family: str  # "ipv6" (AAAA) or "ipv4" (A), asked or not
    state: str  # "not-asked", "abandoned" (still pending at the end), "answered", "failed", "timed-out"
    start: float  # asked (0.0 when not asked)
    end: float  # answered, failed or given up
    addresses: int  # how many it answered
    eai: int  # getaddrinfo code of a failure, else 0
    errno: int  # errno behind an EAI_SYSTEM, else 0

    @property
    def duration(self) -> float:
        """Its answer (or failure) time."""
        return self.end - self.start


@dataclass(frozen=True)
class AttemptReport:
    """One connection attempt."""

    address: str
    family: str  # "ipv6" or "ipv4"
    port: int
    # "connected" (it won), "failed" (errno says why), "timed-out" (a timeout
    # closed it), "lost" (closed as a loser: another won), "canceled"
    outcome: str
    errno: int  # ECONNREFUSED ... for "failed", ETIMEDOUT for "timed-out", else 0
    bind_failed: bool  # errno came from binding the local address
    start: float
    end: float
    # NAT64: the IPv4 address `address` was synthesized from, else ""; such
    # an attempt counts as IPv4 in Report.reason (it reaches an IPv4 host).
    synthesized_from: str = ""
    # The HTTPS service its endpoint belongs to (HTTPSReport.services'
    # number, 1 first); 0: the origin's own addresses.
    service: int = 0
    # Where its endpoint came from: "dns" (the origin's A/AAAA), "static"
    # (IP literal, hosts=), "synthesized" (NAT64), "hint" (a service's
    # address hint), "service" (its target's A/AAAA).
    origin: str = ""

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class ServiceLookupReport:
    """One lookup of the HTTPS part: the HTTPS query (of the name or an
    alias target), or a service target's A or AAAA."""

    query: str  # "HTTPS", "A" or "AAAA"
    name: str  # fully qualified
    state: str  # "pending" (at the end), "answered", "failed", "canceled"
    start: float
    end: float
    records: int  # ServiceMode records of an answered HTTPS query (0: an alias)
    addresses: int  # addresses of an answered A/AAAA
    eai: int  # getaddrinfo code of a failure, else 0
    errno: int

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class ServiceReport:
    """One usable service, in the order they were tried."""

    number: int  # 1 first: AttemptReport.service
    priority: int
    target: str  # fully qualified
    port: int  # 0: the origin's
    alpn: tuple[str, ...]
    ech: bool  # it carries an ECH configuration
    hints: int  # address hints the race tried for it


@dataclass(frozen=True)
class SkippedRecord:
    """A ServiceMode record the rules set aside."""

    priority: int
    target: str  # as the record gave it ("." too)
    port: int
    reason: str  # "no protocol in common (h3)", "mandatory key65000 unknown" ...
    at: float


@dataclass(frozen=True)
class ReplacedHint:
    """An untried hint its target's own answer replaced."""

    service: int
    address: str
    family: str
    port: int
    at: float


@dataclass(frozen=True)
class HTTPSReport:
    """The HTTPS part of the race (create_connection(https_rr=True))."""

    # How the query ended, as hev2.service_of names it: "answered",
    # "nodata", "nxdomain", "failed", "timeout", "malformed", "alias-limit";
    # "pending" when the race ended before the answer.
    state: str
    lookups: tuple[ServiceLookupReport, ...]  # in the order they started
    services: tuple[ServiceReport, ...]
    skipped: tuple[SkippedRecord, ...]
    replaced: tuple[ReplacedHint, ...]


@dataclass(frozen=True)
class Report:
    """How one connection's race went."""

    connected: bool  # an attempt won
    winner: int  # its index in attempts, -1 if none
    family: str  # the winner's family ("ipv6" / "ipv4"), "" if none
    # Why that family won, looking at the other one: "first-to-connect" (an
    # attempt of it was still in flight), "other-family-failed" (all its
    # attempts failed), "only-family-resolved" (its lookup failed, timed out
    # or had not answered), "other-family-not-tried" (it answered, nothing
    # of it was tried yet), "only-family-asked" (family restriction, local
    # address), "given-addresses" (IP literal or static list); "none" when
    # nothing connected.
    reason: str
    timeout: str  # the last of the caller's timeouts that fired ("resolv_timeout" ...), "" if none
    elapsed: float  # the race's start to its outcome
    resolving: Phase | None
    resolution_delay: Phase | None
    resolution_delay_expired: bool  # the delay ran its whole length
    connecting: Phase | None
    lookups: tuple[LookupReport, LookupReport]  # AAAA, A
    attempts: tuple[AttemptReport, ...]  # in the order they started
    # The HTTPS part; None when the race made no HTTPS query.
    https: HTTPSReport | None = None


def _family(af: int) -> str:
    return "ipv6" if af == socket.AF_INET6 else "ipv4" if af == socket.AF_INET else ""


def _phase(p: _abi.ReportPhase) -> Phase | None:
    return Phase(p.start_ms / 1000, p.end_ms / 1000) if p.happened else None


def read_report(conn_id: int) -> Report:
    """The report of a done handle made with record_events (hev2_report*)."""
    lib = _abi.api()
    r = _abi.ReportInfo()
    r.size = ctypes.sizeof(r)
    check(lib.hev2_report(conn_id, ctypes.byref(r)))
    lookups = []
    li = _abi.ReportLookupInfo()
    li.size = ctypes.sizeof(li)
    for i in range(2):
        check(lib.hev2_report_lookup(conn_id, i, ctypes.byref(li)))
        lookups.append(
            LookupReport(
                _family(li.family),
                _abi.REPORT_LOOKUP_NAMES.get(li.state, "unknown"),
                li.start_ms / 1000,
                li.end_ms / 1000,
                li.n_addrs,
                li.eai,
                li.sys_errno,
            )
        )
    attempts = []
    a = _abi.ReportAttemptInfo()
    a.size = ctypes.sizeof(a)
    for i in range(r.n_attempts):
        check(lib.hev2_report_attempt(conn_id, i, ctypes.byref(a)))
        attempts.append(
            AttemptReport(
                text(a.address),
                _family(a.family),
                a.port,
                _abi.REPORT_ATTEMPT_NAMES.get(a.outcome, "unknown"),
                a.error,
                bool(a.bind_failed),
                a.start_ms / 1000,
                a.end_ms / 1000,
                text(a.synthesized_from),
                a.service,
                _abi.ORIGIN_NAMES.get(a.origin, ""),
            )
        )
    return Report(
        connected=bool(r.connected),
        winner=r.winner,
        family=_family(r.family),
        reason=_abi.REPORT_REASON_NAMES.get(r.reason, "unknown"),
        timeout=_abi.TIMEOUT_KINDS.get(r.timeout, ""),
        elapsed=r.elapsed_ms / 1000,
        resolving=_phase(r.resolving),
        resolution_delay=_phase(r.resolution_delay),
        resolution_delay_expired=bool(r.resolution_delay_expired),
        connecting=_phase(r.connecting),
        lookups=(lookups[0], lookups[1]),
        attempts=tuple(attempts),
        https=_read_https(conn_id, r),
    )


def _read_https(conn_id: int, r: _abi.ReportInfo) -> HTTPSReport | None:
    if r.https_state == _abi.HTTPS_NONE:
        return None
    lib = _abi.api()
    lookups = []
    li = _abi.ReportServiceLookupInfo()
    li.size = ctypes.sizeof(li)
    for i in range(r.n_service_lookups):
        check(lib.hev2_report_service_lookup(conn_id, i, ctypes.byref(li)))
        lookups.append(
            ServiceLookupReport(
                _abi.REPORT_QUERY_NAMES.get(li.query, "unknown"),
                text(li.name),
                _abi.REPORT_SERVICE_LOOKUP_NAMES.get(li.state, "unknown"),
                li.start_ms / 1000,
                li.end_ms / 1000,
                li.n_records,
                li.n_addrs,
                li.eai,
                li.sys_errno,
            )
        )
    services = []
    si = _abi.ReportServiceInfo()
    si.size = ctypes.sizeof(si)
    for i in range(r.n_services):
        check(lib.hev2_report_service(conn_id, i, ctypes.byref(si)))
        alpn = text(si.alpn)
        services.append(
            ServiceReport(
                si.number,
                si.priority,
                text(si.target),
                si.port,
                tuple(alpn.split(",")) if alpn else (),
                bool(si.ech),
                si.n_hints,
            )
        )
    skipped = []
    ki = _abi.ReportSkippedInfo()
    ki.size = ctypes.sizeof(ki)
    for i in range(r.n_skipped):
        check(lib.hev2_report_skipped(conn_id, i, ctypes.byref(ki)))
        skipped.append(SkippedRecord(ki.priority, text(ki.target), ki.port, text(ki.reason), ki.at_ms / 1000))
    replaced = []
    hi = _abi.ReportReplacedInfo()
    hi.size = ctypes.sizeof(hi)
    for i in range(r.n_replaced):
        check(lib.hev2_report_replaced(conn_id, i, ctypes.byref(hi)))
        replaced.append(ReplacedHint(hi.service, text(hi.address), _family(hi.family), hi.port, hi.at_ms / 1000))
    return HTTPSReport(
        _abi.HTTPS_STATE_NAMES.get(r.https_state, "unknown"),
        tuple(lookups),
        tuple(services),
        tuple(skipped),
        tuple(replaced),
    )


# The reports of the sockets create_connection(report=True) returned, for as
# long as each socket object lives.
_reports: weakref.WeakKeyDictionary[socket.socket, Report] = weakref.WeakKeyDictionary()


def report_of(sock: socket.socket) -> Report | None:
    """The report of a socket hev2.create_connection(..., report=True)
    returned; None for any other socket."""
    return _reports.get(sock)


def connect_reporting(req: ConnectRequest, all_errors: bool, report: bool = True) -> socket.socket:
    """create_connection with the handle kept until the outcome is read:
    the race recorded for its report (report), and/or the HTTPS query's
    outcome read (req.https_rr: hev2.service_of). A handle driven by this
    thread in slices (as connect_blocking's slow path), its report and
    service read before the handle is released (and its trace_files
    written, if any). hev2_connect_wait is not used: it releases a won
    race's handle before returning."""
    from ._errors import to_exception
    from ._service import keep, read_service

    handle = Handle(req, waiter=True, record=report, blocking=req.fd_blocks())
    try:
        while not handle.wait(WAIT_SLICE_MS):
            pass
        rep = read_report(handle.id) if report else None
        service = read_service(handle.id) if req.https_rr else None
        if req.trace_files:
            handle.write_traces()  # before the winner's fd is handed over
        outcome = handle.outcome()
    finally:
        # Cancels a race still running (an exception between slices) and
        # closes its sockets; a winner handed over by outcome() is ours.
        handle.close()
    if not isinstance(outcome, Winner):
        exc = to_exception(outcome, all_errors)
        if report:
            exc.hev2_report = rep  # type: ignore[attr-defined]
        if req.https_rr:
            exc.hev2_service = service  # type: ignore[attr-defined]
        raise exc
    sock = wrap_socket(outcome, req, fd_blocking=req.fd_blocks())
    if rep is not None:
        _reports[sock] = rep
    keep(sock, service)
    return sock
