"""Turning a failed connection into the exceptions Python users expect.

- a connect errno becomes ``OSError(errno, strerror)``, which Python turns
  into the matching subclass (ConnectionRefusedError, ...);
- a getaddrinfo failure becomes ``socket.gaierror(EAI_code, message)``, except
  EAI_SYSTEM, which becomes an OSError with the errno captured on the thread
  that called getaddrinfo (a gaierror would lose it);
- an expired timeout becomes ``TimeoutError`` (``socket.timeout`` is the same
  class) with errno ETIMEDOUT and ``timeout_kind`` naming which one fired;
- ``all_errors=True`` gives an ExceptionGroup of every part.

Every exception raised carries the full story as ``exc.hev2_failure`` and as
a note (shown in tracebacks), since the headline alone cannot say that, for
example, IPv6 was refused while IPv4 timed out.
"""

from __future__ import annotations

import errno as errno_mod
import os
import socket

EAI_NAMES = {getattr(socket, n): n for n in dir(socket) if n.startswith("EAI_")}
# glibc numbering, the one the library hands out; socket may lack some names.
EAI_SYSTEM = getattr(socket, "EAI_SYSTEM", -11)
EAI_NAMES.setdefault(EAI_SYSTEM, "EAI_SYSTEM")

TIMEOUT_KINDS = ("resolv_timeout", "connect_timeout", "open_timeout")


class ForkedError(RuntimeError):
    """The process forked after libhev2 was loaded: the Go runtime inside it
    does not survive fork(), so the library refuses (rather than hang).
    Create connections in the parent, or start workers with the 'spawn' or
    'forkserver' multiprocessing start method."""


class Record:
    """A frozen record of named fields (its __slots__), compared, hashed and
    shown by them: what ``@dataclass(frozen=True)`` gives, without importing
    dataclasses (and inspect with it), which would cost the first
    connection more than everything else it loads."""

    __slots__: tuple[str, ...] = ()

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self) or not isinstance(other, Record):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


class LookupFailure(Record):
    """One address lookup that failed."""

    __slots__ = ("family", "eai", "errno", "message")
    family: str  # "ipv6" (AAAA) or "ipv4" (A)
    eai: int
    errno: int  # set for EAI_SYSTEM: the resolver thread's errno
    message: str

    def __init__(self, family: str, eai: int, errno: int, message: str) -> None:
        self._set(family=family, eai=eai, errno=errno, message=message)


class AttemptFailure(Record):
    """One connection attempt that failed."""

    __slots__ = ("address", "port", "errno", "timeout_kind")
    address: str
    port: int
    errno: int  # 0 when the attempt was cut by a timeout
    timeout_kind: str  # "" unless a timeout ended this attempt

    def __init__(self, address: str, port: int, errno: int, timeout_kind: str) -> None:
        self._set(address=address, port=port, errno=errno, timeout_kind=timeout_kind)


class Failure(Record):
    """What the library reported for a failed connection."""

    __slots__ = (
        "host", "port", "message", "errno", "eai", "eai_errno",
        "timeout_kind", "timeout_after", "elapsed", "lookups", "attempts",
    )  # fmt: skip
    host: str
    port: int
    message: str  # the library's one-line account of everything
    errno: int  # the primary cause's errno, if it is one
    eai: int  # the primary cause's getaddrinfo code, if it is one
    eai_errno: int  # errno behind an EAI_SYSTEM primary cause
    timeout_kind: str  # which timeout ended the race, if any
    timeout_after: float  # that timeout's length, in seconds
    elapsed: float  # seconds
    lookups: tuple[LookupFailure, ...]
    attempts: tuple[AttemptFailure, ...]

    def __init__(
        self,
        host: str,
        port: int,
        message: str,
        errno: int = 0,
        eai: int = 0,
        eai_errno: int = 0,
        timeout_kind: str = "",
        timeout_after: float = 0.0,
        elapsed: float = 0.0,
        lookups: tuple[LookupFailure, ...] = (),
        attempts: tuple[AttemptFailure, ...] = (),
    ) -> None:
        self._set(
            host=host, port=port, message=message, errno=errno, eai=eai, eai_errno=eai_errno,
            timeout_kind=timeout_kind, timeout_after=timeout_after, elapsed=elapsed,
            lookups=lookups, attempts=attempts,
        )  # fmt: skip

    @property
    def errno_name(self) -> str:
        """The symbolic errno of the primary cause ('ECONNREFUSED', 'ETIMEDOUT', 'EMFILE' ...)."""
        if self.timeout_kind:
            return "ETIMEDOUT"
        code = self.eai_errno if self.eai == EAI_SYSTEM else self.errno
        return errno_mod.errorcode.get(code, "") if code else ""

    @property
    def eai_name(self) -> str:
        return EAI_NAMES.get(self.eai, f"EAI_{self.eai}") if self.eai else ""


