"""Loopback servers and counters for hev2ext's tests.

Every port comes from the kernel (bind to port 0); nothing resolves a name
(the race's two addresses come from the library's static host list).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import unittest
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager

import hev2ext

# A name the library maps to its two loopback addresses itself (static_hosts):
# no resolver is asked.
RACE_NAME = "race.test"

# Generous bounds: the tests run beside other builds on a small machine.
DEADLINE = 30.0


def listener(host: str = "127.0.0.1", port: int = 0, backlog: int = 512) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind((host, port))
    s.listen(backlog)
    return s


def bound_not_listening(host: str, port: int) -> socket.socket:
    """A socket that holds host:port without listening: a connect to it is
    refused (RST), and no other program can start listening there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((host, port))
    except BaseException:
        s.close()
        raise
    return s


@contextmanager
def refused_beside_listening(refused: str, listening: str) -> Iterator[tuple[str, int, socket.socket]]:
    """One port number, refused at one address and listening at the other:
    yields (static_hosts text for RACE_NAME, the port, the listener)."""
    with _beside_listening(refused, listening, bound_not_listening) as found:
        yield found


@contextmanager
def blackhole_beside_listening(dropped: str, listening: str) -> Iterator[tuple[str, int, socket.socket]]:
    """The same with SYNs dropped at the first address (see blackhole)."""
    with _beside_listening(dropped, listening, _blackhole_at) as found:
        yield found


@contextmanager
def _beside_listening(
    first: str, listening: str, occupy: Callable[[str, int], AbstractContextManager[object]]
) -> Iterator[tuple[str, int, socket.socket]]:
    # The kernel picks the listener's port; when the first address has that
    # port taken already, another one is tried.
    for _ in range(50):
        lst = listener(listening)
        port = lst.getsockname()[1]
        try:
            held = occupy(first, port)
        except OSError:
            lst.close()
            continue
        with lst, held:
            yield f"{RACE_NAME}:[{first}],[{listening}]", port, lst
        return
    raise RuntimeError(f"no port free at both {first} and {listening}")


@contextmanager
def blackhole(host: str = "127.0.0.1") -> Iterator[int]:
    """A listener whose SYNs are dropped: backlog 0 and one connected,
    never accepted filler fill its accept queue, so further connects stay
    pending (the kernel retries its SYN for minutes). Yields the port."""
    with _blackhole_at(host, 0) as port:
        yield port


@contextmanager
def _blackhole_at(host: str, port: int) -> Iterator[int]:
    with ExitStack() as stack:
        lst = stack.enter_context(listener(host, port, backlog=0))
        port = lst.getsockname()[1]
        stack.enter_context(socket.create_connection((host, port), timeout=DEADLINE))
        yield port


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


class BusyThread:
    """A Python thread in a CPU loop: it holds the GIL except when the
    interpreter's switch interval makes it hand the GIL over."""

    def __init__(self) -> None:
        self._stop = False
        self.spins = 0
        self._thread = threading.Thread(target=self._spin, name="busy", daemon=True)

    def _spin(self) -> None:
        while not self._stop:
            self.spins += 1

    def __enter__(self) -> BusyThread:
        self._thread.start()
        # It is running (it has had the GIL) before the test goes on.
        deadline = time.monotonic() + DEADLINE
        while self.spins == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert self.spins, "the busy thread never ran"
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join(DEADLINE)


def exchange(client: socket.socket, server_listener: socket.socket) -> None:
    """One byte each way between client and the connection the listener
    accepts: the socket is really connected, and usable as it is."""
    server_listener.settimeout(DEADLINE)
    peer, _ = server_listener.accept()
    with peer:
        peer.settimeout(DEADLINE)
        client.sendall(b"q")
        assert peer.recv(1) == b"q"
        peer.sendall(b"a")
        client_timeout = client.gettimeout()
        client.settimeout(DEADLINE)
        assert client.recv(1) == b"a"
        client.settimeout(client_timeout)


# Go's runtime may start a thread or two more under load and keeps them;
# what must not happen is a thread (or an fd) per connect.
THREAD_SLACK = 4


def warm_up() -> None:
    """The library makes its permanent fds and threads on first use."""
    with listener() as lst:
        hev2ext.connect("127.0.0.1", lst.getsockname()[1]).wait(DEADLINE).close()


class LeakCheckedTest(unittest.TestCase):
    """A test case whose tests may check that they left no fd and no
    thread behind (assert_nothing_left), counted after the library's own."""

    @classmethod
    def setUpClass(cls) -> None:
        warm_up()

    def setUp(self) -> None:
        self.fds = open_fds()
        self.threads = os_threads()

    def assert_nothing_left(self) -> None:
        # Counted once it settles (bounded by DEADLINE): a failed attempt's
        # socket may be closed by a library thread just after the outcome
        # was delivered; a leaked fd stays and fails.
        deadline = time.monotonic() + DEADLINE
        while open_fds() != self.fds and time.monotonic() < deadline:
            time.sleep(0)
        self.assertEqual(open_fds(), self.fds, "fds before and after")
        self.assertLessEqual(os_threads(), self.threads + THREAD_SLACK, "threads before and after")
