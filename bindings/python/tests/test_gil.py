"""The wait releases the GIL: other Python threads keep running while a
connection is pending (a PyDLL-style load would freeze them for the whole
wait). Gross bounds only: they prove the mechanism, not a speed."""

from __future__ import annotations

import threading
import time

import pytest

import hev2
from loopback import blackhole

PENDING = 0.5  # seconds the connection stays pending (connect_timeout)


def count_for(seconds: float) -> int:
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
    return n


def test_other_thread_runs_while_a_connection_is_pending_in_a_thread():
    baseline = count_for(0.1) / 0.1  # loop turns per second, nobody else running
    with blackhole("127.0.0.1") as port:
        done = threading.Event()

        def connect():
            try:
                with pytest.raises(TimeoutError):
                    hev2.create_connection(("127.0.0.1", port), connect_timeout=PENDING)
            finally:
                done.set()

        t = threading.Thread(target=connect)
        start = time.monotonic()
        t.start()
        turns = 0
        while not done.is_set():
            turns += 1
        elapsed = time.monotonic() - start
        t.join()
    assert elapsed >= PENDING * 0.9
    # Holding the GIL through the wait would leave ~0 turns.
    assert turns / elapsed > 0.05 * baseline, (turns, elapsed, baseline)


def test_other_thread_runs_while_the_main_thread_waits():
    with blackhole("::1") as port:
        turns = [0]
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                turns[0] += 1

        t = threading.Thread(target=spin)
        t.start()
        start = time.monotonic()
        try:
            with pytest.raises(TimeoutError):
                hev2.create_connection(("::1", port), open_timeout=PENDING)
        finally:
            elapsed = time.monotonic() - start
            stop.set()
            t.join()
    baseline = count_for(0.1) / 0.1
    assert turns[0] / elapsed > 0.05 * baseline, (turns[0], elapsed, baseline)
