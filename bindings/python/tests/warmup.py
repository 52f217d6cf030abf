"""Bringing the library to its steady state before fds are counted.

libhev2 creates a few process-wide fds lazily: the Go runtime's netpoller
(an epoll and an eventfd), hev2's own poller epoll (created by the first
attempt that has to wait: a refused loopback connect often fails at once
and creates nothing), and the Go runtime's cgroup CPU files (opened by its
GOMAXPROCS updater; loopback.fd_count ignores those). Counting fds before
and after a test is only meaningful once they exist.
"""

from __future__ import annotations

import hev2
from loopback import blackhole


def warm_up() -> None:
    hev2.init()
    with blackhole("127.0.0.1") as port:
        try:
            # A blackholed attempt always waits in the poller, then times out.
            hev2.create_connection(("127.0.0.1", port), connect_timeout=0.02)
        except TimeoutError:
            pass
        else:
            raise AssertionError("a blackholed connect succeeded")
