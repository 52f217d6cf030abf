"""hev2ext.connect: the outcome reaches Python through a pending call.

Run from the extension's build directory (see examples/python-ext/README.md):
    python3 -m unittest discover -s tests -t tests
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import threading
import time
import unittest

import hev2ext
from helpers import (
    DEADLINE,
    RACE_NAME,
    BusyThread,
    LeakCheckedTest,
    blackhole,
    blackhole_beside_listening,
    exchange,
    listener,
    refused_beside_listening,
)


def wait_until_blocked_in_read(thread: threading.Thread, fd: int) -> None:
    """Returns once thread sleeps in a system call whose first argument is fd
    (its read): /proc/self/task/TID/syscall is "NUMBER ARG1 ..." then."""
    path = f"/proc/self/task/{thread.native_id}/syscall"
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        with open(path) as f:
            fields = f.read().split()
        if len(fields) > 1 and fields[0] not in ("running", "-1") and int(fields[1], 16) == fd:
            return
        time.sleep(0.001)
    raise AssertionError(f"{thread.name} never blocked in read({fd})")


class Counted:
    """add_done_callback's counter: how often, and on which thread."""

    def __init__(self) -> None:
        self.calls = 0
        self.threads: set[int] = set()

    def __call__(self, c: hev2ext.Connect) -> None:
        self.calls += 1
        self.threads.add(threading.get_ident())


