"""hev2: Happy Eyeballs v2 (RFC 8305) connections for Python.

- ``hev2.create_connection(address, timeout, source_address, ...)``: a
  drop-in for ``socket.create_connection`` returning a real socket.socket;
- ``hev2.aio.open_connection`` / ``hev2.aio.create_connection``: the asyncio
  forms;
- ``hev2.install()`` / ``hev2.uninstall()``: opt-in, makes
  ``socket.create_connection`` (and so http.client, urllib, ...) and
  urllib3's own connect loop (so requests) use hev2;
- ``hev2.create_connection(..., report=True)`` and ``hev2.report_of(sock)``:
  the race's establishment report (``hev2.Report``, a dataclass);
- ``hev2.create_connection(..., https_rr=True)`` and ``hev2.service_of(sock)``:
  Happy Eyeballs v3's HTTPS records, and the service the connection came
  from (``hev2.HTTPSOutcome``);
- ``hev2.httpx.HTTPTransport`` / ``AsyncHTTPTransport``: httpx transports;
  ``hev2.aiohttp.TCPConnector``: an aiohttp connector (imported on first use).

The work is done by libhev2.so, loaded on first use (see ``hev2._lib`` for
where it is looked for; ``HEV2_LIBRARY`` overrides).
"""

from __future__ import annotations

from ._connect import create_connection
from ._handle import CapacityError, api, check
from ._install import install, installed, uninstall
from ._lib import LibraryError

# Importing hev2 stays cheap (no asyncio, pathlib, dataclasses, typing ...):
# what only some programs use is imported when first used.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import socket
    from typing import Any

    from . import aio as aio
    from . import aiohttp as aiohttp
    from . import httpx as httpx
    from ._errors import ForkedError as ForkedError
    from ._report import AttemptReport as AttemptReport
    from ._report import HTTPSReport as HTTPSReport
    from ._report import LookupReport as LookupReport
    from ._report import Phase as Phase
    from ._report import Report as Report
    from ._service import HTTPSOutcome as HTTPSOutcome
    from ._service import Service as Service

__all__ = [
    "AttemptReport",
    "CapacityError",
    "ForkedError",
    "HTTPSOutcome",
    "HTTPSReport",
    "LibraryError",
    "LookupReport",
    "Phase",
    "Report",
    "Service",
    "aio",
    "aiohttp",
    "clear_history",
    "create_connection",
    "httpx",
    "init",
    "install",
    "installed",
    "library_path",
    "library_version",
    "report_of",
    "service_of",
    "history_enabled",
    "set_history",
    "set_max_handles",
    "stats",
    "uninstall",
]

# include/hev2.h's HEV2_VERSION_MAJOR.MINOR.PATCH (make lint-versions).
__version__ = "1.5.0"


def __getattr__(name: str) -> Any:
    # hev2.aio imports asyncio, hev2.httpx and hev2.aiohttp their clients;
    # only pay for them when they are used.
    if name in ("aio", "aiohttp", "httpx"):
        import importlib

        return importlib.import_module("." + name, __name__)
    # _errors comes with the library (hev2._handle), not with `import hev2`.
    if name == "ForkedError":
        from ._errors import ForkedError

        return ForkedError
    # The report's dataclasses only when a report is asked for (hev2._report).
    if name in ("Report", "Phase", "LookupReport", "AttemptReport", "HTTPSReport"):
        from . import _report

        return getattr(_report, name)
    if name in ("HTTPSOutcome", "Service"):
        from . import _service

        return getattr(_service, name)
    raise AttributeError(f"module 'hev2' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def init() -> None:
    """Loads the library and starts its runtime now (~4 ms) rather than on the
    first connection. Optional."""
    check(api().hev2_init())


def library_path() -> str:
    """The path of the loaded libhev2.so (loading it if needed)."""
    from . import _lib

    api()
    return _lib.library()[1]


def library_version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    from . import _abi

    return _abi.version_text(api().hev2_version())


def set_max_handles(maximum: int) -> None:
    """Caps the connections running at once in this process (default 4096);
    beyond it create_connection raises CapacityError."""
    if isinstance(maximum, bool) or not isinstance(maximum, int) or not 1 <= maximum <= 1_000_000:
        raise ValueError(f"maximum must be an int 1-1000000, got {maximum!r}")
    check(api().hev2_set_max_handles(maximum))


def set_history(on: bool) -> None:
    """Turns the process-wide history on (the default) or off. With it, the
    library remembers, per network and host name, which address family
    connected and which lost a race (a blackhole, a refusal, a timeout), and
    tries the one that works first for the history's lifetime (10 min, an
    option of create_connection) after the failure. Off, no connection
    reads or feeds it (per call: ``history=False``); what was learned is
    kept."""
    if not isinstance(on, bool):
        raise TypeError(f"on must be True or False, not {on!r}")
    check(api().hev2_set_history(1 if on else 0))


def history_enabled() -> bool:
    """The process-wide history switch."""
    return stats()["history_enabled"] == 1


def clear_history() -> None:
    """Forgets everything the history learned, on every network."""
    check(api().hev2_clear_history())


def stats() -> dict[str, int]:
    """The library's process-wide counters (handles created, live, running ...)."""
    import ctypes

    from . import _abi

    s = _abi.StatsInfo()
    s.size = ctypes.sizeof(s)
    check(api().hev2_stats(ctypes.byref(s)))
    return {name: getattr(s, name) for name, _ in _abi.StatsInfo._fields_ if name != "size"}


def report_of(sock: socket.socket) -> Report | None:
    """The establishment report of a socket ``create_connection(...,
    report=True)`` returned (a ``hev2.Report``), or None for any other."""
    from ._report import report_of as of

    return of(sock)


def service_of(conn: Any) -> HTTPSOutcome | None:
    """What the HTTPS query of a connection made with ``https_rr=True``
    gave (a ``hev2.HTTPSOutcome``: its state, and the service the winner
    came from, or None when it came from the origin's own addresses).
    conn: a socket ``create_connection`` returned, or the StreamWriter or
    transport of ``hev2.aio``. None when no HTTPS query was made
    (https_rr off, an IP literal, a ``hosts`` entry) and for any other
    object."""
    from ._service import service_of as of

    return of(conn)
