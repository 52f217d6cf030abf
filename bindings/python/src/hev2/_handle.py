"""One connection handle of the library: start, learn the outcome, let go.

The handle is a 64-bit id. ``Handle`` owns it from ``hev2_connect`` until
``hev2_release`` and makes release idempotent on the Python side, so that
every path (success, failure, KeyboardInterrupt, task cancellation) can
simply call ``close()``.
"""

from __future__ import annotations

import errno as errno_mod
import functools
import os
import socket

# Seconds to the ABI's ms: where the package's conversions were first
# written (tests read it here); the options struct is filled by the
# generated PlainOptions.fill_plain.
from ._convert import milliseconds as milliseconds

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import ctypes

    from . import _abi
    from ._errors import Failure
    from typing import Any

    from ._options import ConnectRequest
else:
    # Imported by api() on first use, so that `import hev2` imports neither
    # ctypes nor threading nor builds the ABI's structs. Everything below
    # that touches them runs after api() (a handle exists only after it).
    ctypes = _abi = None


def api() -> ctypes.CDLL:
    """The library (see _abi.api), importing ctypes and _abi on first use."""
    if _abi is None:
        _import_abi()
    return _abi.api()


def _import_abi() -> None:
    global ctypes, _abi
    try:
        import ctypes

        from . import _lib

        # The library first: its Go runtime starts on a thread of its own
        # at dlopen, and gets ready while this thread loads the modules
        # below, instead of after them.
        _lib.library()
        # _errors too (not at `import hev2`): a failed connection must be
        # reportable even when the process is out of fds, and importing a
        # module needs one.
        from . import _abi, _errors  # noqa: F401
    except OSError as e:
        # Out of fds (or a broken installation): the library cannot be
        # loaded either, and that is what the caller is told.
        from ._lib import LibraryError

        raise LibraryError(f"cannot load libhev2's Python binding: {e}") from e


class CapacityError(OSError):
    """Too many connections are running at once in this process (the
    library's cap, set with ``hev2.set_max_handles``); nothing was started."""


class Winner:
    """The connected socket a handle handed over (a plain slotted class:
    one is made per connection, cheaper than a frozen dataclass)."""

    __slots__ = ("fd", "family", "address", "port", "elapsed")

    def __init__(self, fd: int, family: int, address: str, port: int, elapsed: float) -> None:
        self.fd = fd
        self.family = family
        self.address = address
        self.port = port
        self.elapsed = elapsed  # seconds

    def __repr__(self) -> str:
        return (
            f"Winner(fd={self.fd}, family={self.family}, address={self.address!r}, "
            f"port={self.port}, elapsed={self.elapsed})"
        )


def static_hosts_text(hosts: tuple[tuple[str, tuple[str, ...]], ...]) -> bytes | None:
    if not hosts:
        return None
    entries = []
    for name, addrs in hosts:
        shown = ",".join(f"[{a}]" if ":" in a and not a.startswith("[") else a for a in addrs)
        entries.append(f"{name}:{shown}")
    return ";".join(entries).encode("ascii")


# hev2_options_init_size's struct, made once: options_for copies it.
_template: _abi.Options | None = None
# The struct of a default connection driven by its waiter (the template with
# drive = HEV2_DRIVE_WAITER), made once and passed as is: the library only
# reads it during hev2_connect, so threads can share it.
# waiter_default_options' structs, without and with blocking.
_waiter_default: list[_abi.Options | None] = [None, None]


def options_template() -> _abi.Options:
    global _template
    if _template is None:
        lib = api()
        o = _abi.Options()
        # Not hev2_options_init: that entry point fills 1.0's layout (size
        # 112) and the library would ignore every later field (drive).
        check(lib.hev2_options_init_size(ctypes.byref(o), ctypes.sizeof(o)))
        _template = o  # two threads racing here make two equal structs
    return _template


def waiter_default_options(blocking: bool = False) -> _abi.Options:
    """The library's defaults with drive = HEV2_DRIVE_WAITER, and blocking
    when asked (two shared structs, never changed after they are made)."""
    o = _waiter_default[blocking]
    if o is None:
        o = _abi.Options.from_buffer_copy(options_template())
        o.drive = _abi.DRIVE_WAITER
        o.blocking = int(blocking)
        _waiter_default[blocking] = o
    return o


