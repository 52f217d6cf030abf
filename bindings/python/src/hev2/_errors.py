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
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class LookupFailure:
    family: str  # "ipv6" (AAAA) or "ipv4" (A)
    eai: int
    errno: int  # set for EAI_SYSTEM: the resolver thread's errno
    message: str


@dataclass(frozen=True)
class AttemptFailure:
    address: str
    port: int
    errno: int  # 0 when the attempt was cut by a timeout
    timeout_kind: str  # "" unless a timeout ended this attempt


@dataclass(frozen=True)
class Failure:
    """What the library reported for a failed connection."""

    host: str
    port: int
    message: str  # the library's one-line account of everything
    errno: int = 0  # the primary cause's errno, if it is one
    eai: int = 0  # the primary cause's getaddrinfo code, if it is one
    eai_errno: int = 0  # errno behind an EAI_SYSTEM primary cause
    timeout_kind: str = ""  # which timeout ended the race, if any
    timeout_after: float = 0.0  # that timeout's length, in seconds
    elapsed: float = 0.0  # seconds
    lookups: tuple[LookupFailure, ...] = ()
    attempts: tuple[AttemptFailure, ...] = field(default_factory=tuple)

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
