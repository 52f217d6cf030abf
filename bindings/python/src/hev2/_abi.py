"""ctypes binding of include/hev2.h: constants, structs, prototypes.

The constants, name tables and ctypes Structures come from _abi_gen.py,
which `make abi-generate` writes from the header with every size and offset
measured by the C compiler (`make abi-check` fails when it is stale). This
file adds the prototypes and the loading; other modules import from here.
"""

from __future__ import annotations

import _thread
import ctypes
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint, c_void_p

from ._abi_gen import *  # noqa: F403 (every constant, the name tables, the structs)
from ._abi_gen import (
    TIMEOUT_NAMES,
    TIMEOUT_NONE,
    VERSION_NUM,
    AttemptInfo,
    EventInfo,
    Options,
    ReportAttemptInfo,
    ReportInfo,
    ReportLookupInfo,
    ReportReplacedInfo,
    ReportServiceInfo,
    ReportServiceLookupInfo,
    ReportSkippedInfo,
    ResultInfo,
    ServiceInfo,
    StatsInfo,
    hev2_conn,
    hev2_job,
)
from ._lib import LibraryError, library

# The header version this package was generated from (HEV2_VERSION_NUM):
# the library must be of its major version and not older. That is 1.2 at
# least: create_connection's races are driven by the waiter
# (hev2_options.drive, 1.2) and the options struct is filled by
# hev2_options_init_size (1.2); 1.3 adds the report (hev2_report*) that
# create_connection(report=True) reads.
HEADER_VERSION = VERSION_NUM
assert HEADER_VERSION >= 10200, "the generated ABI predates hev2_options.drive"

# Which timeout fired (hev2_result_info.timeout) -> the option's name, "" for none.
TIMEOUT_KINDS: dict[int, str] = {k: ("" if k == TIMEOUT_NONE else name) for k, name in TIMEOUT_NAMES.items()}


# name: (restype, argtypes)
PROTOTYPES = {
    "hev2_version": (c_int, []),
    "hev2_strerror": (c_char_p, [c_int]),
    "hev2_init": (c_int, []),
    "hev2_set_max_handles": (c_int, [c_int]),
    "hev2_stats": (c_int, [POINTER(StatsInfo)]),
    "hev2_options_init": (c_int, [POINTER(Options)]),
    "hev2_connect_len": (c_int, [c_char_p, c_size_t, c_char_p, POINTER(Options), POINTER(hev2_conn)]),
    "hev2_connect_wait": (c_int, [c_char_p, c_char_p, POINTER(Options), c_int, POINTER(hev2_conn), POINTER(c_int)]),
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
    # 1.2: the only way to fill a 1.2 struct (hev2_options_init fills the
    # 1.0 layout, size 112, and a `drive` past it would be ignored).
    "hev2_options_init_size": (c_int, [POINTER(Options), c_size_t]),
    # 1.3
    "hev2_write_trace": (c_int, [hev2_conn, c_int, c_int, c_char_p]),
    # 1.3: the establishment report (hev2.create_connection(report=True)).
    "hev2_report": (c_int, [hev2_conn, POINTER(ReportInfo)]),
    "hev2_report_lookup": (c_int, [hev2_conn, c_int, POINTER(ReportLookupInfo)]),
    "hev2_report_attempt": (c_int, [hev2_conn, c_int, POINTER(ReportAttemptInfo)]),
    "hev2_set_history": (c_int, [c_int]),
    "hev2_clear_history": (c_int, []),
    # 1.5: what the HTTPS query gave (create_connection(https_rr=True)).
    "hev2_service": (c_int, [hev2_conn, POINTER(ServiceInfo)]),
    # 1.5: the report's HTTPS part.
    "hev2_report_service_lookup": (c_int, [hev2_conn, c_int, POINTER(ReportServiceLookupInfo)]),
    "hev2_report_service": (c_int, [hev2_conn, c_int, POINTER(ReportServiceInfo)]),
    "hev2_report_skipped": (c_int, [hev2_conn, c_int, POINTER(ReportSkippedInfo)]),
    "hev2_report_replaced": (c_int, [hev2_conn, c_int, POINTER(ReportReplacedInfo)]),
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


_lock = _thread.allocate_lock()  # threading.Lock, without importing threading
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