def options_for(req: ConnectRequest, waiter: bool = False, record: bool = False, blocking: bool = False) -> _abi.Options | None:
    """The options struct hev2_connect gets for req. waiter: the race is
    played by the thread that waits for it (hev2_wait, HEV2_DRIVE_WAITER);
    otherwise by a library thread (the default, for hev2_fd watchers).
    record: the race's events are kept, for its report (record_events).
    blocking: the winner's fd comes in blocking mode (the library clears
    O_NONBLOCK with one system call; settimeout(None) would make a second).

    When every option is the default: None (NULL, which the library reads as
    its defaults) for a library-driven race, a shared waiter_default_options()
    for a waiter-driven one. Otherwise hev2_options_init_size's defaults,
    copied, with only the fields the caller chose set (and drive)."""
    if req.default_options() and not record:
        if waiter:
            return waiter_default_options(blocking)
        if not blocking:
            return None
    template = options_template()
    o = _abi.Options.from_buffer_copy(template)
    o.blocking = int(blocking)
    # The plain options (generated from include/hev2.h's notes: timeouts,
    # delays, flags), each member set only when not its default.
    req.fill_plain(o)
    if req.connect_timeout_from_socket:
        # socket's timeout has no upper bound; the library's longest
        # timeout is a day, and a longer one bounds nothing in practice.
        o.connect_timeout_ms = min(o.connect_timeout_ms, _abi.MAX_TIMEOUT_MS)
    if req.family:
        o.family = req.family
    if req.local_address:
        o.local_host = req.local_address.encode("ascii")
    if req.local_port:
        o.local_port = req.local_port
    if req.resolver is not None:
        o.resolver = _abi.RESOLVER_BUILTIN if req.resolver == "builtin" else _abi.RESOLVER_SYSTEM
    if req.nameservers:
        o.nameservers = ",".join(req.nameservers).encode("ascii")
    if req.hosts:
        o.static_hosts = static_hosts_text(req.hosts)
    if req.trace_files:
        o.record_events = 1
    if req.alpn is not None:
        # Kept alive by the struct (ctypes holds the bytes) through hev2_connect.
        o.alpn = ",".join(req.alpn).encode("ascii")
    # o.blocking stays 0: the fd comes back non-blocking and Python's
    # settimeout() sets the mode with one ioctl(FIONBIO); the library's
    # switch costs two fcntl calls (measured with strace).
    if waiter:
        o.drive = _abi.DRIVE_WAITER
    if record:
        o.record_events = 1
    return o


