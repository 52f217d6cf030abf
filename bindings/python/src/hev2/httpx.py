"""httpx transports whose connections are made by hev2's race.

    client = httpx.Client(transport=hev2.httpx.HTTPTransport())
    client = httpx.AsyncClient(transport=hev2.httpx.AsyncHTTPTransport())

Built only from public extension points: httpx's transport API
(``httpx.BaseTransport`` / ``AsyncBaseTransport``) around httpcore's
connection pool (``httpcore.ConnectionPool`` / ``AsyncConnectionPool``),
given a network backend of hev2's (``Backend`` / ``AsyncBackend``) through
the pool's ``network_backend=``. The backend's ``connect_tcp`` is the only
part that differs from httpcore's own: ``hev2.create_connection`` (blocking)
or ``hev2.aio.open_connection`` (asyncio); TLS, HTTP/1.1 and HTTP/2,
keep-alive and the pool are httpcore's. Tested with httpx 0.23 / httpcore
0.16 (Debian 12).

Not covered: proxies (httpx routes proxied requests to transports of its
own), and the async transport runs under asyncio only (hev2.aio; trio is
refused with a clear error).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

from ._connect import create_connection
from ._connect import validate_defaults as _validate
from ._options import https_rr_ports, with_https_rr

# The backends' base classes: in httpcore.backends up to 0.16 (Debian 12),
# at the top level (and httpcore._backends) from 0.17.
try:
    from httpcore.backends.base import AsyncNetworkBackend, AsyncNetworkStream, NetworkStream
    from httpcore.backends.sync import SyncBackend
except ImportError:
    from httpcore import (  # type: ignore[attr-defined,no-redef]
        AsyncNetworkBackend,
        AsyncNetworkStream,
        NetworkStream,
        SyncBackend,
    )

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

__all__ = ["AsyncBackend", "AsyncHTTPTransport", "Backend", "HTTPTransport"]

SocketOption = tuple[int, int, Any]

# httpx.HTTPTransport's default pool limits.
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


class Backend(SyncBackend):
    """httpcore's blocking network backend with hev2's race in connect_tcp.

    ``options`` are hev2 keyword arguments (``resolv_timeout=``,
    ``connection_attempt_delay=`` ...), as ``hev2.create_connection`` takes,
    and the setting ``https_rr`` (see ``HTTPTransport``).
    """

    def __init__(self, **options: Any) -> None:
        self._https_ports = https_rr_ports(options.pop("https_rr", False))
        _validate(options)
        self._options = options

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> NetworkStream:
        source = None if local_address is None else (local_address, 0)
        with _connect_errors():
            # httpcore's own backend calls socket.create_connection with the
            # same arguments: the timeout bounds the connection phase as it
            # does there (see hev2.create_connection).
            sock = create_connection((host, port), timeout, source, **with_https_rr(self._options, port, self._https_ports))
        _set_options(sock, socket_options)
        # httpcore's own stream over the connected socket (TLS by its start_tls).
        return _sync_stream(sock)


def _sync_stream(sock: socket.socket) -> NetworkStream:
    try:
        from httpcore.backends.sync import SyncStream
    except ImportError:
        from httpcore._backends.sync import SyncStream  # type: ignore[import,no-redef]
    stream: NetworkStream = SyncStream(sock)
    return stream


class AsyncBackend(AsyncNetworkBackend):
    """An httpcore network backend for asyncio: connect_tcp runs hev2's race
    (``hev2.aio.open_connection``, the loop never blocks) and returns a
    stream over asyncio's own streams (TLS by ``StreamWriter.start_tls``)."""

    def __init__(self, **options: Any) -> None:
        self._https_ports = https_rr_ports(options.pop("https_rr", False))
        _validate(options)
        self._options = options

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        _require_asyncio()
        from . import aio

        local = None if local_address is None else (local_address, 0)
        with _connect_errors():
            # timeout bounds the whole connection phase, as httpcore's own
            # backend does with anyio.fail_after; cancelling cancels the race.
            reader, writer = await asyncio.wait_for(
                aio.open_connection(host, port, local_addr=local, **with_https_rr(self._options, port, self._https_ports)),
                timeout,
            )
        sock = writer.get_extra_info("socket")
        try:
            _set_options(sock, socket_options)
        except BaseException:
            writer.close()
            raise
        return AsyncStream(reader, writer)

    async def connect_unix_socket(self, path: str, timeout: float | None = None) -> AsyncNetworkStream:
        _require_asyncio()
        with _connect_errors():
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout)
        return AsyncStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class AsyncStream(AsyncNetworkStream):
    """httpcore's async network stream over an asyncio StreamReader/Writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _io_errors(httpcore.ReadTimeout, httpcore.ReadError):
            return await asyncio.wait_for(self._reader.read(max_bytes), timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        with _io_errors(httpcore.WriteTimeout, httpcore.WriteError):
            self._writer.write(buffer)
            await asyncio.wait_for(self._writer.drain(), timeout)

    async def aclose(self) -> None:
        # Not waiting for the close to complete: over TLS that would wait for
        # the peer's close_notify (up to asyncio's 30 s shutdown timeout),
        # which httpcore's own backend does not do either.
        self._writer.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncNetworkStream:
        with _io_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
            try:
                await self._writer.start_tls(
                    ssl_context, server_hostname=server_hostname, ssl_handshake_timeout=timeout
                )
            except BaseException:
                self._writer.close()
                raise
        return self

    def get_extra_info(self, info: str) -> Any:
        w = self._writer
        if info == "ssl_object":
            return w.get_extra_info("ssl_object")
        if info == "client_addr":
            return w.get_extra_info("sockname")
        if info == "server_addr":
            return w.get_extra_info("peername")
        if info == "socket":
            return w.get_extra_info("socket")
        if info == "is_readable":
            # httpcore asks before reusing an idle connection: the loop has
            # read whatever arrived, so "readable" is EOF, an error or data
            # the server sent unasked.
            return self._reader.at_eof() or self._reader.exception() is not None or w.is_closing()
        return None


class HTTPTransport(httpx.BaseTransport):
    """``httpx.HTTPTransport`` with hev2's race: takes its arguments (``verify``,
    ``cert``, ``http1``, ``http2``, ``limits``, ``trust_env``,
    ``local_address``, ``retries``; not ``proxy`` or ``uds``) and hev2's
    options as keywords (``resolv_timeout=``, ``resolver=`` ...).

    ``https_rr`` is a setting here, as the network backend sees a host and
    a port, not the URL: True asks the HTTPS record (Happy Eyeballs v3) for
    connections to port 443, a collection of ports for those (``{443,
    8443}``); the record may redirect the connection to another port,
    while httpcore's TLS still sends the URL's host as its server name and
    checks the certificate against it."""

    def __init__(
        self,
        verify: Any = True,
        cert: Any = None,
        http1: bool = True,
        http2: bool = False,
        limits: httpx.Limits = DEFAULT_LIMITS,
        trust_env: bool = True,
        local_address: str | None = None,
        retries: int = 0,
        **options: Any,
    ) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env, http2=http2),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=http1,
            http2=http2,
            local_address=local_address,
            retries=retries,
            network_backend=Backend(**options),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with _httpx_errors():
            resp = self._pool.handle_request(_to_httpcore(request))
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_ResponseStream(resp.stream),
            extensions=resp.extensions,
        )

    def close(self) -> None:
        with _httpx_errors():
            self._pool.close()


class AsyncHTTPTransport(httpx.AsyncBaseTransport):
    """``httpx.AsyncHTTPTransport`` with hev2's race (asyncio only); arguments
    as ``HTTPTransport``'s."""

    def __init__(
        self,
        verify: Any = True,
        cert: Any = None,
        http1: bool = True,
        http2: bool = False,
        limits: httpx.Limits = DEFAULT_LIMITS,
        trust_env: bool = True,
        local_address: str | None = None,
        retries: int = 0,
        **options: Any,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env, http2=http2),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=http1,
            http2=http2,
            local_address=local_address,
            retries=retries,
            network_backend=AsyncBackend(**options),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _httpx_errors():
            resp = await self._pool.handle_async_request(_to_httpcore(request))
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_AsyncResponseStream(resp.stream),
            extensions=resp.extensions,
        )

    async def aclose(self) -> None:
        with _httpx_errors():
            await self._pool.aclose()


