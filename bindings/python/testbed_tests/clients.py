"""Every HTTP client of the integration tests, one GET each on a fresh
connection, with hev2 or without it.

requests, urllib3, urllib and http.client get hev2 from ``hev2.install()``
(the caller installs it, or not); httpx and aiohttp from hev2's transport and
connector (``use_hev2``). Each returns what the bed's web server saw (its
JSON: peer, local address, family, tls) and the TCP_NODELAY value of the
client's socket, read while the response is still open.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import ssl
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable

import aiohttp
import httpx
import requests
import urllib3

import hev2


@dataclass
class Got:
    seen: dict[str, Any]
    nodelay: int | None  # None: the client does not expose its socket


def nodelay_of(sock: Any) -> int:
    return int(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0)


def get_requests(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    with requests.Session() as s:
        s.trust_env = False  # no proxy from the environment
        with s.get(url, verify=ca, timeout=timeout, stream=True) as r:
            nodelay = nodelay_of(r.raw.connection.sock)
            return Got(json.loads(r.content), nodelay)


def get_urllib3(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    with urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca, timeout=timeout, retries=False) as pm:
        r = pm.request("GET", url, preload_content=False)
        try:
            nodelay = nodelay_of(r.connection.sock)
            return Got(json.loads(r.read()), nodelay)
        finally:
            r.release_conn()


def get_urllib(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca))
    )
    with opener.open(url, timeout=timeout) as r:
        return Got(json.loads(r.read()), None)


def get_http_client(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    u = urllib.parse.urlsplit(url)
    assert u.hostname and u.port
    conn: http.client.HTTPConnection
    if u.scheme == "https":
        conn = http.client.HTTPSConnection(
            u.hostname, u.port, timeout=timeout, context=ssl.create_default_context(cafile=ca)
        )
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", u.path)
        r = conn.getresponse()
        nodelay = nodelay_of(conn.sock)
        return Got(json.loads(r.read()), nodelay)
    finally:
        conn.close()


def get_httpx(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    transport = hev2.httpx.HTTPTransport(verify=ca) if use_hev2 else httpx.HTTPTransport(verify=ca)
    with httpx.Client(transport=transport, trust_env=False, timeout=timeout) as c:
        with c.stream("GET", url) as r:
            nodelay = nodelay_of(r.extensions["network_stream"].get_extra_info("socket"))
            return Got(json.loads(r.read()), nodelay)


def get_httpx_async(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    async def main() -> Got:
        transport = hev2.httpx.AsyncHTTPTransport(verify=ca) if use_hev2 else httpx.AsyncHTTPTransport(verify=ca)
        async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=timeout) as c:
            async with c.stream("GET", url) as r:
                nodelay = nodelay_of(r.extensions["network_stream"].get_extra_info("socket"))
                return Got(json.loads(await r.aread()), nodelay)

    return asyncio.run(main())


class _SeenConnector(hev2.aiohttp.TCPConnector):
    """Keeps the transports it made: aiohttp gives the response's connection
    back to the pool as soon as the (small) body is in, so the socket is
    read from here, still open in the pool."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transports: list[Any] = []

    async def _wrap_create_connection(self, *args: Any, **kwargs: Any) -> Any:
        transport, protocol = await super()._wrap_create_connection(*args, **kwargs)
        self.transports.append(transport)
        return transport, protocol


def get_aiohttp(url: str, ca: str, use_hev2: bool, timeout: float) -> Got:
    async def main() -> Got:
        ctx = ssl.create_default_context(cafile=ca)
        connector = _SeenConnector(ssl=ctx) if use_hev2 else aiohttp.TCPConnector(ssl=ctx)
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=timeout)) as s:
            async with s.get(url) as r:
                body = await r.read()
            nodelay = None
            if isinstance(connector, _SeenConnector):
                (transport,) = connector.transports
                nodelay = nodelay_of(transport.get_extra_info("socket"))
            return Got(json.loads(body), nodelay)

    return asyncio.run(main())


# name -> (get, the TCP_NODELAY the client itself asks for: urllib3 sets it
# (default_socket_options), http.client after connecting, aiohttp and asyncio
# on their transports; httpcore's blocking backend sets nothing).
CLIENTS: dict[str, tuple[Callable[[str, str, bool, float], Got], int | None]] = {
    "requests": (get_requests, 1),
    "urllib3": (get_urllib3, 1),
    "urllib": (get_urllib, None),
    "http.client": (get_http_client, 1),
    "httpx": (get_httpx, 0),
    "httpx-async": (get_httpx_async, 1),
    "aiohttp": (get_aiohttp, 1),
}