def check(status: int, context: str = "") -> int:
    """Raises the Python exception for a failed call (not a failed connection).
    It must run right after that call, on the same thread: the message is
    the library's last error (function and detail), and HEV2_ESYSTEM's errno
    comes from it too (ctypes' saved errno may be stale: a Go export does not
    leave one behind). context: what the caller knows that the library's
    text cannot say."""
    if status >= 0:
        return status
    if _abi is None:  # the call was made through hev2._abi directly (hev2.init ...)
        _import_abi()
    detail, sys_errno = _abi.last_error()
    text = (detail or _abi.strerror(status)) + (f" ({context})" if context else "")
    if status == _abi.EFORKED:
        from ._errors import ForkedError

        raise ForkedError(
            f"hev2: {text} (pid {os.getpid()}, forked after libhev2 was loaded; its Go runtime does not "
            "survive fork). Connect in the parent, or start workers with the 'spawn' or 'forkserver' "
            "multiprocessing start method."
        )
    if status == _abi.ESYSTEM:
        code = sys_errno or errno_mod.EIO
        raise OSError(code, f"hev2: {text}" if detail else f"hev2: {text}: {os.strerror(code)}")
    if status == _abi.ECAPACITY:
        raise CapacityError(errno_mod.EAGAIN, f"hev2: {text}")
    if status == _abi.EHOST:
        # A host no resolver could answer (empty, longer than 253
        # characters): what socket.create_connection raises for it, the
        # getaddrinfo error, with the library's reason as a note.
        gai = socket.gaierror(socket.EAI_NONAME, eai_text(socket.EAI_NONAME))
        gai.add_note(f"hev2: {text}")
        raise gai
    if status in (_abi.EINVAL, _abi.EPORT, _abi.EOPTIONS):
        raise ValueError(f"hev2: {text}")
    if status == _abi.ENOTSUP:
        raise NotImplementedError(f"hev2: {text}")
    raise RuntimeError(f"hev2: {text} (status {status})")


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class Handle:
    """A started connection. waiter=True: its race is played by whoever
    waits for it (wait() in slices), on that thread; False: by a library
    thread from the start (fd() watchers, asyncio)."""

    __slots__ = ("id", "req", "_released")

    @classmethod
    def adopt(cls, conn_id: int, req: ConnectRequest) -> Handle:
        """The handle a call such as hev2_connect_wait left with the caller."""
        h = cls.__new__(cls)
        h.id = conn_id
        h.req = req
        h._released = False
        return h

    def __init__(self, req: ConnectRequest, waiter: bool = False, record: bool = False, blocking: bool = False) -> None:
        lib = api()
        host = req.host.encode("ascii")
        out = _abi.hev2_conn(0)
        # A Structure passed for a POINTER(Options) parameter goes by
        # reference; None is NULL.
        status = lib.hev2_connect_len(
            host, len(host), str(req.port).encode(), options_for(req, waiter, record, blocking), ctypes.byref(out)
        )
        if status < 0:
            check(status, connect_context(status, req))
        self.id = out.value
        self.req = req
        self._released = False

    def fd(self) -> int:
        """The eventfd that becomes readable when the outcome is known."""
        return check(_abi.api().hev2_fd(self.id))

    def wait(self, timeout_ms: int) -> bool:
        """Blocks (GIL released) up to timeout_ms (-1: forever); True once
        done. A waiter-driven handle's race progresses only in here; a
        timed-out wait loses none of it (the next one resumes)."""
        status = _abi.api().hev2_wait(self.id, timeout_ms)
        if status == _abi.EAGAIN:
            return False
        check(status)
        return True

    def cancel(self) -> None:
        if not self._released:
            _abi.api().hev2_cancel(self.id)

    def close(self) -> None:
        """Cancels if running and releases; the winner's fd is closed unless
        outcome() handed it over. Idempotent."""
        if not self._released:
            self._released = True
            _abi.api().hev2_release(self.id)

    def write_traces(self) -> None:
        """Writes the done race to each of req.trace_files with
        hev2_write_trace (the library renders; OSError if a file cannot be
        written)."""
        lib = _abi.api()
        formats = {"svg": _abi.TRACE_SVG, "qlog": _abi.TRACE_QLOG, "chrome": _abi.TRACE_CHROME}
        for fmt, path in self.req.trace_files:
            check(lib.hev2_write_trace(self.id, formats[fmt], -1, os.fsencode(path)), f"trace_files[{fmt!r}]")

    def outcome(self) -> Winner | Failure:
        """The result of a done handle; the winner's fd becomes the caller's."""
        lib = _abi.api()
        r = _abi.ResultInfo()
        r.size = ctypes.sizeof(r)
        check(lib.hev2_result(self.id, ctypes.byref(r)))
        if r.status == _abi.OK:
            return Winner(r.fd, r.family, text(r.address), r.port, r.elapsed_ms / 1000)
        if r.status == _abi.ECANCELED:
            raise RuntimeError("hev2: outcome of a connection cancelled by its owner")
        return self._failure(r)

    def _failure(self, r: _abi.ResultInfo) -> Failure:
        from ._errors import AttemptFailure, Failure, LookupFailure

        lib = _abi.api()
        timeout_kind = _abi.TIMEOUT_KINDS.get(r.timeout, "")
        lookups = []
        eai_errno = 0
        for li in r.lookups:
            if li.state == _abi.LOOKUP_FAILED and li.eai:
                message = eai_text(li.eai)
                if li.sys_errno:
                    message += f": {os.strerror(li.sys_errno)}"
                lookups.append(LookupFailure("ipv6" if li.family == socket.AF_INET6 else "ipv4", li.eai, li.sys_errno, message))
                if li.eai == r.eai and li.sys_errno:
                    eai_errno = li.sys_errno
        attempts = []
        a = _abi.AttemptInfo()
        a.size = ctypes.sizeof(a)
        for i in range(r.n_attempts):
            check(lib.hev2_get_attempt(self.id, i, ctypes.byref(a)))
            cut = timeout_kind if (a.error in (0, errno_mod.ETIMEDOUT) and timeout_kind and not a.won) else ""
            attempts.append(AttemptFailure(text(a.address), a.port, 0 if cut else a.error, cut))
        return Failure(
            host=self.req.host,
            port=self.req.port,
            message=text(lib.hev2_errmsg(self.id)),
            errno=r.error,
            eai=0 if timeout_kind else r.eai,
            eai_errno=eai_errno,
            timeout_kind=timeout_kind,
            timeout_after=timeout_length(self.req, timeout_kind),
            elapsed=r.elapsed_ms / 1000,
            lookups=tuple(lookups),
            attempts=tuple(attempts),
        )


# What connect_and_wait found.
WON, RUNNING, FAILED = 0, 1, 2


