"""hev2.create_connection: socket.create_connection with Happy Eyeballs v2."""

from __future__ import annotations

import os
import socket

from ._handle import RUNNING, WON, Handle, Winner, connect_and_wait, give_back, release, take_out_parameters
from ._options import DEFAULT_TIMEOUT, MORE_OPTIONS, ConnectRequest, build_request, common_request

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ._errors import Failure

# How long one hev2_wait on a connection may last before Python checks for
# signals (Ctrl-C) and asynchronous exceptions. The connection's race is
# played by this thread inside hev2_wait (HEV2_DRIVE_WAITER) with the GIL
# released; the library retries EINTR itself, so a Ctrl-C is seen when the
# slice ends: within this bound. Slicing costs nothing on a fast connect
# (hev2_wait returns the moment the race is decided) and loses no progress;
# on a slow one, 40 returns a second cost next to nothing. 25 ms keeps
# Ctrl-C well within 100 ms even when the machine is busy.
WAIT_SLICE_MS = 25

def create_connection(
    address: tuple[Any, Any],
    timeout: float | None = DEFAULT_TIMEOUT,
    source_address: tuple[str, int] | None = None,
    *,
    all_errors: bool = False,
    resolv_timeout: float | None = None,
    connect_timeout: float | None = None,
    open_timeout: float | None = None,
    fast_fallback: bool = True,
    report: bool = False,
    **more: Any,
) -> socket.socket:
    """Connect to *address* ``(host, port)`` racing IPv6 and IPv4 (RFC 8305)
    and return the connected ``socket.socket``.

    A drop-in for ``socket.create_connection``: same positional arguments,
    same result, same exception classes.

    timeout: as in ``socket.create_connection``, it is the returned socket's
        timeout (``settimeout``); when not given, ``socket.getdefaulttimeout()``
        is used. It also bounds the connection phase, where socket applies it
        to each ``connect()`` in turn: here it becomes ``connect_timeout``
        (with ``fast_fallback=False`` exactly socket's per-attempt bound; in
        the race, a bound on the wait after the last address was tried, so
        the whole call never takes longer than socket's worst case) unless
        ``connect_timeout`` or ``open_timeout`` is given. Like socket, it
        never bounds name resolution (use ``resolv_timeout``). ``None`` means
        no bound and a blocking socket; ``0`` gives a non-blocking socket and
        bounds nothing (socket would fail with BlockingIOError instead).
    source_address: ``(host, port)`` bound before connecting; host must be an
        IP address or ``''``. An address restricts the race to its family.
    all_errors: False raises the primary error (see below); True raises an
        ``ExceptionGroup`` of every attempt's error, then every failed
        lookup, then the timeout that ended the race. When no attempt was
        made (resolution failed), the single error is raised as is, as
        socket does for ``gaierror``.
    resolv_timeout, connect_timeout, open_timeout: seconds, with Ruby
        ``Socket.tcp``'s meaning: name resolution; the wait once every
        address was tried; the whole call (not combinable with the other
        two). ``fast_fallback=False`` resolves both families, then tries the
        addresses one at a time.
    **more: every other option of the library, named as its member of
        ``hev2_options`` in ``include/hev2.h`` without the unit: a duration
        in seconds (``keepalive_ms`` is ``keepalive=30``), a flag as True or
        False (``nodelay=True``), a count as an int; None or absent is the
        library's default. ``hev2._options_gen.KEYWORDS`` lists them, the
        header says what each does. And the package's own: ``family``
        (``socket.AF_INET`` / ``AF_INET6``), ``resolver`` (``'system'`` /
        ``'builtin'``), ``nameservers`` (for ``'builtin'``), ``hosts``
        (static addresses: ``{"name": ["::1", "127.0.0.1"]}``), ``alpn``
        (see https_rr),
        ``trace_files`` (the race written to files by the library once it is
        decided, won or failed: ``{"svg": "race.svg", "qlog": "race.qlog",
        "chrome": "race.json"}``, any subset; see ``docs/trace-names.md``).
    https_rr: True adds the HTTPS query of Happy Eyeballs v3 (RFC 9460)
        for a host name (the host for port 443, ``_PORT._https.HOST``
        otherwise): its services' endpoints are tried first, by priority, on
        their own ports, the origin's addresses last; ``hev2.service_of(sock)``
        says which service won (``exc.hev2_service`` on a failure). The TLS
        server name stays ``host``. With it: ``alpn``, the protocols your
        TLS offers (a sequence of str, default ``["h2", "http/1.1"]``: a
        service offering none of them is skipped), ``ech=True`` (your TLS
        uses ECH: the HTTPS answer is waited for, up to ``ech_wait``
        seconds, and the origin's addresses are not tried when every
        service carries an ECH configuration; the winner's is
        ``hev2.service_of(sock).service.ech``).
    report: True records the race and keeps its establishment report (a
        ``hev2.Report``: who won and why, the phases, each lookup and
        attempt): ``hev2.report_of(sock)`` for the returned socket,
        ``exc.hev2_report`` on the exception of a failure. It costs the
        recording and a few more calls into the library; off, nothing.

    Errors: a connection failure raises ``OSError`` of the right subclass
    (``ConnectionRefusedError`` ...) with the errno of the last failed
    attempt; a resolution failure raises ``socket.gaierror`` with the
    getaddrinfo code, except EAI_SYSTEM, which raises ``OSError`` with the
    errno seen by the resolver thread; an expired timeout raises
    ``TimeoutError`` (``exc.timeout_kind`` says which). ``exc.hev2_failure``
    holds every detail. The wait releases the GIL, and Ctrl-C cancels the
    connection and raises KeyboardInterrupt.
    """
    if (
        source_address is None
        and resolv_timeout is None
        and connect_timeout is None
        and open_timeout is None
        and fast_fallback is True
        and not more
    ):  # only_a_timeout(), inline: this is the common call
        req = common_request(address, timeout)
    else:
        req = build_request(
            address,
            timeout,
            source_address,
            resolv_timeout=resolv_timeout,
            connect_timeout=connect_timeout,
            open_timeout=open_timeout,
            fast_fallback=fast_fallback,
            more=more,
        )
    if report or req.https_rr:
        # The handle is kept until its report or HTTPS outcome is read.
        from ._report import connect_reporting

        return connect_reporting(req, bool(all_errors), report)
    outcome = connect_traced(req) if req.trace_files else connect_blocking(req)
    if isinstance(outcome, socket.socket):  # won within the first call
        return outcome
    if not isinstance(outcome, Winner):
        # Not imported by `import hev2`; the first connection loaded it.
        from ._errors import to_exception

        raise to_exception(outcome, bool(all_errors))
    # The library was asked for a blocking fd when the socket is to block.
    return wrap_socket(outcome, req, fd_blocking=req.fd_blocks())


