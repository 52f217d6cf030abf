"""A loopback stand-in for a dual-stack server whose IPv6 is broken, shared
by the examples: "demo.test" maps (through hev2's static address list, no
resolver involved) to ::1, where SYNs are silently dropped, and to
127.0.0.1, where a server answers "hello" to each connection."""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Iterator

NAME = "demo.test"


@contextmanager
def broken_ipv6_server() -> Iterator[tuple[int, dict[str, list[str]]]]:
    """Yields (port, hosts) for hev2's hosts= option."""
    # ::1: listen(backlog 0) and one connection never accepted: the queue
    # is full, further SYNs are dropped, a connect there hangs.
    hole = socket.socket(socket.AF_INET6)
    hole.bind(("::1", 0))
    hole.listen(0)
    port = hole.getsockname()[1]
    filler = socket.create_connection(("::1", port))
    # 127.0.0.1, same port: answers.
    server = socket.socket()
    server.bind(("127.0.0.1", port))
    server.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield port, {NAME: ["::1", "127.0.0.1"]}
    finally:
        for s in (filler, hole, server):
            s.close()
