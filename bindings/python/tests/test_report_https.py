"""The report's HTTPS part (hev2.Report.https, each attempt's service and
origin) of races with https_rr against hev2-testdns on loopback (the
built-in resolver: nothing is asked of the machine's own resolver)."""

from __future__ import annotations

import socket

import pytest

import hev2
from loopback import listener, refusing
from testdns import DNSServer


@pytest.fixture
def bed():
    """A listener and a refusing port on 127.0.0.1; svc.test's HTTPS
    records redirect to the listener, one through an alias, with an h3-only
    record set aside and a hint its target's answer replaces."""
    with listener("127.0.0.1") as lport, refusing("127.0.0.1") as rport:
        rr = f"_{rport}._https"
        zone = {
            "svc.test": {"A": ["127.0.0.1"]},
            f"{rr}.svc.test": {
                "HTTPS": {
                    "records": [
                        {"priority": 1, "target": ".", "port": lport, "alpn": ["h2"]},
                        {"priority": 2, "target": ".", "alpn": ["h3"], "no-default-alpn": True},
                    ]
                }
            },
            f"{rr}.alias.test": {"HTTPS": {"records": [{"priority": 0, "target": "cdn.test"}]}},
            "alias.test": {"A": ["127.0.0.1"]},
            "cdn.test": {
                "HTTPS": {"records": [{"priority": 1, "target": "target.test", "port": lport, "ipv4hint": ["127.0.0.9"]}]}
            },
            "target.test": {"A": ["127.0.0.1"]},
            "plain.test": {"A": ["127.0.0.1"]},
            f"{rr}.plain.test": {"HTTPS": []},
        }
        with DNSServer(zone) as dns:
            yield dns, lport, rport


def kw(dns: DNSServer, **more):
    return {"resolver": "builtin", "nameservers": [dns.address], "family": socket.AF_INET, **more}


def test_services_and_skipped_records(bed):
    dns, lport, rport = bed
    with hev2.create_connection(("svc.test", rport), https_rr=True, report=True, **kw(dns)) as sock:
        rep = hev2.report_of(sock)
    assert rep is not None and rep.connected
    h = rep.https
    assert isinstance(h, hev2.HTTPSReport)
    assert h.state == "answered"
    (lk,) = h.lookups
    assert (lk.query, lk.name, lk.state, lk.records) == ("HTTPS", f"_{rport}._https.svc.test.", "answered", 2)
    assert 0 <= lk.start <= lk.end <= rep.elapsed
    (svc,) = h.services
    assert (svc.number, svc.priority, svc.target, svc.port) == (1, 1, "svc.test.", lport)
    assert svc.alpn == ("h2", "http/1.1") and svc.ech is False
    (sk,) = h.skipped
    assert (sk.priority, sk.target, sk.reason) == (2, ".", "no protocol in common (h3)")
    assert h.replaced == ()
    won = rep.attempts[rep.winner]
    assert (won.port, won.service, won.origin) == (lport, 1, "service")


def test_alias_target_lookups_and_a_replaced_hint(bed):
    dns, lport, rport = bed
    with hev2.create_connection(("alias.test", rport), https_rr=True, report=True, **kw(dns)) as sock:
        rep = hev2.report_of(sock)
    assert rep is not None and rep.connected
    h = rep.https
    assert h is not None and h.state == "answered"
    got = [(lk.query, lk.name, lk.state) for lk in h.lookups]
    assert got[:2] == [("HTTPS", f"_{rport}._https.alias.test.", "answered"), ("HTTPS", "cdn.test.", "answered")]
    assert got[2] == ("A", "target.test.", "answered")
    assert h.lookups[0].records == 0 and h.lookups[1].records == 1 and h.lookups[2].addresses == 1
    (svc,) = h.services
    assert (svc.target, svc.port, svc.hints) == ("target.test.", lport, 1)
    # The hint raced first, or its target's answer replaced it untried.
    first = rep.attempts[0]
    if first.origin == "hint":
        assert first.address == "127.0.0.9" and first.service == 1
    else:
        assert [(r.service, r.address, r.port) for r in h.replaced] == [(1, "127.0.0.9", lport)]
    won = rep.attempts[rep.winner]
    assert (won.address, won.service, won.origin) == ("127.0.0.1", 1, "service")


def test_nodata_and_the_origins_own_addresses(bed):
    dns, lport, rport = bed
    with pytest.raises(ConnectionRefusedError) as ei:
        hev2.create_connection(("plain.test", rport), https_rr=True, report=True, **kw(dns))
    rep = ei.value.hev2_report
    h = rep.https
    assert h is not None and h.state == "nodata" and h.services == ()
    (lk,) = h.lookups
    assert lk.state == "failed" and lk.eai != 0
    assert [(a.service, a.origin) for a in rep.attempts] == [(0, "dns")]


def test_no_https_part_without_https_rr(bed):
    dns, lport, _ = bed
    with hev2.create_connection(("svc.test", lport), report=True, **kw(dns)) as sock:
        rep = hev2.report_of(sock)
    assert rep is not None and rep.https is None
    assert [(a.service, a.origin) for a in rep.attempts] == [(0, "dns")]
    with hev2.create_connection(("127.0.0.1", lport), report=True) as sock:
        rep = hev2.report_of(sock)
    assert rep is not None and rep.https is None and rep.attempts[0].origin == "static"