def connect_blocking(req: ConnectRequest) -> socket.socket | Winner | Failure:
    """Runs one connection to its outcome on the calling thread (the winner's
    fd blocking when req.fd_blocks()): the race is
    driven by this thread inside hev2_wait (no library thread hands it over,
    no eventfd per connect), in slices so that Python runs its signal
    handlers in between. KeyboardInterrupt, or any exception raised between
    slices (another thread's PyThreadState_SetAsyncExc ...), cancels the race
    and releases the handle, which closes every attempt's socket, then
    propagates.

    A connection won within the first call (the healthy path) comes back
    as the socket.socket create_connection returns; one decided later as
    its Winner (or Failure), read from the handle."""
    # One call on the healthy path (hev2_connect_wait: connect, play the
    # race for a slice, hand the fd over, release); a slow race goes on in
    # slices on the handle it leaves. fd is closed here if an exception
    # comes between the call and the moment a socket object owns it.
    outs = take_out_parameters()  # loads the library (LibraryError if it cannot)
    fd = outs.fd
    try:
        found = connect_and_wait(req, WAIT_SLICE_MS, outs)
        if found == WON:
            sock = socket.socket(-1, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=fd.value)
            fd.value = -1  # the socket object's now
            give_back(outs)
            # A socket object made from an fd believes what
            # getdefaulttimeout() says; settimeout aligns it (and the fd)
            # with the timeout asked for, unless both already agree on
            # None (the fd blocks): the common case.
            if req.socket_timeout is not None or sock.gettimeout() is not None:
                sock.settimeout(req.socket_timeout)
            return sock
        handle = Handle.adopt(outs.conn.value, req)
        if found == RUNNING:
            while not handle.wait(WAIT_SLICE_MS):
                pass
        return handle.outcome()
    finally:
        # Whatever ends this early (KeyboardInterrupt, another thread's
        # exception), nothing the library handed over is lost: an fd not
        # yet owned by a socket object is closed, and a handle is released
        # (which cancels a race still running; no thread drives it now, so
        # the release settles it and closes its sockets). Such a set of
        # out-parameters is not given back.
        if fd.value >= 0:
            os.close(fd.value)
        if outs.conn.value:
            release(outs.conn.value)


