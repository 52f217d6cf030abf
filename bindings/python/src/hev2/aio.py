"""asyncio forms of hev2: open_connection and create_connection.

The connection runs in the library; the event loop only watches the
handle's fd (``loop.add_reader``), so the loop never blocks and other tasks
keep running. Cancelling the task cancels the race, closes every attempt's
socket and releases the handle (its fd included) before CancelledError
propagates.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ._connect import socket_from
from ._handle import Handle, Winner
from ._options import ConnectRequest, build_request

if TYPE_CHECKING:
    from ._errors import Failure
    from ._service import HTTPSOutcome

P = TypeVar("P", bound=asyncio.BaseProtocol)

# loop.create_connection keywords that act on the connected socket and are
# passed through unchanged.
PASSED_THROUGH = ("ssl", "server_hostname", "ssl_handshake_timeout", "ssl_shutdown_timeout")


async def connect(req: ConnectRequest) -> Winner | Failure:
    """Runs one connection to its outcome without blocking the loop."""
    outcome, _ = await connect_service(req)
    return outcome


async def connect_service(req: ConnectRequest) -> tuple[Winner | Failure, HTTPSOutcome | None]:
    """connect, with what its HTTPS query gave (req.https_rr; else None),
    read before the handle is released."""
    loop = asyncio.get_running_loop()
    # Driven by a library thread (not waiter=True as create_connection's):
    # the loop must not block in hev2_wait, it watches the handle's fd.
    handle = Handle(req, waiter=False)
    try:
        if not handle.wait(0):
            fd = handle.fd()
            done = loop.create_future()
            loop.add_reader(fd, _set_done, done)
            try:
                await done
            finally:
                # Before release closes the fd: the loop must not watch a
                # closed (and maybe reused) fd number.
                loop.remove_reader(fd)
        service = None
        if req.https_rr:
            from ._service import read_service

            service = read_service(handle.id)
        outcome = handle.outcome()
        if req.trace_files:
            # The library writes the files (a few KiB: not worth a thread);
            # a file that cannot be written closes the won socket first.
            try:
                handle.write_traces()
            except BaseException:
                if isinstance(outcome, Winner):
                    os.close(outcome.fd)
                raise
        return outcome, service
    finally:
        handle.close()


def _set_done(done: asyncio.Future[None]) -> None:
    # The fd stays readable: the callback can run again before remove_reader.
    if not done.done():
        done.set_result(None)


def _request(host: Any, port: Any, kwargs: dict[str, Any]) -> tuple[ConnectRequest, bool, dict[str, Any]]:
    """Splits asyncio-style keywords into hev2's request, all_errors and the
    keywords for loop.create_connection."""
    passed = {k: kwargs.pop(k) for k in PASSED_THROUGH if k in kwargs}
    if passed.get("ssl") and "server_hostname" not in passed:
        # What loop.create_connection(host=...) would verify the certificate against.
        passed["server_hostname"] = host
    # asyncio's names for hev2 options.
    if "happy_eyeballs_delay" in kwargs:
        kwargs.setdefault("connection_attempt_delay", kwargs.pop("happy_eyeballs_delay"))
    if "interleave" in kwargs:
        kwargs.setdefault("first_address_family_count", kwargs.pop("interleave"))
    local_addr = kwargs.pop("local_addr", None)
    for unsupported in ("proto", "flags", "sock"):
        if kwargs.get(unsupported):
            raise ValueError(f"hev2.aio does not support {unsupported}=")
        kwargs.pop(unsupported, None)
    all_errors = bool(kwargs.pop("all_errors", False))
    req = build_request(
        (host, port),
        None,  # asyncio sockets have no timeout; the loop makes them non-blocking
        local_addr,
        resolv_timeout=kwargs.pop("resolv_timeout", None),
        connect_timeout=kwargs.pop("connect_timeout", None),
        open_timeout=kwargs.pop("open_timeout", None),
        fast_fallback=kwargs.pop("fast_fallback", True),
        more=kwargs,
    )
    # The loop wants a non-blocking fd: the library's default.
    return req, all_errors, passed


async def create_connection(
    protocol_factory: Callable[[], P], host: Any, port: Any, **kwargs: Any
) -> tuple[asyncio.Transport, P]:
    """``loop.create_connection(protocol_factory, host, port, ...)`` with
    hev2's race. Takes ``ssl``, ``server_hostname``,
    ``ssl_handshake_timeout``, ``ssl_shutdown_timeout``, ``local_addr``,
    ``family``, ``happy_eyeballs_delay`` (→ connection_attempt_delay),
    ``interleave`` (→ first_address_family_count), ``all_errors``, and every
    keyword of ``hev2.create_connection`` (resolv_timeout, open_timeout,
    https_rr, alpn, ech ...). With ``https_rr=True``, ``hev2.service_of``
    of the transport says which HTTPS service the connection came from;
    with ``ssl``, the TLS server name stays ``host`` (or the
    ``server_hostname`` given), never a service's target.
    """
    req, all_errors, passed = _request(host, port, kwargs)
    outcome, service = await connect_service(req)
    if not isinstance(outcome, Winner):
        # Not imported by `import hev2` (dataclasses); the first connection loaded it.
        from ._errors import to_exception

        exc = to_exception(outcome, all_errors)
        if req.https_rr:
            exc.hev2_service = service  # type: ignore[attr-defined]
        raise exc
    # Non-blocking as the library returns it; the loop's own setblocking(False)
    # puts the socket object in agreement.
    sock = socket_from(outcome)
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.create_connection(protocol_factory, sock=sock, **passed)
    except BaseException:
        sock.close()
        raise
    if service is not None:
        from ._service import keep

        # hev2.service_of(transport), or of open_connection's StreamWriter.
        keep(transport, service)
    return transport, protocol


async def open_connection(
    host: Any, port: Any, *, limit: int = 2**16, **kwargs: Any
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """``asyncio.open_connection(host, port, ...)`` with hev2's race: returns
    ``(StreamReader, StreamWriter)``. Keywords as for ``create_connection``."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport, _ = await create_connection(lambda: protocol, host, port, **kwargs)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
