"""resolver='builtin': the library's own DNS client, pointed with
nameservers= at a real DNS server on loopback (so no namespace is needed:
it asks nobody else)."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

import hev2
import hev2.aio
from loopback import fd_count, listener, one_port
from testdns import DNSServer

NEVER = {"never": True}
ZONE = {
    "both.test": {"A": ["127.0.0.1"], "AAAA": ["::1"]},
    "noaaaa.test": {"A": ["127.0.0.1"], "AAAA": NEVER},
    "dead.test": {"A": NEVER, "AAAA": NEVER},
}


@pytest.fixture
def dns():
    with DNSServer(ZONE) as server:
        yield server


def builtin(dns, **kw):
    return {"resolver": "builtin", "nameservers": [dns.address], **kw}


def test_names_resolve_and_ipv6_is_preferred():
    # Both families are asked (the AAAA answer is held until the A query
    # has arrived: otherwise a fast ::1 may win before the A query is even
    # written, and the lookup is cancelled unsent), and ::1 wins.
    held = {"both.test": {"A": ["127.0.0.1"], "AAAA": {"addrs": ["::1"], "hold_until": {"type": "A"}}}}
    both = one_port(lambda p: listener("::1", port=p), lambda p: listener("127.0.0.1", port=p))
    with DNSServer({**ZONE, **held}) as dns, both as port:
        with hev2.create_connection(("both.test", port), **builtin(dns)) as s:
            assert s.getpeername()[0] == "::1"
        assert ("both.test", "AAAA") in dns.queries and ("both.test", "A") in dns.queries


def test_nxdomain_is_gaierror(dns):
    with pytest.raises(socket.gaierror) as info:
        hev2.create_connection(("nx.test", 80), **builtin(dns))
    assert info.value.errno == socket.EAI_NONAME


def test_silent_aaaa_does_not_stall(dns):
    with listener("127.0.0.1") as port:
        start = time.monotonic()
        with hev2.create_connection(("noaaaa.test", port), **builtin(dns)) as s:
            assert s.getpeername()[0] == "127.0.0.1"
        assert time.monotonic() - start < 1.0  # the 50 ms resolution delay, not a DNS timeout


def test_resolv_timeout(dns):
    with pytest.raises(TimeoutError) as info:
        hev2.create_connection(("dead.test", 80), **builtin(dns, resolv_timeout=0.2))
    assert info.value.timeout_kind == "resolv_timeout"


def test_cancelling_a_pending_lookup_closes_its_sockets(dns):
    async def main():
        before = fd_count()
        task = asyncio.create_task(hev2.aio.open_connection("dead.test", 80, **builtin(dns)))
        # both queries sent (the server saw them), no answer coming
        deadline = time.monotonic() + 10
        while not {("dead.test", "A"), ("dead.test", "AAAA")} <= set(dns.queries) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        assert hev2.stats()["handles_running"] == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 2
        while (fd_count() != before or hev2.stats()["handles_running"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return before, fd_count()

    before, after = asyncio.run(main())
    assert after == before
    assert hev2.stats()["handles_running"] == 0
