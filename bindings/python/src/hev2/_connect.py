"""hev2.create_connection: socket.create_connection with Happy Eyeballs v2."""

from __future__ import annotations

import errno
import os
import select
import socket

from ._handle import Handle, Winner
from ._options import DEFAULT_TIMEOUT, MORE_OPTIONS, ConnectRequest, build_request

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ._errors import Failure

# How long one wait on the handle's fd may last. A signal meant for Python
# (Ctrl-C) may be delivered to one of the library's threads instead of the
# waiting one, in which case the wait is not interrupted: Python only notices
# the signal when the wait returns. Waking up this often bounds that delay.
WAIT_SLICE_MS = 100

# A first, short wait inside the library (GIL released): a connection that
# is done by then (loopback, a near server) needs no eventfd at all, which
# saves creating, polling and closing one. It delays Ctrl-C by at most this.
FAST_WAIT_MS = 1


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
    **more: ``resolution_delay``, ``connection_attempt_delay`` (seconds),
        ``first_address_family_count``, ``family`` (``socket.AF_INET`` /
        ``AF_INET6``), ``resolver`` (``'system'`` / ``'builtin'``),
        ``nameservers`` (for ``'builtin'``), ``hosts`` (static addresses:
        ``{"name": ["::1", "127.0.0.1"]}``), ``nodelay``, ``keepalive``.

    Errors: a connection failure raises ``OSError`` of the right subclass
    (``ConnectionRefusedError`` ...) with the errno of the last failed
    attempt; a resolution failure raises ``socket.gaierror`` with the
    getaddrinfo code, except EAI_SYSTEM, which raises ``OSError`` with the
    errno seen by the resolver thread; an expired timeout raises
    ``TimeoutError`` (``exc.timeout_kind`` says which). ``exc.hev2_failure``
    holds every detail. The wait releases the GIL, and Ctrl-C cancels the
    connection and raises KeyboardInterrupt.
    """
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
    all_errors = bool(all_errors)
    outcome = connect_blocking(req)
    if not isinstance(outcome, Winner):
        # Not imported by `import hev2` (dataclasses); the first connection loaded it.
        from ._errors import to_exception

        raise to_exception(outcome, all_errors)
    return wrap_socket(outcome, req)


def connect_blocking(req: ConnectRequest) -> Winner | Failure:
    """Runs one connection to its outcome on the calling thread."""
    handle = Handle(req)
    try:
        if not handle.wait(FAST_WAIT_MS):
            wait_done(handle)
        return handle.outcome()
    finally:
        # Cancels a connection still running (KeyboardInterrupt, any
        # exception) and frees the handle; a winner's fd is ours by now.
        handle.close()


def wait_done(handle: Handle) -> None:
    """Waits for the outcome in poll(2) on the handle's fd: the GIL is free
    meanwhile, and a signal handler's exception (KeyboardInterrupt) ends the
    wait, after which the caller cancels the handle."""
    try:
        fd = handle.fd()
    except OSError as e:
        if e.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        # Out of fds for the handle's eventfd: the connection itself may
        # still end well, or fail with the error that matters (a resolver's
        # EAI_SYSTEM, say). Wait inside the library instead, in slices so
        # that signals are still seen.
        while not handle.wait(WAIT_SLICE_MS):
            pass
        return
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not poller.poll(WAIT_SLICE_MS):
        pass


def socket_from(w: Winner) -> socket.socket:
    """A socket.socket owning the winner's fd (closed if that fails)."""
    try:
        # Family, type and protocol given: Python asks the kernel nothing.
        return socket.socket(w.family, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=w.fd)
    except BaseException:
        os.close(w.fd)
        raise


def wrap_socket(w: Winner, req: ConnectRequest) -> socket.socket:
    """The winner as a socket.socket left in the mode socket.create_connection
    would leave it in."""
    sock = socket_from(w)
    # The fd is non-blocking; a socket object made from an fd believes what
    # getdefaulttimeout() says. settimeout aligns both (one ioctl).
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
