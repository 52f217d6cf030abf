"""What a connection's HTTPS query gave (Happy Eyeballs v3, RFC 9460).

``hev2.create_connection(address, https_rr=True)`` adds the HTTPS query
for the host to the race (the host itself for port 443,
``_PORT._https.HOST`` otherwise): its services' endpoints are tried
first, by priority, on their own ports, the origin's own addresses last.
The handle is kept until its outcome is read with hev2_service (the
library's, one implementation for every binding); the returned socket's
is ``hev2.service_of(sock)``, a failed connection's exception carries it
as ``exc.hev2_service``. hev2.aio keeps it for the transport it returns:
``hev2.service_of(writer)`` (or of the transport).

The words are the C header's (HEV2_HTTPS_*) and hev2-connect's JSON
("svcb"): state ``"answered"`` (services came, maybe none usable),
``"nodata"``, ``"nxdomain"``, ``"failed"`` (SERVFAIL, refused, a network
error), ``"timeout"``, ``"malformed"`` (records came and none could be
decoded), ``"alias-limit"`` (the AliasMode chain was too long) or
``"pending"`` (the race ended before the answer; hev2-connect's JSON
says "timeout" for it).

The TLS server name stays the host given to create_connection: a
service's target is where the connection went, never a name to check a
certificate against.
"""

from __future__ import annotations

import ctypes
import weakref
from dataclasses import dataclass

from . import _abi
from ._handle import check, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Service:
    """The HTTPS record (ServiceMode) the winning connection came from."""

    priority: int  # its SvcPriority (1 first)
    target: str  # fully qualified, with its final dot ("svc.example." or the origin's name)
    port: int  # the port it redirected to; 0: the origin's port
    # Its ALPN set in the record's order (with "http/1.1" unless the record
    # says no-default-alpn): information, since the caller's TLS still
    # offers its own full list.
    alpn: tuple[str, ...]
    # Its ECHConfigList, ready for a TLS library's ECH configuration; None
    # when the record carries none.
    ech: bytes | None


@dataclass(frozen=True)
class HTTPSOutcome:
    """What the HTTPS query of one connection gave."""

    # "answered", "nodata", "nxdomain", "failed", "timeout", "malformed",
    # "alias-limit" or "pending" (the race ended before the answer)
    state: str
    services: int  # the usable services it answered
    # The service the winner came from; None when it came from the origin's
    # own A/AAAA (or the connection failed).
    service: Service | None


# The first ECH buffer offered to hev2_service: an ECHConfigList is a few
# hundred bytes; a longer one is read again with a buffer of its size.
ECH_FIRST = 1024


def read_service(conn_id: int) -> HTTPSOutcome | None:
    """The HTTPS outcome of a done handle (hev2_service); None when no
    HTTPS query was made."""
    lib = _abi.api()
    s = _abi.ServiceInfo()
    s.size = ctypes.sizeof(s)
    buf = ctypes.create_string_buffer(ECH_FIRST)
    s.ech = ctypes.cast(buf, ctypes.c_void_p)
    s.ech_size = len(buf)
    check(lib.hev2_service(conn_id, ctypes.byref(s)))
    if s.state == _abi.HTTPS_NONE:
        return None
    service = None
    if s.has_service:
        ech = None
        if s.ech_len:
            if s.ech_len > len(buf):
                buf = ctypes.create_string_buffer(s.ech_len)
                s.ech = ctypes.cast(buf, ctypes.c_void_p)
                s.ech_size = len(buf)
                check(lib.hev2_service(conn_id, ctypes.byref(s)))
            ech = buf.raw[: s.ech_len]
        alpn = text(s.alpn)
        service = Service(
            priority=s.priority,
            target=text(s.target),
            port=s.port,
            alpn=tuple(alpn.split(",")) if alpn else (),
            ech=ech,
        )
    return HTTPSOutcome(_abi.HTTPS_STATE_NAMES.get(s.state, "unknown"), s.n_services, service)


# The outcomes of the sockets (and hev2.aio transports) made with
# https_rr=True, for as long as each object lives.
_services: weakref.WeakKeyDictionary[Any, HTTPSOutcome] = weakref.WeakKeyDictionary()


def keep(conn: Any, outcome: HTTPSOutcome | None) -> None:
    """Remembers outcome for conn (a socket or a transport)."""
    if outcome is not None:
        _services[conn] = outcome


def service_of(conn: Any) -> HTTPSOutcome | None:
    """The HTTPS outcome of a socket ``create_connection(...,
    https_rr=True)`` returned, or of the StreamWriter or transport hev2.aio
    returned with it; None for any other, and when no HTTPS query was made
    (https_rr off, an IP literal, a ``hosts`` entry)."""
    transport = getattr(conn, "transport", None)  # an asyncio.StreamWriter
    if transport is not None:
        conn = transport
    try:
        return _services.get(conn)
    except TypeError:  # not weakly referenceable: not one of ours
        return None
