"""hev2.create_connection plays its race on the calling thread
(hev2_options.drive = HEV2_DRIVE_WAITER, C ABI 1.2): hev2_wait in slices,
with Python's signal handlers and asynchronous exceptions run between
them. Whatever ends the wait early (another thread's exception, a timeout)
cancels the race and releases the handle: no fd and no handle left."""

from __future__ import annotations

import ctypes
import socket
import threading
import time

import pytest

import hev2
from hev2 import _abi, _connect, _handle, _options
from loopback import blackhole, fd_count, listener, one_port, refusing


@pytest.fixture
def drives(monkeypatch):
    """The drive field of every options struct hev2_connect is given."""
    seen = []
    real = _handle.options_for

    def recording(req, waiter=False, *args, **kw):
        o = real(req, waiter, *args, **kw)
        seen.append(None if o is None else (o.size, o.drive))
        return o

    monkeypatch.setattr(_handle, "options_for", recording)
    monkeypatch.setattr(_options, "_common", {})  # no request keeps C arguments from before
    return seen


FULL = ctypes.sizeof(_abi.Options)


def test_create_connection_is_driven_by_its_waiter(drives):
    with listener("127.0.0.1") as port, refusing("::1") as closed:
        with hev2.create_connection(("127.0.0.1", port)) as s:  # default options
            assert s.getpeername()[:2] == ("127.0.0.1", port)
        with hev2.create_connection(("127.0.0.1", port), timeout=3, nodelay=True) as s:  # a struct of its own
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        with pytest.raises(ConnectionRefusedError):
            hev2.create_connection(("::1", closed))
    # The full 1.2 struct every time (a 1.0-sized one would hide `drive`).
    assert drives == [(FULL, _abi.DRIVE_WAITER)] * 3


def wait_until(predicate, what: str, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.002)


def running() -> int:
    return int(hev2.stats()["handles_running"])


class Stop(Exception):
    pass


def test_an_exception_from_another_thread_cancels_the_wait_and_leaves_no_fd():
    with blackhole("127.0.0.1") as port:
        before = fd_count()
        caught = []

        def worker() -> None:
            try:
                hev2.create_connection(("127.0.0.1", port), None)  # no timeout at all
                caught.append("connected?")
            except Stop:
                caught.append("stopped")

        base = running()
        t = threading.Thread(target=worker)
        t.start()
        try:
            # The attempt is pending in the worker's hev2_wait.
            wait_until(lambda: running() > base, f"the connection runs ({hev2.stats()})")
        finally:
            # Even if the wait failed: the worker must not block forever.
            n = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(Stop))
        assert n == 1
        t.join(30)
        assert not t.is_alive() and caught == ["stopped"]
        # Released on the worker's own thread, in its finally: nothing is
        # left to close later.
        assert running() == base and hev2.stats()["handles_live"] == 0, hev2.stats()
        assert fd_count() == before


@pytest.mark.parametrize(
    "kw, kind",
    [
        ({"timeout": 0.05}, "connect_timeout"),
        ({"open_timeout": 0.12}, "open_timeout"),
        ({"connect_timeout": 0.03, "fast_fallback": False}, "connect_timeout"),
    ],
)
def test_a_timeout_decided_inside_the_waits_leaves_no_fd(kw, kind):
    with blackhole("127.0.0.1") as port:
        before = fd_count()
        for _ in range(3):
            with pytest.raises(TimeoutError) as info:
                hev2.create_connection(("127.0.0.1", port), **kw)
            assert info.value.timeout_kind == kind  # type: ignore[attr-defined]
        assert fd_count() == before
        assert hev2.stats()["handles_live"] == 0


def test_waiting_in_tiny_slices_loses_no_progress(monkeypatch):
    # ::1 drops SYNs; 127.0.0.1 accepts: the race starts IPv4 after the
    # attempt delay and IPv4 wins, whether waited in one go or in 1 ms
    # slices, each resuming where the last one stopped.
    monkeypatch.setattr(_connect, "WAIT_SLICE_MS", 1)
    # (the 3 connections wait in the listener's queue: they are no fd of ours)
    with one_port(lambda p: blackhole("::1", p), lambda p: listener("127.0.0.1", 16, p)) as port:
        before = fd_count()
        for _ in range(3):
            with hev2.create_connection(
                ("slices.test", port),
                hosts={"slices.test": ["::1", "127.0.0.1"]},
                connection_attempt_delay=0.06,
            ) as s:
                assert s.getpeername()[0] == "127.0.0.1"
        assert fd_count() == before
    assert hev2.stats()["handles_live"] == 0


def test_a_connection_never_waited_for_is_released_cleanly():
    # A waiter-driven handle that nobody drives (the exception came right
    # after hev2_connect): the release settles it and closes its sockets.
    from hev2._options import build_request

    with blackhole("127.0.0.1") as port:
        before = fd_count()
        req = build_request(
            ("127.0.0.1", port), None, None, resolv_timeout=None, connect_timeout=None,
            open_timeout=None, fast_fallback=True, more={},
        )
        for _ in range(5):
            h = _handle.Handle(req, waiter=True)
            assert running() == 1
            h.close()
            assert running() == 0
        assert fd_count() == before
    assert hev2.stats()["handles_live"] == 0
