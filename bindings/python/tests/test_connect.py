"""hev2.create_connection on loopback: what it returns and how it races."""

from __future__ import annotations

import fcntl
import os
import socket
import time

import pytest

import hev2
from loopback import blackhole, fd_count, listener, one_port, refusing


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_connects_to_a_literal_and_returns_a_real_socket(host):
    with listener(host) as port:
        with hev2.create_connection((host, port)) as s:
            assert isinstance(s, socket.socket)
            assert s.getpeername()[:2] == (host, port)
            assert (s.type, s.proto) == (socket.SOCK_STREAM, socket.IPPROTO_TCP)
            s.sendall(b"ping")  # a usable, connected stream


def test_same_mode_and_timeout_as_socket_create_connection():
    old = socket.getdefaulttimeout()
    try:
        with listener("127.0.0.1") as port:
            for default in (None, 4.0):
                socket.setdefaulttimeout(default)
                for timeout in (socket._GLOBAL_DEFAULT_TIMEOUT, None, 0, 2.5):
                    if timeout == 0:
                        # socket's connect() itself fails with EINPROGRESS
                        # then; hev2 connects and hands back the same mode.
                        want = (0.0, False)
                    else:
                        with socket.create_connection(("127.0.0.1", port), timeout) as plain:
                            want = (plain.gettimeout(), plain.getblocking())
                    # Each way to a socket: the common call (the fd comes
                    # blocking from the library when it is to block), a
                    # struct of its own, and the recorded race (a handle
                    # made by hev2_connect).
                    for more in ({}, {"nodelay": True}, {"report": True}):
                        with hev2.create_connection(("127.0.0.1", port), timeout, **more) as s:
                            assert (s.gettimeout(), s.getblocking()) == want, (default, timeout, more)
                            # and the fd really is in that mode (not just the object)
                            nonblocking = bool(fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK)
                            assert nonblocking == (s.gettimeout() is not None), (default, timeout, more)
    finally:
        socket.setdefaulttimeout(old)


def test_static_name_races_both_families_and_ipv6_wins():
    # ::1 and 127.0.0.1 listening on the same port
    with one_port(lambda p: listener("::1", port=p), lambda p: listener("127.0.0.1", port=p)) as port:
        with hev2.create_connection(("both.test", port), hosts={"both.test": ["127.0.0.1", "::1"]}) as s:
            assert s.family == socket.AF_INET6  # RFC 6724: ::1 before 127.0.0.1


def test_blackholed_ipv6_falls_back_to_ipv4_after_the_attempt_delay():
    with one_port(lambda p: blackhole("::1", p), lambda p: listener("127.0.0.1", port=p)) as port:
        with hev2.create_connection(
            ("hole.test", port),
            hosts={"hole.test": ["::1", "127.0.0.1"]},
            connection_attempt_delay=0.1,
            report=True,
        ) as s:
            assert s.getpeername()[0] == "127.0.0.1"
            rep = hev2.report_of(s)
        # The mechanism, by the library's own clock: IPv4 started after the
        # 0.1 s delay, while the IPv6 attempt still ran (no connect timeout
        # waited for; socket.create_connection would hang here).
        assert rep is not None
        v6, v4 = rep.attempts
        assert v4.start >= 0.09 and v4.start < v6.end


def test_family_restriction():
    with one_port(lambda p: listener("127.0.0.1", port=p), lambda p: listener("::1", port=p)) as port:
        hosts = {"two.test": ["::1", "127.0.0.1"]}
        with hev2.create_connection(("two.test", port), hosts=hosts, family=socket.AF_INET) as s:
            assert s.family == socket.AF_INET
        with hev2.create_connection(("two.test", port), hosts=hosts, family=socket.AF_INET6) as s:
            assert s.family == socket.AF_INET6


def test_source_address_is_bound():
    with listener("127.0.0.1") as port:
        with socket.socket() as spare:
            spare.bind(("127.0.0.1", 0))
            local_port = spare.getsockname()[1]
        with hev2.create_connection(("127.0.0.1", port), source_address=("127.0.0.1", local_port)) as s:
            assert s.getsockname() == ("127.0.0.1", local_port)


def test_nodelay_and_keepalive_are_set():
    with listener("127.0.0.1") as port:
        with hev2.create_connection(("127.0.0.1", port)) as s:
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        with hev2.create_connection(("127.0.0.1", port), nodelay=True, keepalive=30) as s:
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30


def test_no_fd_or_handle_is_left_behind():
    with listener("127.0.0.1") as port, refusing("::1") as closed:
        before = fd_count()
        for _ in range(50):
            hev2.create_connection(("127.0.0.1", port)).close()
            with pytest.raises(ConnectionRefusedError):
                hev2.create_connection(("::1", closed))
        assert fd_count() == before
        assert hev2.stats()["handles_live"] == 0


def test_library_facts():
    assert hev2.library_version().startswith("1.")
    assert hev2.library_path().endswith("libhev2.so")


def hold_waiters(n: int) -> None:
    """n threads waiting in create_connection at the same time. Each thread
    inside hev2_wait holds one of the library's wake eventfds, kept for the
    life of the process (as many as threads ever waited at once): after
    this, n waiters need no new one and fds can be counted."""
    import threading

    barrier = threading.Barrier(n)

    def waiter():
        barrier.wait()
        with pytest.raises(TimeoutError):
            hev2.create_connection(("127.0.0.1", port), connect_timeout=0.3)

    with blackhole("127.0.0.1") as port:
        threads = [threading.Thread(target=waiter) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def test_many_threads_connect_at_once():
    import threading

    errors = []
    hold_waiters(16)
    with listener("127.0.0.1", backlog=512) as port:
        before = fd_count()

        def worker():
            try:
                for _ in range(20):
                    hev2.create_connection(("127.0.0.1", port)).close()
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert fd_count() == before
    assert hev2.stats()["handles_live"] == 0


def test_capacity_cap_is_a_clear_error():
    with blackhole("127.0.0.1") as port:
        import threading

        started = threading.Event()

        def pending():
            started.set()
            with pytest.raises(TimeoutError):
                hev2.create_connection(("127.0.0.1", port), open_timeout=0.5)

        # No handle of an earlier test may still be running: it would take
        # the one slot.
        deadline = time.monotonic() + 10
        while hev2.stats()["handles_running"] and time.monotonic() < deadline:
            time.sleep(0.005)
        assert hev2.stats()["handles_running"] == 0
        hev2.set_max_handles(1)
        try:
            t = threading.Thread(target=pending)
            t.start()
            started.wait()
            deadline = time.monotonic() + 10
            while hev2.stats()["handles_running"] < 1 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert hev2.stats()["handles_running"] == 1
            with pytest.raises(hev2.CapacityError) as info:
                hev2.create_connection(("127.0.0.1", port), open_timeout=0.5)
            assert isinstance(info.value, OSError) and "capacity" in str(info.value).lower()
            t.join()
        finally:
            hev2.set_max_handles(4096)
    with pytest.raises(ValueError, match="maximum"):
        hev2.set_max_handles(0)
