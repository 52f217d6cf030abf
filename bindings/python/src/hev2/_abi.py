"""ctypes mirror of include/hev2.h: constants, structs, prototypes.

Only this file knows the C layout. tests/test_abi_layout.py compiles a C
program against the header and checks every size and offset here, so a
header change that this file missed fails the tests instead of corrupting
memory.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_size_t,
    c_uint,
    c_uint32,
    c_uint64,
    c_void_p,
)

from ._lib import LibraryError, library

# The header version this file mirrors (HEV2_VERSION_NUM): 1.1 added
# hev2_last_error/hev2_last_errno, which the error messages use.
HEADER_VERSION = 10100

OK = 0
EINVAL = -1
EHOST = -2
EPORT = -3
EOPTIONS = -4
EHANDLE = -5
EAGAIN = -6
ECAPACITY = -7
EFORKED = -8
ENOTSUP = -9
ESYSTEM = -10
EINTERNAL = -11
ECONNECT = -12
ERESOLVE = -13
ETIMEOUT = -14
ECANCELED = -15

RESOLVER_DEFAULT = 0
RESOLVER_SYSTEM = 1
RESOLVER_BUILTIN = 2

TIMEOUT_KINDS = {0: "", 1: "resolv_timeout", 2: "connect_timeout", 3: "open_timeout"}

LOOKUP_NOT_STARTED = 0
LOOKUP_PENDING = 1
LOOKUP_ANSWERED = 2
LOOKUP_FAILED = 3

ADDRSTRLEN = 64
DETAILLEN = 160

hev2_conn = c_uint64
hev2_job = c_uint32


class Options(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("resolution_delay_ms", c_int),
        ("connection_attempt_delay_ms", c_int),
        ("first_address_family_count", c_int),
        ("resolv_timeout_ms", c_int),
        ("connect_timeout_ms", c_int),
        ("open_timeout_ms", c_int),
        ("fast_fallback", c_int),
        ("family", c_int),
        ("local_host", c_char_p),
        ("local_port", c_int),
        ("resolver", c_int),
        ("nameservers", c_char_p),
        ("static_hosts", c_char_p),
        ("nodelay", c_int),
        ("keepalive_ms", c_int),
        ("blocking", c_int),
        ("on_done", c_void_p),  # never set from Python: no callbacks on library threads
        ("on_done_data", c_void_p),
        ("job", hev2_job),
        ("record_events", c_int),
    ]


class LookupInfo(Structure):
    _fields_ = [
        ("family", c_int),
        ("state", c_int),
        ("eai", c_int),
        ("sys_errno", c_int),
        ("n_addrs", c_int),
        ("elapsed_ms", c_double),
    ]


class ResultInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("status", c_int),
        ("fd", c_int),
        ("family", c_int),
        ("port", c_int),
        ("address", c_char * ADDRSTRLEN),
        # struct sockaddr_storage: 128 bytes, 8-byte aligned on Linux.
        ("sockaddr", c_uint64 * 16),
        ("sockaddr_len", c_uint32),
        ("elapsed_ms", c_double),
        ("error", c_int),
        ("eai", c_int),
        ("timeout", c_int),
        ("lookups", LookupInfo * 2),
        ("n_attempts", c_int),
        ("n_events", c_int),
    ]


class AttemptInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("address", c_char * ADDRSTRLEN),
        ("family", c_int),
        ("port", c_int),
        ("error", c_int),
        ("won", c_int),
        ("bind_failed", c_int),
        ("start_ms", c_double),
        ("end_ms", c_double),
    ]


class EventInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("at_ms", c_double),
        ("kind", c_int),
        ("family", c_int),
        ("attempt", c_int),
        ("address", c_char * ADDRSTRLEN),
        ("port", c_int),
        ("error", c_int),
        ("eai", c_int),
        ("timeout", c_int),
        ("detail", c_char * DETAILLEN),
    ]


class StatsInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("handles_created", c_uint64),
        ("handles_live", c_uint64),
        ("handles_running", c_uint64),
        ("max_handles", c_uint64),
        ("over_capacity", c_uint64),
        ("callbacks_fired", c_uint64),
        ("jobs_registered", c_uint64),
        ("jobs_triggered", c_uint64),
        ("jobs_run", c_uint64),
        # the system resolver (appended in 1.0; the shorter size is accepted)
        ("lookups_in_flight", c_uint64),
        ("lookups_queued", c_uint64),
        ("lookups_abandoned", c_uint64),
        ("resolver_threads", c_uint64),
        ("max_lookups", c_uint64),
    ]


# name: (restype, argtypes)
PROTOTYPES = {
    "hev2_version": (c_int, []),
    "hev2_strerror": (c_char_p, [c_int]),
    "hev2_init": (c_int, []),
    "hev2_set_max_handles": (c_int, [c_int]),
    "hev2_stats": (c_int, [POINTER(StatsInfo)]),
    "hev2_options_init": (c_int, [POINTER(Options)]),
    "hev2_connect_len": (c_int, [c_char_p, c_size_t, c_char_p, POINTER(Options), POINTER(hev2_conn)]),
    "hev2_wait": (c_int, [hev2_conn, c_int]),
    "hev2_fd": (c_int, [hev2_conn]),
    "hev2_cancel": (c_int, [hev2_conn]),
    "hev2_result": (c_int, [hev2_conn, POINTER(ResultInfo)]),
    "hev2_get_attempt": (c_int, [hev2_conn, c_int, POINTER(AttemptInfo)]),
    "hev2_get_event": (c_int, [hev2_conn, c_int, POINTER(EventInfo)]),
    "hev2_event_name": (c_char_p, [c_int]),
    "hev2_errmsg": (c_char_p, [hev2_conn]),
    "hev2_release": (c_int, [hev2_conn]),
    "hev2_job_register": (c_int, [c_void_p, c_void_p, c_uint, POINTER(hev2_job)]),
    "hev2_job_trigger": (c_int, [hev2_job]),
    "hev2_run_jobs": (c_int, []),
    "hev2_jobs_fd": (c_int, []),
    # 1.1
    "hev2_last_error": (c_char_p, []),
    "hev2_last_errno": (c_int, []),
}


def version_text(num: int) -> str:
    return f"{num // 10000}.{num // 100 % 100}.{num % 100}"


def check_version(num: int, path: str) -> None:
    """The library must be of our major version and not older than our header."""
    if num // 10000 != HEADER_VERSION // 10000 or num < HEADER_VERSION:
        raise LibraryError(
            f"{path} is libhev2 {version_text(num)}; this package needs "
            f"{version_text(HEADER_VERSION)} or a later {HEADER_VERSION // 10000}.x"
        )


_lock = threading.Lock()
_api: ctypes.CDLL | None = None


def api() -> ctypes.CDLL:
    """The library with every prototype declared and its version checked."""
    global _api
    if _api is None:
        with _lock:
            if _api is None:
                lib, path = library()
                # The version first: an older library lacks the newer
                # functions, and its version says more than a missing symbol.
                check_version(lib.hev2_version(), path)
                for name, (restype, argtypes) in PROTOTYPES.items():
                    try:
                        fn = getattr(lib, name)
                    except AttributeError:
                        raise LibraryError(f"{path} does not export {name}: not a libhev2 of this ABI") from None
                    fn.restype = restype
                    fn.argtypes = argtypes
                _api = lib
    return _api


def strerror(status: int) -> str:
    text: bytes | None = api().hev2_strerror(status)
    return text.decode("utf-8", "replace") if text else f"hev2 status {status}"


def last_error() -> tuple[str, int]:
    """The calling thread's last failure: the library's one line naming the
    function and the detail, and the errno behind a HEV2_ESYSTEM (else 0).
    Read it right after the failed call, on the same thread (ctypes calls
    the library on the calling thread)."""
    lib = api()
    text: bytes | None = lib.hev2_last_error()
    return (text.decode("utf-8", "replace") if text else ""), int(lib.hev2_last_errno())