def connect_and_wait(req: ConnectRequest, slice_ms: int, outs: OutParameters) -> int:
    """hev2_connect_wait: the race on this thread, one call. WON: outs.fd
    holds the socket (the caller's) and outs.conn is 0. Otherwise outs.conn
    holds the handle to go on with: RUNNING (wait on it), or FAILED (its
    outcome). outs belongs to the caller, so that whatever exception comes
    next, the caller's cleanup sees what the library handed over."""
    args = req.c_args
    if args is None:
        args = req.c_args = connect_wait_args(req)
    status: int = args[0](args[1], args[2], args[3], slice_ms, outs.conn_ref, outs.fd_ref)
    if status == _abi.OK:
        return WON
    if outs.conn.value == 0:
        check(status, connect_context(status, req))  # refused: raises
    return RUNNING if status == _abi.EAGAIN else FAILED


def connect_wait_args(req: ConnectRequest) -> tuple[Any, bytes, bytes, Any]:
    """hev2_connect_wait (unchecked_connect_wait) and its first three
    arguments for req, made once per request (a request of the common call
    serves many connections). The winner comes blocking when its socket is
    to block (timeout None): wrap_socket then leaves the fd's mode alone."""
    options = options_for(req, True, blocking=req.fd_blocks())
    assert options is not None  # a waiter-driven race always gets a struct (drive)
    return (unchecked_connect_wait(), req.host.encode("ascii"), str(req.port).encode(), ctypes.byref(options))


_unchecked_connect_wait: Any = None


def unchecked_connect_wait() -> Any:
    """The library's hev2_connect_wait without argtypes (a function object
    of its own, made once; the declared one keeps its argtypes): ctypes
    then passes each argument as it is, with no conversion to check, a
    large share of ctypes' own cost of the call (make bench-python). Safe
    only because its arguments are always of these kinds: two bytes
    objects (char *), a byref of the options struct, a Python int (int)
    and the byrefs of OutParameters."""
    global _unchecked_connect_wait
    fn = _unchecked_connect_wait
    if fn is None:
        fn = _abi.api()["hev2_connect_wait"]
        fn.restype = ctypes.c_int
        _unchecked_connect_wait = fn
    return fn


class OutParameters:
    """hev2_connect_wait's two out-parameters, the handle (0) and the fd
    (-1), with their byrefs. A connection won at once leaves them as it
    found them, so one set serves call after call: take_out_parameters and
    give_back keep spare sets, sparing each connection two ctypes objects
    and two byrefs."""

    __slots__ = ("conn", "fd", "conn_ref", "fd_ref")

    def __init__(self) -> None:
        self.conn = _abi.hev2_conn(0)
        self.fd = ctypes.c_int(-1)
        self.conn_ref = ctypes.byref(self.conn)
        self.fd_ref = ctypes.byref(self.fd)


# Spare OutParameters. A call takes a set for itself (list.pop and append
# are atomic), so that two threads, or a signal handler that connects in
# the middle of a call, never share one; only a set left as found (handle
# 0, fd -1) comes back. Bounded by the number of calls in flight at once.
_spare_outs: list[OutParameters] = []


def take_out_parameters() -> OutParameters:
    """A set of out-parameters for one call (loads the library on first
    use: LibraryError if it cannot)."""
    try:
        return _spare_outs.pop()
    except IndexError:
        if _abi is None:
            _import_abi()
        return OutParameters()


def give_back(outs: OutParameters) -> None:
    """Returns a set take_out_parameters gave, left as it was found (handle
    0, fd -1): the caller's to ensure (a won connection whose fd a socket
    object took)."""
    _spare_outs.append(outs)


def release(conn_id: int) -> None:
    """hev2_release, for an id a call left with the caller."""
    _abi.api().hev2_release(conn_id)


def connect_context(status: int, req: ConnectRequest) -> str:
    """The likely culprit of a refused hev2_connect, for the message: the
    status alone says "not supported" or "bad port", not what."""
    if status == _abi.ENOTSUP and (req.resolver == "builtin" or req.nameservers):
        return "resolver='builtin'"
    if status == _abi.EPORT:
        return f"port {req.port}"
    if status == _abi.EHOST:
        return f"host {req.host!r}"
    return ""


def timeout_length(req: ConnectRequest, kind: str) -> float:
    return {
        "resolv_timeout": req.resolv_timeout,
        "connect_timeout": req.connect_timeout,
        "open_timeout": req.open_timeout,
    }.get(kind) or 0.0


@functools.lru_cache(maxsize=None)
def eai_text(code: int) -> str:
    """gai_strerror's text, through the C library Python already has."""
    try:
        gai = ctypes.CDLL(None).gai_strerror
    except AttributeError:
        return f"getaddrinfo error {code}"
    gai.restype = ctypes.c_char_p
    gai.argtypes = [ctypes.c_int]
    message: bytes = gai(code)
    return message.decode("utf-8", "replace")
