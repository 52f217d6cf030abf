"""hev2.httpx: httpx transports around httpcore's pool with hev2's network
backend, blocking and asyncio, on loopback (the bed test judges the race's
timing). hev2's options reach the race; failures are httpx's exceptions."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

import hev2
import hev2.httpx
from http_loopback import http_server
from loopback import blackhole, one_port, refusing

DUAL = {"dual.test": ["::1", "127.0.0.1"]}


def created():
    return hev2.stats()["handles_created"]


def test_blocking_transport_races():
    with one_port(lambda p: http_server("127.0.0.1", p), lambda p: blackhole("::1", p)) as port:
        before = created()
        with httpx.Client(transport=hev2.httpx.HTTPTransport(hosts=DUAL), trust_env=False) as c:
            assert c.get(f"http://dual.test:{port}/").text == "hello from 127.0.0.1"
            # keep-alive: the pool reuses the connection
            assert c.get(f"http://dual.test:{port}/again").text == "hello from 127.0.0.1"
        assert created() == before + 1


def test_async_transport_races():
    async def main():
        async with httpx.AsyncClient(transport=hev2.httpx.AsyncHTTPTransport(hosts=DUAL), trust_env=False) as c:
            r = await c.get(f"http://dual.test:{port}/")
            s = r.extensions["network_stream"].get_extra_info("socket")
            return r.text, s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)

    with one_port(lambda p: http_server("127.0.0.1", p), lambda p: blackhole("::1", p)) as port:
        before = created()
        text, nodelay = asyncio.run(main())
    assert text == "hello from 127.0.0.1"
    assert nodelay == 1  # asyncio's transport sets it, as under httpx's own backend
    assert created() == before + 1


def test_errors_are_httpx_errors():
    with refusing("127.0.0.1") as port:
        with httpx.Client(transport=hev2.httpx.HTTPTransport(), trust_env=False) as c:
            with pytest.raises(httpx.ConnectError) as e:
                c.get(f"http://127.0.0.1:{port}/")
        assert isinstance(e.value.__cause__.__cause__, ConnectionRefusedError)

        async def main():
            async with httpx.AsyncClient(transport=hev2.httpx.AsyncHTTPTransport(), trust_env=False) as c:
                await c.get(f"http://127.0.0.1:{port}/")

        with pytest.raises(httpx.ConnectError):
            asyncio.run(main())
    with blackhole("127.0.0.1") as port:
        with httpx.Client(transport=hev2.httpx.HTTPTransport(), trust_env=False, timeout=0.2) as c:
            with pytest.raises(httpx.ConnectTimeout):
                c.get(f"http://127.0.0.1:{port}/")


def test_bad_hev2_options_are_refused_at_once():
    with pytest.raises(TypeError, match="bogus"):
        hev2.httpx.HTTPTransport(bogus=1)
    with pytest.raises(ValueError, match="resolver"):
        hev2.httpx.AsyncHTTPTransport(resolver="nope")
