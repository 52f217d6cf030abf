"""The establishment report (create_connection(report=True)) on real
loopback races: ::1 refusing or silent against a listening 127.0.0.1 is a
real race of two families; a refused literal; a timed-out connect."""

from __future__ import annotations

import errno
import socket

import pytest

import hev2
from loopback import blackhole, listener, one_port, refusing


def test_ipv6_refused_ipv4_wins() -> None:
    with listener("127.0.0.1") as port:
        with hev2.create_connection(("dual.test", port), hosts={"dual.test": ["::1", "127.0.0.1"]}, report=True) as s:
            rep = hev2.report_of(s)
            assert s.getpeername()[:2] == ("127.0.0.1", port)
    assert isinstance(rep, hev2.Report)
    assert (rep.connected, rep.winner, rep.family, rep.reason) == (True, 1, "ipv4", "other-family-failed")
    assert rep.timeout == "" and rep.resolving is None and rep.resolution_delay is None
    assert not rep.resolution_delay_expired
    assert rep.connecting is not None and rep.connecting.start == 0 and rep.connecting.end == rep.elapsed
    assert [(lk.family, lk.state) for lk in rep.lookups] == [("ipv6", "not-asked"), ("ipv4", "not-asked")]
    v6, v4 = rep.attempts
    assert (v6.address, v6.family, v6.port, v6.outcome, v6.errno) == ("::1", "ipv6", port, "failed", errno.ECONNREFUSED)
    assert (v4.address, v4.family, v4.outcome, v4.errno) == ("127.0.0.1", "ipv4", "connected", 0)
    assert v6.synthesized_from == v4.synthesized_from == ""  # no NAT64 on loopback
    # IPv4 starts the moment IPv6 is refused; its connect ends the race.
    assert v4.start == v6.end and v4.end == rep.elapsed and v6.duration >= 0


def test_ipv6_silent_first_to_connect() -> None:
    with one_port(lambda p: listener("127.0.0.1", port=p), lambda p: blackhole("::1", p)) as port:
        with hev2.create_connection(
            ("dual.test", port), hosts={"dual.test": ["::1", "127.0.0.1"]}, connection_attempt_delay=0.02, report=True
        ) as s:
            rep = hev2.report_of(s)
    assert rep is not None
    assert (rep.family, rep.reason) == ("ipv4", "first-to-connect")
    assert [a.outcome for a in rep.attempts] == ["lost", "connected"]
    assert rep.attempts[1].start >= 0.02 and rep.attempts[0].end == rep.elapsed


def test_failure_carries_the_report() -> None:
    with refusing("127.0.0.1") as port:
        with pytest.raises(ConnectionRefusedError) as info:
            hev2.create_connection(("127.0.0.1", port), report=True)
    rep = info.value.hev2_report  # type: ignore[attr-defined]
    assert (rep.connected, rep.winner, rep.family, rep.reason) == (False, -1, "", "none")
    assert [(a.outcome, a.errno) for a in rep.attempts] == [("failed", errno.ECONNREFUSED)]


def test_timed_out_attempt() -> None:
    with blackhole("127.0.0.1") as port:
        with pytest.raises(TimeoutError) as info:
            hev2.create_connection(("127.0.0.1", port), connect_timeout=0.03, report=True)
    rep = info.value.hev2_report  # type: ignore[attr-defined]
    assert rep.timeout == "connect_timeout"
    assert [(a.outcome, a.errno) for a in rep.attempts] == [("timed-out", errno.ETIMEDOUT)]


def test_no_report_unless_asked() -> None:
    with listener("127.0.0.1") as port:
        with hev2.create_connection(("127.0.0.1", port)) as s:
            assert hev2.report_of(s) is None
        with socket.create_connection(("127.0.0.1", port)) as s:
            assert hev2.report_of(s) is None
