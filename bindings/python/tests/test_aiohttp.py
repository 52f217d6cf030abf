"""hev2.aiohttp.TCPConnector: the race makes aiohttp's connections (aiohttp
3.8's private hooks, behind a version guard), on loopback (the bed test
judges the race's timing)."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest

import hev2
import hev2.aiohttp
from http_loopback import http_server
from loopback import blackhole, one_port, refusing

DUAL = {"dual.test": ["::1", "127.0.0.1"]}


def created():
    return hev2.stats()["handles_created"]


def test_connector_races():
    async def main():
        connector = hev2.aiohttp.TCPConnector(hev2_options={"hosts": DUAL})
        async with aiohttp.ClientSession(connector=connector) as s:
            async with s.get(f"http://dual.test:{port}/") as r:
                first = await r.text()
            async with s.get(f"http://dual.test:{port}/again") as r:
                return first, await r.text()

    with one_port(lambda p: http_server("127.0.0.1", p), lambda p: blackhole("::1", p)) as port:
        before = created()
        assert asyncio.run(main()) == ("hello from 127.0.0.1", "hello from 127.0.0.1")
        assert created() == before + 1  # the second request reused the pooled connection


def test_family_and_errors():
    async def get(url, **kw):
        async with aiohttp.ClientSession(connector=hev2.aiohttp.TCPConnector(**kw)) as s:
            async with s.get(url) as r:
                return await r.text()

    with http_server("::1") as port:
        # family= restricts the race as it restricts aiohttp's resolver
        with pytest.raises(aiohttp.ClientConnectorError):
            asyncio.run(get(f"http://dual.test:{port}/", family=socket.AF_INET, hev2_options={"hosts": {"dual.test": ["::1"]}}))
        assert asyncio.run(get(f"http://dual.test:{port}/", hev2_options={"hosts": DUAL})) == "hello from ::1"
    with refusing("127.0.0.1") as port:
        with pytest.raises(aiohttp.ClientConnectorError) as e:
            asyncio.run(get(f"http://127.0.0.1:{port}/"))
        assert isinstance(e.value.os_error, ConnectionRefusedError)


def test_version_guard(monkeypatch):
    monkeypatch.setattr(aiohttp, "__version__", "3.10.0")

    async def make():
        hev2.aiohttp.TCPConnector()

    with pytest.raises(RuntimeError, match="private methods of aiohttp 3.8"):
        asyncio.run(make())


def test_bad_hev2_options_are_refused_at_once():
    async def make():
        hev2.aiohttp.TCPConnector(hev2_options={"bogus": 1})

    with pytest.raises(TypeError, match="bogus"):
        asyncio.run(make())
