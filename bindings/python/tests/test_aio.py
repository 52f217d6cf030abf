"""hev2.aio: the race runs in the library while the loop only watches the
handle's fd. Other tasks keep running; cancelling the task mid-race closes
every socket and the handle's fd."""

from __future__ import annotations

import asyncio
import errno
import socket
import time

import pytest

import hev2
import hev2.aio
from loopback import blackhole, fd_count, one_port, refusing


def run(coro):
    return asyncio.run(coro)


async def echo_server(host):
    async def handle(reader, writer):
        writer.write(await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, host, 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_open_connection_streams_work(host):
    async def main():
        server, port = await echo_server(host)
        async with server:
            reader, writer = await hev2.aio.open_connection(host, port)
            writer.write(b"hello hev2")
            await writer.drain()
            data = await reader.read(100)
            peer = writer.get_extra_info("peername")
            writer.close()
            await writer.wait_closed()
            return data, peer

    data, peer = run(main())
    assert data == b"hello hev2" and peer[:2][0] == host


def test_create_connection_with_a_protocol():
    class Collect(asyncio.Protocol):
        def __init__(self):
            self.got = bytearray()
            self.closed = asyncio.get_running_loop().create_future()

        def data_received(self, data):
            self.got += data

        def connection_lost(self, exc):
            self.closed.set_result(None)

    async def main():
        server, port = await echo_server("127.0.0.1")
        async with server:
            transport, proto = await hev2.aio.create_connection(
                Collect, "named.test", port, hosts={"named.test": ["127.0.0.1"]}
            )
            transport.write(b"ping")
            await asyncio.wait_for(proto.closed, 5)
            return bytes(proto.got), transport.get_extra_info("socket").family

    got, family = run(main())
    assert got == b"ping" and family == socket.AF_INET


def test_other_tasks_keep_running_during_the_race():
    async def main(port):
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        t = asyncio.create_task(ticker())
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            await hev2.aio.open_connection("::1", port, connect_timeout=0.4)
        elapsed = time.monotonic() - start
        t.cancel()
        return ticks, elapsed

    with blackhole("::1") as port:
        ticks, elapsed = run(main(port))
    assert elapsed >= 0.35
    # A loop blocked by the race ticks at most once (after it); a free one
    # ~40 times, fewer on a loaded machine, where a 10 ms sleep may take 50.
    assert ticks >= 3, ticks


def test_cancelling_mid_race_closes_everything():
    async def main(port):
        before = fd_count()
        task = asyncio.create_task(
            hev2.aio.open_connection(
                "hole.test", port, hosts={"hole.test": ["::1", "127.0.0.1"]}, connection_attempt_delay=0.05
            )
        )
        # the race is running (polled: a fixed sleep may end before it
        # starts on a loaded machine)
        deadline = time.monotonic() + 10
        while hev2.stats()["handles_running"] != 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        assert hev2.stats()["handles_running"] == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Attempt sockets are closed by the library's goroutine right after
        # the cancel; the handle's eventfd was closed by release.
        deadline = time.monotonic() + 2
        while (fd_count() != before or hev2.stats()["handles_running"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return before, fd_count(), hev2.stats()

    # ::1 and 127.0.0.1 blackholed on the same port
    with one_port(lambda p: blackhole("::1", p), lambda p: blackhole("127.0.0.1", p)) as port:
        before, after, stats = run(main(port))
    assert after == before
    assert stats["handles_live"] == 0 and stats["handles_running"] == 0


def test_errors_are_the_same_as_blocking():
    async def main(port, hole):
        with pytest.raises(ConnectionRefusedError) as refused:
            await hev2.aio.open_connection("127.0.0.1", port)
        with pytest.raises(ExceptionGroup) as group:
            await hev2.aio.open_connection("127.0.0.1", port, all_errors=True)
        with pytest.raises(TimeoutError) as timeout:
            await hev2.aio.open_connection("127.0.0.1", hole, open_timeout=0.1)
        return refused.value, group.value, timeout.value

    with refusing("127.0.0.1") as port, blackhole("127.0.0.1") as hole:
        refused, group, timeout = run(main(port, hole))
    assert refused.errno == errno.ECONNREFUSED
    assert [type(e) for e in group.exceptions] == [ConnectionRefusedError]
    assert timeout.timeout_kind == "open_timeout"


def test_bad_keywords_are_refused():
    async def main():
        with pytest.raises(ValueError, match="proto"):
            await hev2.aio.open_connection("127.0.0.1", 80, proto=6)
        with pytest.raises(TypeError, match="bogus"):
            await hev2.aio.open_connection("127.0.0.1", 80, bogus=1)

    run(main())


def test_many_concurrent_connections_in_one_loop():
    async def main(port):
        before = fd_count()
        results = await asyncio.gather(*(hev2.aio.open_connection("127.0.0.1", port) for _ in range(100)))
        for _, writer in results:
            writer.close()
        await asyncio.gather(*(w.wait_closed() for _, w in results))
        return before, fd_count()

    async def serve():
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0, backlog=200)
        async with server:
            return await main(server.sockets[0].getsockname()[1])

    before, after = run(serve())
    assert after == before


def test_tls_verifies_the_host_name(tmp_path):
    """ssl= is passed to the loop with server_hostname defaulting to the host
    asked for (what loop.create_connection(host=...) would verify)."""
    import ssl
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=tls.test",
         "-addext", "subjectAltName=DNS:tls.test"],
        check=True, capture_output=True,
    )
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))

    async def main():
        async def hello(reader, writer):
            writer.write(b"secret")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(hello, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        hosts = {"tls.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}
        async with server:
            reader, writer = await hev2.aio.open_connection("tls.test", port, ssl=client_ctx, hosts=hosts)
            data = await reader.read()
            version = writer.get_extra_info("ssl_object").version()
            writer.close()
            with pytest.raises(ssl.SSLCertVerificationError):
                await hev2.aio.open_connection("other.test", port, ssl=client_ctx, hosts=hosts)
        return data, version

    data, version = run(main())
    assert data == b"secret" and version.startswith("TLS")
