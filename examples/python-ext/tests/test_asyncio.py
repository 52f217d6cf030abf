"""hev2ext.connect_async: the outcome completes a Future on the running loop,
through the handle's fd (route "fd", the default) or the library's callback
calling loop.call_soon_threadsafe (route "threadsafe"); both are tested
under the same conditions as the blocking form."""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
import unittest
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import hev2ext
from helpers import (
    DEADLINE,
    RACE_NAME,
    BusyThread,
    LeakCheckedTest,
    blackhole,
    blackhole_beside_listening,
    listener,
    open_fds,
    refused_beside_listening,
)


T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), DEADLINE)

    return asyncio.run(bounded())


async def roundtrip(sock: socket.socket, lst: socket.socket) -> None:
    """One byte each way, through the loop (the socket is non-blocking)."""
    loop = asyncio.get_running_loop()
    lst.setblocking(False)
    peer, _ = await loop.sock_accept(lst)
    with peer:
        await loop.sock_sendall(sock, b"q")
        assert await loop.sock_recv(peer, 1) == b"q"
        await loop.sock_sendall(peer, b"a")
        assert await loop.sock_recv(sock, 1) == b"a"


class AsyncFormTests(LeakCheckedTest):
    """The tests; each subclass runs them on one route (load_tests leaves
    this class itself out)."""

    ROUTE = ""

    def connect(self, host: str, port: int, **kw: Any) -> hev2ext.Connect:
        return hev2ext.connect_async(host, port, route=self.ROUTE, **kw)

    def test_completes_with_a_non_blocking_socket(self) -> None:
        with listener() as lst:

            async def main() -> None:
                sock = await self.connect("127.0.0.1", lst.getsockname()[1])
                with sock:
                    self.assertIsInstance(sock, socket.socket)
                    self.assertEqual(sock.gettimeout(), 0.0)
                    self.assertEqual(sock.getpeername(), lst.getsockname())
                    await roundtrip(sock, lst)

            run(main)
        self.assert_nothing_left()

    def test_race_through_a_refused_address(self) -> None:
        for refused, listening in (("::1", "127.0.0.1"), ("127.0.0.1", "::1")):
            with self.subTest(refused=refused), refused_beside_listening(refused, listening) as (hosts, port, lst):

                async def main() -> None:
                    with await self.connect(RACE_NAME, port, static_hosts=hosts) as sock:
                        self.assertEqual(sock.getpeername()[:2], lst.getsockname()[:2])
                        await roundtrip(sock, lst)

                run(main)
        self.assert_nothing_left()

    def test_race_decided_on_a_library_thread(self) -> None:
        with blackhole_beside_listening("::1", "127.0.0.1") as (hosts, port, lst):

            async def main() -> None:
                fut = self.connect(RACE_NAME, port, static_hosts=hosts, connection_attempt_delay=0.01)
                with await fut as sock:
                    self.assertEqual(sock.getpeername()[:2], lst.getsockname()[:2])

            run(main)
        self.assert_nothing_left()

    def test_failure_raises_the_errno_of_the_attempt(self) -> None:
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))

            async def main() -> None:
                with self.assertRaises(ConnectionRefusedError) as caught:
                    await self.connect("127.0.0.1", holder.getsockname()[1])
                self.assertEqual(caught.exception.errno, errno.ECONNREFUSED)

            run(main)
        self.assert_nothing_left()

    def test_busy_thread_holds_the_gil(self) -> None:
        with listener() as lst, BusyThread() as busy:

            async def main() -> list[socket.socket]:
                return await asyncio.gather(*(self.connect("127.0.0.1", lst.getsockname()[1]) for _ in range(20)))

            socks = run(main)
            self.assertGreater(busy.spins, 0)
        self.assertEqual(len(socks), 20)
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_many_in_flight_each_completes_once(self) -> None:
        n = 200
        calls = [0] * n
        threads: set[int] = set()

        def counter(i: int) -> Callable[[asyncio.Future[socket.socket]], None]:
            def count(_: asyncio.Future[socket.socket]) -> None:
                calls[i] += 1
                threads.add(threading.get_ident())

            return count

        with refused_beside_listening("::1", "127.0.0.1") as (hosts, port, lst), BusyThread():

            async def main() -> list[socket.socket]:
                conns = []
                for i in range(n):
                    if i % 2:
                        c = self.connect(RACE_NAME, port, static_hosts=hosts)
                    else:
                        c = self.connect("127.0.0.1", port)
                    assert c.future is not None
                    c.future.add_done_callback(counter(i))
                    conns.append(c)
                socks = await asyncio.gather(*conns)
                await asyncio.sleep(0)  # the last done-callbacks run in this turn
                return socks

            socks = run(main)
        self.assertEqual(calls, [1] * n)
        self.assertEqual(threads, {threading.get_ident()}, "callbacks on the loop's thread")
        self.assertEqual(len({s.fileno() for s in socks}), n)
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_cancels_in_the_middle(self) -> None:
        n = 100
        with blackhole() as hole, listener() as lst, BusyThread():

            async def main() -> list[socket.socket]:
                # Half are cancelled through their task (the future is
                # cancelled first, and the handle released), half through
                # Connect.cancel (the outcome comes, cancelled).
                conns = [self.connect("127.0.0.1", hole) for _ in range(n)]
                tasks = [asyncio.ensure_future(c) for c in conns[::2]]
                await asyncio.sleep(0)  # each task is at its await
                good = [self.connect("127.0.0.1", lst.getsockname()[1]) for _ in range(n)]
                for t in tasks[::2]:
                    t.cancel()
                for c in conns[1::4]:
                    c.cancel()
                socks = await asyncio.gather(*good)
                for t in tasks[1::2]:
                    t.cancel()
                for c in conns[3::4]:
                    c.cancel()
                for waiting in tasks + conns[1::2]:
                    with self.assertRaises(asyncio.CancelledError):
                        await waiting
                self.assertEqual({c.status for c in conns}, {-15})  # HEV2_ECANCELED
                # The cancelled futures' done-callbacks (which release the
                # handles) run in the loop's next turn.
                await asyncio.sleep(0)
                return socks

            socks = run(main)
        self.assertEqual(len(socks), n)
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_cancelled_task_releases_the_connect(self) -> None:
        with blackhole() as hole:

            async def main() -> None:
                task = asyncio.ensure_future(self.connect("127.0.0.1", hole))
                await asyncio.sleep(0)
                task.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await task

            run(main)
        self.assert_nothing_left()

    def test_needs_a_running_loop(self) -> None:
        with self.assertRaises(RuntimeError):
            self.connect("127.0.0.1", 9)
        self.assert_nothing_left()


class FdRouteTest(AsyncFormTests):
    ROUTE = "fd"


class ThreadsafeRouteTest(AsyncFormTests):
    ROUTE = "threadsafe"


class RouteChoiceTest(unittest.TestCase):
    def test_default_route_watches_the_handle_fd(self) -> None:
        # While a connect is pending, the fd route holds the attempt's
        # socket and the handle's eventfd; the threadsafe route the socket.
        with blackhole() as hole:

            async def held(**route: Any) -> int:
                before = open_fds()
                c = hev2ext.connect_async("127.0.0.1", hole, **route)
                during = open_fds() - before
                c.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await c
                return during

            self.assertEqual(run(lambda: held()), 2)
            self.assertEqual(run(lambda: held(route="threadsafe")), 1)
        with self.assertRaises(ValueError):
            hev2ext.connect_async("127.0.0.1", 9, route="other")


def load_tests(loader: unittest.TestLoader, tests: unittest.TestSuite, pattern: str | None) -> unittest.TestSuite:
    return unittest.TestSuite(
        loader.loadTestsFromTestCase(case) for case in (FdRouteTest, ThreadsafeRouteTest, RouteChoiceTest)
    )


if __name__ == "__main__":
    unittest.main()
