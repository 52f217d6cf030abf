"""Real loopback endpoints for the tests: a listener, a refusing port and a
"blackholed" port whose SYNs are silently dropped.

The blackhole needs no root and no namespace: a listener with backlog 0 and
one connected, never accepted filler socket has a full accept queue, so the
kernel drops every further SYN and the client's connect hangs as it would
behind a firewall that drops packets.
"""

from __future__ import annotations

import os
import socket
from contextlib import contextmanager
from typing import Iterator


def family_of(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


@contextmanager
def listener(host: str, backlog: int = 64) -> Iterator[int]:
    """A listening port on host; connections complete in the kernel's queue."""
    with socket.socket(family_of(host), socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        s.listen(backlog)
        yield s.getsockname()[1]


@contextmanager
def refusing(host: str) -> Iterator[int]:
    """A port bound on host with no listener: connect gets RST (ECONNREFUSED).
    Keeping it bound stops anything else from listening there meanwhile."""
    with socket.socket(family_of(host), socket.SOCK_STREAM) as s:
        s.bind((host, 0))
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