def os_error(code: int, note: str) -> OSError:
    exc = OSError(code, os.strerror(code))  # Python picks the subclass
    exc.add_note(note)
    return exc


def timeout_error(kind: str, after: float, where: str) -> TimeoutError:
    exc = TimeoutError(errno_mod.ETIMEDOUT, f"{kind} ({after:g}s) expired")
    exc.timeout_kind = kind  # type: ignore[attr-defined]
    exc.add_note(where)
    return exc


def lookup_error(lookup: LookupFailure, host: str) -> OSError:
    where = f"hev2: {'AAAA' if lookup.family == 'ipv6' else 'A'} lookup of {host}"
    if lookup.eai == EAI_SYSTEM and lookup.errno:
        exc = os_error(lookup.errno, where + f" failed with EAI_SYSTEM: {lookup.message}")
        exc.eai = EAI_SYSTEM  # type: ignore[attr-defined]
        return exc
    exc = socket.gaierror(lookup.eai, lookup.message)
    exc.add_note(where)
    return exc


def primary_error(f: Failure) -> BaseException:
    """The single exception for all_errors=False, like socket's 'last error'."""
    where = f.message
    if f.timeout_kind:
        return timeout_error(f.timeout_kind, f.timeout_after, where)
    if f.eai == EAI_SYSTEM and f.eai_errno:
        exc = os_error(f.eai_errno, where)
        exc.eai = EAI_SYSTEM  # type: ignore[attr-defined]
        return exc
    if f.eai:
        gai = socket.gaierror(f.eai, eai_message(f))
        gai.add_note(where)
        return gai
    if f.errno:
        return os_error(f.errno, where)
    return OSError(f.message)


def eai_message(f: Failure) -> str:
    for lookup in f.lookups:
        if lookup.eai == f.eai:
            return lookup.message
    return f.message


def to_exception(f: Failure, all_errors: bool) -> BaseException:
    """The exception create_connection raises for f."""
    if not all_errors or not f.attempts:
        # With no attempt made (resolution failed or timed out) there is one
        # error, raised as is: socket.create_connection raises gaierror
        # directly too, whatever all_errors says.
        exc = primary_error(f)
    else:
        parts: list[Exception] = []
        for a in f.attempts:
            shown = f"[{a.address}]:{a.port}" if ":" in a.address else f"{a.address}:{a.port}"
            if a.timeout_kind:
                parts.append(timeout_error(a.timeout_kind, f.timeout_after, f"hev2: attempt to {shown}"))
            elif a.errno:
                parts.append(os_error(a.errno, f"hev2: attempt to {shown}"))
        for lookup in f.lookups:
            parts.append(lookup_error(lookup, f.host))
        if f.timeout_kind and not any(a.timeout_kind for a in f.attempts):
            parts.append(timeout_error(f.timeout_kind, f.timeout_after, f.message))
        if not parts:
            parts.append(primary_error(f))  # type: ignore[arg-type]
        exc = ExceptionGroup("create_connection failed", parts)
        exc.add_note(f.message)
    exc.hev2_failure = f  # type: ignore[attr-defined]
    return exc
