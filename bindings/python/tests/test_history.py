"""The network's history through the package: ::1 drops SYNs and 127.0.0.1
accepts on the same port, under one name. After the first connect pays the
attempt delay, the next go to IPv4 first (the library's counters say so);
history=False, set_history(False) and clear_history() undo it."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import hev2
from loopback import blackhole, listener, one_port

HOSTS = {"hole.test": ["::1", "127.0.0.1"]}


@pytest.fixture
def port() -> Iterator[int]:
    hev2.clear_history()
    hev2.set_history(True)
    with one_port(lambda p: blackhole("::1", p), lambda p: listener("127.0.0.1", 16, p)) as p:
        yield p
    hev2.set_history(False)  # as conftest.py leaves it for the other tests
    hev2.clear_history()


def reordered() -> int:
    return hev2.stats()["history_reordered"]


def connect(port: int, **kw: object) -> str:
    with hev2.create_connection(("hole.test", port), hosts=HOSTS, connection_attempt_delay=0.05, **kw) as s:
        address: str = s.getpeername()[0]
        return address


def test_second_connect_goes_ipv4_first(port: int) -> None:
    assert hev2.history_enabled()
    before = reordered()
    assert connect(port) == "127.0.0.1"  # IPv6 lost the race
    assert reordered() == before
    assert connect(port) == "127.0.0.1"
    assert reordered() == before + 1  # IPv4 first, history said so
    assert hev2.stats()["history_entries"] >= 1


def test_off_per_call_for_the_process_and_cleared(port: int) -> None:
    connect(port)
    before = reordered()
    connect(port, history=False)
    assert reordered() == before
    hev2.set_history(False)
    try:
        assert not hev2.history_enabled()
        connect(port)
        assert reordered() == before
    finally:
        hev2.set_history(True)
    connect(port)
    assert reordered() == before + 1
    hev2.clear_history()
    connect(port)
    assert reordered() == before + 1


def test_bad_values() -> None:
    with pytest.raises(TypeError):
        hev2.set_history(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        hev2.create_connection(("127.0.0.1", 1), history="no")
    with pytest.raises(ValueError):
        hev2.create_connection(("127.0.0.1", 1), history_lifetime=-1)