def connect_traced(req: ConnectRequest) -> Winner | Failure:
    """connect_blocking for a race whose trace is written to files: the
    handle must outlive the outcome (hev2_connect_wait would release a won
    one), so it is made with hev2_connect, waited for in slices on this
    thread, written with hev2_write_trace, then released."""
    handle = Handle(req, waiter=True, blocking=req.fd_blocks())
    winner_fd = -1
    try:
        while not handle.wait(WAIT_SLICE_MS):
            pass
        outcome = handle.outcome()
        if isinstance(outcome, Winner):
            winner_fd = outcome.fd
        handle.write_traces()
        winner_fd = -1
        return outcome
    finally:
        if winner_fd >= 0:
            os.close(winner_fd)
        handle.close()


def socket_from(w: Winner) -> socket.socket:
    """A socket.socket owning the winner's fd (closed if that fails)."""
    try:
        if not w.family:
            # hev2_connect_wait hands over the fd alone: the kernel knows
            # its family (Python asks with the getsockname it makes anyway
            # to check the fd; type and protocol given spare it two
            # getsockopt calls).
            return socket.socket(-1, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=w.fd)
        # Family, type and protocol given: Python asks the kernel nothing.
        return socket.socket(w.family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=w.fd)
    except BaseException:
        os.close(w.fd)
        raise


def wrap_socket(w: Winner, req: ConnectRequest, fd_blocking: bool = False) -> socket.socket:
    """The winner as a socket.socket left in the mode socket.create_connection
    would leave it in. fd_blocking: the library cleared O_NONBLOCK already."""
    sock = socket_from(w)
    # A socket object made from an fd believes what getdefaulttimeout()
    # says (and makes the fd non-blocking itself when that is a number).
    # settimeout aligns both (one ioctl); not needed when the fd blocks and
    # the object believes it does, the common case.
    if not (fd_blocking and sock.gettimeout() is None):
        sock.settimeout(req.socket_timeout)
    return sock


def validate_defaults(defaults: Mapping[str, Any]) -> None:
    """Checks hev2.install()'s defaults as create_connection would."""
    named = {"resolv_timeout", "connect_timeout", "open_timeout", "fast_fallback", "all_errors"}
    unknown = sorted(set(defaults) - named - set(MORE_OPTIONS))
    if unknown:
        raise TypeError(f"unknown hev2 option(s): {', '.join(unknown)}")
    more = {k: v for k, v in defaults.items() if k in MORE_OPTIONS}
    build_request(
        ("localhost", 1),
        DEFAULT_TIMEOUT,
        None,
        resolv_timeout=defaults.get("resolv_timeout"),
        connect_timeout=defaults.get("connect_timeout"),
        open_timeout=defaults.get("open_timeout"),
        fast_fallback=defaults.get("fast_fallback", True),
        more=more,
    )