class BlockingFormTest(LeakCheckedTest):
    """The blocking-friendly form (hev2ext.connect)."""

    def test_hands_over_a_connected_socket_once(self) -> None:
        with listener() as lst:
            c = hev2ext.connect("127.0.0.1", lst.getsockname()[1])
            sock = c.wait(DEADLINE)
            self.assertIsInstance(sock, socket.socket)
            self.assertIs(c.wait(), sock, "the same socket object every time")
            self.assertEqual(c.status, 0)
            self.assertIsNone(sock.gettimeout(), "a blocking socket, as socket.create_connection's")
            self.assertEqual(sock.getpeername(), lst.getsockname())
            exchange(sock, lst)
            fd = sock.fileno()
            sock.close()
            # The socket object owned the fd: closing it closed the fd.
            with self.assertRaises(OSError):
                socket.socket(fileno=fd)
            self.assertGreater(c.finished_ns, 0)
            self.assertGreaterEqual(c.delivered_ns, c.finished_ns)
        self.assert_nothing_left()

    def test_race_through_a_refused_address(self) -> None:
        for refused, listening in (("::1", "127.0.0.1"), ("127.0.0.1", "::1")):
            with self.subTest(refused=refused), refused_beside_listening(refused, listening) as (hosts, port, lst):
                with hev2ext.connect(RACE_NAME, port, static_hosts=hosts).wait(DEADLINE) as sock:
                    self.assertEqual(sock.getpeername()[:2], lst.getsockname()[:2])
                    exchange(sock, lst)
        self.assert_nothing_left()

    def test_race_decided_on_a_library_thread(self) -> None:
        # ::1's SYNs are dropped; 127.0.0.1 is tried after the attempt delay
        # (10 ms) by a library thread, which then calls the callback.
        with blackhole_beside_listening("::1", "127.0.0.1") as (hosts, port, lst):
            c = hev2ext.connect(RACE_NAME, port, static_hosts=hosts, connection_attempt_delay=0.01)
            with c.wait(DEADLINE) as sock:
                self.assertEqual(sock.getpeername()[:2], lst.getsockname()[:2])
        self.assert_nothing_left()

    def test_failure_raises_the_errno_of_the_attempt(self) -> None:
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            c = hev2ext.connect("127.0.0.1", holder.getsockname()[1])
            with self.assertRaises(ConnectionRefusedError) as caught:
                c.wait(DEADLINE)
            self.assertEqual(caught.exception.errno, errno.ECONNREFUSED)
            self.assertIn("127.0.0.1", str(caught.exception))
            self.assertEqual(c.status, -12)  # HEV2_ECONNECT
        self.assert_nothing_left()

    def test_bad_input_is_refused_at_once(self) -> None:
        with self.assertRaises(hev2ext.Error) as caught:
            hev2ext.connect("", 80)
        self.assertIn("hev2_connect", str(caught.exception))
        with self.assertRaises(ValueError):
            hev2ext.connect("127.0.0.1", 80, connect_timeout=-1)
        self.assert_nothing_left()

    def test_wait_times_out_and_the_cancel_completes(self) -> None:
        with blackhole() as port:
            c = hev2ext.connect("127.0.0.1", port)
            with self.assertRaises(TimeoutError):
                c.wait(0.05)
            self.assertFalse(c.done())
            c.cancel()
            with self.assertRaises(hev2ext.CancelledError) as caught:
                c.wait(DEADLINE)
            self.assertEqual(caught.exception.errno, errno.ECANCELED)
            self.assertEqual(c.status, -15)  # HEV2_ECANCELED
            c.cancel()  # after the outcome: nothing
        self.assert_nothing_left()

    def test_ctrl_c_interrupts_wait_not_the_connect(self) -> None:
        with blackhole() as port:
            c = hev2ext.connect("127.0.0.1", port)
            main = threading.get_ident()  # unittest runs the tests on the main thread

            def interrupt() -> None:
                # Aimed at the main thread inside wait() (the connect never
                # finishes by itself: its SYNs are dropped). Where it lands
                # does not change what is asserted: the interrupt is raised
                # and the connect still runs.
                time.sleep(0.1)
                signal.pthread_kill(main, signal.SIGINT)

            killer = threading.Thread(target=interrupt)
            try:
                with self.assertRaises(KeyboardInterrupt):
                    killer.start()
                    c.wait(DEADLINE)
            finally:
                killer.join(DEADLINE)
            self.assertFalse(c.done(), "the connect goes on")
            c.cancel()
            with self.assertRaises(hev2ext.CancelledError):
                c.wait(DEADLINE)
        self.assert_nothing_left()

    def test_busy_thread_holds_the_gil(self) -> None:
        with listener() as lst, BusyThread() as busy:
            port = lst.getsockname()[1]
            counted = [Counted() for _ in range(20)]
            conns = []
            for cb in counted:
                c = hev2ext.connect("127.0.0.1", port)
                c.add_done_callback(cb)
                conns.append(c)
            socks = [c.wait(DEADLINE) for c in conns]
            spins = busy.spins
        self.assertGreater(spins, 0)
        self.assertEqual([cb.calls for cb in counted], [1] * 20)
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_main_thread_running_python_gets_the_pending_call(self) -> None:
        # No wait(): the main thread runs Python, never releasing the GIL,
        # and the callback comes from the pending call at its next check
        # (on CPython 3.11, once the extension's nudger took the GIL).
        before = hev2ext.stats()
        with listener() as lst:
            c = hev2ext.connect("127.0.0.1", lst.getsockname()[1])
            cb = Counted()
            c.add_done_callback(cb)
            deadline = time.monotonic() + DEADLINE
            spins = 0
            while not cb.calls and time.monotonic() < deadline:
                spins += 1
            self.assertEqual(cb.calls, 1, f"no callback after {spins} turns of the loop")
            self.assertEqual(cb.threads, {threading.main_thread().ident})
            c.wait(0).close()
        after = hev2ext.stats()
        self.assertGreater(after["delivered_by_call"], before["delivered_by_call"])
        self.assert_nothing_left()

    def test_many_in_flight_each_completes_once(self) -> None:
        n = 200
        with refused_beside_listening("::1", "127.0.0.1") as (hosts, port, lst), BusyThread():
            conns, counted = [], []
            for i in range(n):
                # Half race through ::1's refusal, half go to 127.0.0.1 at once.
                if i % 2:
                    c = hev2ext.connect(RACE_NAME, port, static_hosts=hosts)
                else:
                    c = hev2ext.connect("127.0.0.1", port)
                cb = Counted()
                c.add_done_callback(cb)
                conns.append(c)
                counted.append(cb)
            socks = [c.wait(DEADLINE) for c in conns]
        self.assertEqual(sum(cb.calls for cb in counted), n)
        self.assertEqual({cb.calls for cb in counted}, {1})
        self.assertEqual(len({s.fileno() for s in socks}), n)
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_cancels_in_the_middle(self) -> None:
        n = 100
        with blackhole() as hole, listener() as lst, BusyThread():
            pending = [hev2ext.connect("127.0.0.1", hole) for _ in range(n)]
            good = [hev2ext.connect("127.0.0.1", lst.getsockname()[1]) for _ in range(n)]
            counted = [Counted() for _ in range(2 * n)]
            for c, cb in zip(pending + good, counted):
                c.add_done_callback(cb)
            for c in pending[::2]:
                c.cancel()
            socks = [c.wait(DEADLINE) for c in good]
            for c in pending[1::2]:
                c.cancel()
            for c in pending:
                with self.assertRaises(hev2ext.CancelledError):
                    c.wait(DEADLINE)
        self.assertEqual({cb.calls for cb in counted}, {1})
        self.assertEqual({c.status for c in pending}, {-15})
        for s in socks:
            s.close()
        self.assert_nothing_left()

    def test_worker_thread_waits_while_the_main_thread_is_blocked(self) -> None:
        # The main thread sits in a C call (os.read) and runs no pending
        # call: the worker's wait() takes its own connect out of the queue.
        before = hev2ext.stats()
        got: list[socket.socket] = []
        r, w = os.pipe()
        with listener() as lst, os.fdopen(r, "rb", buffering=0) as reader, os.fdopen(w, "wb", buffering=0) as writer:

            def worker() -> None:
                try:
                    wait_until_blocked_in_read(threading.main_thread(), r)
                    got.append(hev2ext.connect("127.0.0.1", lst.getsockname()[1]).wait(DEADLINE))
                finally:
                    writer.write(b"x")

            t = threading.Thread(target=worker)
            t.start()
            self.assertEqual(reader.read(1), b"x")
            t.join(DEADLINE)
            self.assertEqual(len(got), 1)
            got[0].close()
        self.assertGreater(hev2ext.stats()["claimed_by_waiter"], before["claimed_by_waiter"])
        self.assert_nothing_left()

    def test_full_pending_call_queue_loses_nothing(self) -> None:
        before = hev2ext.stats()
        with listener() as lst:
            # The interpreter's queue is full when the job asks (refused);
            # the nudger asks again until the call is taken.
            filled, c = hev2ext._testing_fill_pending_calls("127.0.0.1", lst.getsockname()[1])
            self.assertGreater(filled, 0)
            self.assertGreater(hev2ext.stats()["calls_refused"], before["calls_refused"])
            deadline = time.monotonic() + DEADLINE
            while not c.done() and time.monotonic() < deadline:
                pass  # Python running on the main thread: the pending call's only way in
            self.assertTrue(c.done())
            c.wait(0).close()
        after = hev2ext.stats()
        self.assertGreater(after["calls_retried"], before["calls_retried"])
        self.assert_nothing_left()


if __name__ == "__main__":
    unittest.main()
