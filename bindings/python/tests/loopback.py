"""Real loopback endpoints for the tests: a listener, a refusing port and a
"blackholed" port whose SYNs are silently dropped.

The blackhole needs no root and no namespace: a listener with backlog 0 and
one connected, never accepted filler socket has a full accept queue, so the
kernel drops every further SYN and the client's connect hangs as it would
behind a firewall that drops packets.
"""

from __future__ import annotations

import errno
import os
import socket
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Callable, Iterator


def family_of(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


@contextmanager
def listener(host: str, backlog: int = 64, port: int = 0) -> Iterator[int]:
    """A listening port on host (port 0: any); connections complete in the
    kernel's queue."""
    with socket.socket(family_of(host), socket.SOCK_STREAM) as s:
        s.bind((host, port))
        s.listen(backlog)
        yield s.getsockname()[1]


@contextmanager
def refusing(host: str, port: int = 0) -> Iterator[int]:
    """A port bound on host with no listener: connect gets RST (ECONNREFUSED).
    Keeping it bound stops anything else from listening there meanwhile."""
    with socket.socket(family_of(host), socket.SOCK_STREAM) as s:
        s.bind((host, port))
        yield s.getsockname()[1]


@contextmanager
def blackhole(host: str, port: int = 0) -> Iterator[int]:
    """A port on host whose SYNs are dropped (connect hangs); port 0: any."""
    with socket.socket(family_of(host), socket.SOCK_STREAM) as s:
        s.bind((host, port))
        s.listen(0)
        port = s.getsockname()[1]
        filler = socket.create_connection((host, port))
        try:
            yield port
        finally:
            filler.close()


End = Callable[[int], AbstractContextManager[int]]


@contextmanager
def one_port(first: End, *others: End, tries: int = 100) -> Iterator[int]:
    """Endpoints on one port number, typically one per address family
    (``one_port(lambda p: blackhole("::1", p), lambda p: listener("127.0.0.1",
    port=p))``): the first end is made on any free port, each other end on
    that same number. A port free on one family may be held on another (by
    another test's socket, or a TIME_WAIT of this machine's loopback
    traffic): a bind refused with EADDRINUSE drops every end and starts
    again with a new port, so the pair never depends on luck."""
    for _ in range(tries):
        with ExitStack() as ends:
            port = ends.enter_context(first(0))
            try:
                for end in others:
                    ends.enter_context(end(port))
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
                continue
            yield port
            return
    raise RuntimeError(f"no port free on every family in {tries} tries")


def fd_count() -> int:
    """Open fds, except the cgroup CPU files the Go runtime inside libhev2
    opens once, at a moment of its own after start-up, and keeps (its
    GOMAXPROCS updater): they belong to no connection. See warmup.py for the
    library's other process-wide fds."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the directory's own fd, closed by now
        if not target.startswith("/sys/fs/cgroup/"):
            count += 1
    return count


def thread_count() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError("no Threads: line in /proc/self/status")