def _to_httpcore(request: httpx.Request) -> httpcore.Request:
    url = request.url
    return httpcore.Request(
        method=request.method,
        url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
        headers=request.headers.raw,
        content=request.stream,
        extensions=request.extensions,
    )


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        if hasattr(self._stream, "close"):
            with _httpx_errors():
                self._stream.close()


class _AsyncResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            with _httpx_errors():
                await self._stream.aclose()


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's of the same name (httpx names each
    of httpcore's: ConnectTimeout, ReadError, RemoteProtocolError ...), as
    httpx's own transport raises them."""
    try:
        yield
    except Exception as exc:
        for cls in type(exc).__mro__:
            if cls.__module__.split(".")[0] != "httpcore":
                continue
            target = getattr(httpx, cls.__name__, None)
            if isinstance(target, type) and issubclass(target, httpx.TransportError):
                raise target(str(exc)) from exc
        raise


@contextlib.contextmanager
def _connect_errors() -> Iterator[None]:
    """hev2's connection errors as httpcore's, as its own backends map them."""
    try:
        yield
    except (TimeoutError, asyncio.TimeoutError) as exc:
        raise httpcore.ConnectTimeout(str(exc) or "connect timed out") from exc
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from exc


@contextlib.contextmanager
def _io_errors(timeout: type[Exception], error: type[Exception]) -> Iterator[None]:
    try:
        yield
    except (TimeoutError, asyncio.TimeoutError) as exc:
        raise timeout(str(exc) or "timed out") from exc
    except (OSError, EOFError, ssl.SSLError) as exc:
        raise error(str(exc)) from exc


def _set_options(sock: Any, options: Iterable[SocketOption] | None) -> None:
    # httpcore >= 0.17 passes the client's socket options (httpx's
    # socket_options=); set on the winner, after connect().
    for opt in options or ():
        sock.setsockopt(*opt)


def _require_asyncio() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError("hev2.httpx.AsyncHTTPTransport runs under asyncio only (hev2.aio)") from None
