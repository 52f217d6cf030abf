"""HTTPS records (Happy Eyeballs v3): create_connection(https_rr=True,
alpn=[...], ech=True, ech_wait=...), hev2.service_of, hev2.aio, and the
scenario client's --https-rr/--alpn/--ech and "svcb".

Every name is answered by hev2-testdns on loopback through the built-in
resolver (nameservers=): nothing is asked of the machine's own resolver.
A connect to a port other than 443 asks "_PORT._https.HOST"; a record
whose target is "." is the origin HOST's own addresses, on the record's
port: the connection is redirected from a refusing port to a listener.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import subprocess

import pytest

import hev2
from conftest import HERE, child_env
from loopback import listener, refusing
from testdns import DNSServer

ECH = bytes(range(256)) * 2 + b"ech config list"  # 527 bytes: read in the first buffer
BIG_ECH = bytes(range(256)) * 6  # 1536 bytes: read again with a buffer of its size


@pytest.fixture
def bed():
    """A listener and a refusing port on 127.0.0.1, and a DNS server whose
    names redirect from the refusing port to the listener."""
    with listener("127.0.0.1") as lport, refusing("127.0.0.1") as rport:
        rr = f"_{rport}._https"
        zone = {
            "svc.test": {"A": ["127.0.0.1"]},
            f"{rr}.svc.test": {"HTTPS": {"records": [{"priority": 1, "target": ".", "port": lport, "alpn": ["h2"]}]}},
            "ech.test": {"A": ["127.0.0.1"]},
            f"{rr}.ech.test": {
                "HTTPS": {"records": [{"priority": 3, "port": lport, "alpn": ["h2"], "ech": base64.b64encode(ECH).decode()}]}
            },
            "bigech.test": {"A": ["127.0.0.1"]},
            f"{rr}.bigech.test": {
                "HTTPS": {"records": [{"priority": 1, "port": lport, "ech": base64.b64encode(BIG_ECH).decode()}]}
            },
            # An HTTPS entry with no records: NODATA; the origin's port refuses.
            "plain.test": {"A": ["127.0.0.1"]},
            f"{rr}.plain.test": {"HTTPS": []},
            # Only an h3 service: skipped (alpn h2/http/1.1 share nothing with it).
            "h3.test": {"A": ["127.0.0.1"]},
            f"{rr}.h3.test": {"HTTPS": [{"priority": 1, "port": lport, "alpn": ["h3"], "no-default-alpn": True}]},
        }
        with DNSServer(zone) as dns:
            yield dns, lport, rport


def kw(dns: DNSServer, **more):
    return {"resolver": "builtin", "nameservers": [dns.address], **more}


def https_queries(dns: DNSServer) -> list[str]:
    """The HTTPS query names received, each once (a retransmission under
    load is no second query of the client's)."""
    return sorted({name for name, qtype in dns.queries if qtype == "HTTPS"})


# ---- options ---------------------------------------------------------------


@pytest.mark.parametrize(
    "alpn, exc, words",
    [
        ("h2", TypeError, "sequence of str"),
        (b"h2", TypeError, "sequence of str"),
        (7, TypeError, "sequence of str"),
        ([b"h2"], TypeError, "entries must be str"),
        (["h2", None], TypeError, "entries must be str"),
        ([], ValueError, "empty"),
        ((), ValueError, "empty"),
        ([""], ValueError, "empty protocol name"),
        (["h2,http/1.1"], ValueError, "comma"),
        (["h2\0"], ValueError, "NUL"),
        (["h\u00e9"], ValueError, "not ASCII"),
    ],
)
def test_alpn_checked_by_python(alpn, exc, words):
    with refusing("127.0.0.1") as port, pytest.raises(exc, match=words):
        hev2.create_connection(("127.0.0.1", port), https_rr=True, alpn=alpn)


@pytest.mark.parametrize(
    "alpn, words",
    [
        ([f"p{i}" for i in range(17)], "invalid alpn: 17 protocols, at most 16"),
        (["x" * 256], "is not a protocol name (1-255 bytes"),
    ],
)
def test_alpn_limits_are_the_librarys(alpn, words):
    # The library's refusal, its message as it gives it.
    with refusing("127.0.0.1") as port, pytest.raises(ValueError, match=words.replace("(", r"\(")):
        hev2.create_connection(("127.0.0.1", port), https_rr=True, alpn=alpn)


def test_sixteen_protocols_of_255_bytes_are_taken():
    with listener("127.0.0.1") as port:
        hev2.create_connection(("127.0.0.1", port), https_rr=True, alpn=["x" * 255] * 15 + ["h2"]).close()
        hev2.create_connection(("127.0.0.1", port), alpn=("h2",)).close()  # without https_rr: taken, unused


@pytest.mark.parametrize(
    "more, exc",
    [
        ({"https_rr": 1}, TypeError),
        ({"https_rr": "yes"}, TypeError),
        ({"ech": None}, TypeError),
        ({"ech_wait": "5"}, TypeError),
        ({"ech_wait": float("nan")}, ValueError),
        ({"ech_wait": -1}, ValueError),  # the library's range
    ],
)
def test_flags_and_ech_wait_checked(more, exc):
    with refusing("127.0.0.1") as port, pytest.raises(exc):
        hev2.create_connection(("127.0.0.1", port), **more)


def test_aio_checks_alpn_too():
    async def run():
        await hev2.aio.open_connection("127.0.0.1", 1, https_rr=True, alpn="h2")

    with pytest.raises(TypeError, match="sequence of str"):
        asyncio.run(run())


# ---- defaults --------------------------------------------------------------


def test_no_https_query_without_https_rr(bed):
    dns, lport, _ = bed
    with hev2.create_connection(("svc.test", lport), **kw(dns)) as sock:
        assert hev2.service_of(sock) is None
    assert https_queries(dns) == [] and ("svc.test", "A") in dns.queries


def test_service_of_is_none_for_other_objects(bed):
    _, lport, _ = bed
    with socket.create_connection(("127.0.0.1", lport)) as sock:
        assert hev2.service_of(sock) is None
    assert hev2.service_of(object()) is None and hev2.service_of(42) is None


def test_no_https_query_for_an_ip_literal_or_a_hosts_entry(bed):
    dns, lport, _ = bed
    with hev2.create_connection(("127.0.0.1", lport), https_rr=True, **kw(dns)) as sock:
        assert hev2.service_of(sock) is None
    with hev2.create_connection(("svc.test", lport), https_rr=True, hosts={"svc.test": "127.0.0.1"}, **kw(dns)) as sock:
        assert hev2.service_of(sock) is None
    assert https_queries(dns) == []


# ---- a real connect --------------------------------------------------------


def test_redirected_to_the_services_port(bed):
    dns, lport, rport = bed
    with hev2.create_connection(("svc.test", rport), 5, https_rr=True, **kw(dns)) as sock:
        assert sock.getpeername() == ("127.0.0.1", lport)
        assert sock.gettimeout() == 5
        out = hev2.service_of(sock)
    assert out == hev2.HTTPSOutcome(
        state="answered",
        services=1,
        service=hev2.Service(priority=1, target="svc.test.", port=lport, alpn=("h2", "http/1.1"), ech=None),
    )
    assert https_queries(dns) == [f"_{rport}._https.svc.test"]


def test_the_ech_configuration_comes_back(bed):
    dns, lport, rport = bed
    for ech in (False, True):
        with hev2.create_connection(("ech.test", rport), https_rr=True, ech=ech, ech_wait=2, **kw(dns)) as sock:
            assert sock.getpeername()[1] == lport
            svc = hev2.service_of(sock).service
        assert svc.ech == ECH and svc.priority == 3 and svc.target == "ech.test."
    with hev2.create_connection(("bigech.test", rport), https_rr=True, **kw(dns)) as sock:
        assert hev2.service_of(sock).service.ech == BIG_ECH


def test_alpn_decides_which_services_are_used(bed):
    dns, lport, rport = bed
    # h2/http/1.1 (the default) share nothing with an h3-only service: the
    # origin's own port, which refuses; the outcome rides on the exception.
    with pytest.raises(ConnectionRefusedError) as info:
        hev2.create_connection(("h3.test", rport), https_rr=True, **kw(dns))
    assert info.value.hev2_service == hev2.HTTPSOutcome("answered", 0, None)
    with hev2.create_connection(("h3.test", rport), https_rr=True, alpn=["h3"], **kw(dns)) as sock:
        assert sock.getpeername()[1] == lport
        assert hev2.service_of(sock).service.alpn == ("h3",)


def test_the_origin_wins_without_a_service(bed):
    dns, lport, _ = bed
    # Connecting to the listener's port itself: "_LPORT._https.svc.test" has
    # no entry (NXDOMAIN), plain.test's has no records (NODATA).
    with hev2.create_connection(("svc.test", lport), https_rr=True, **kw(dns)) as sock:
        assert hev2.service_of(sock) == hev2.HTTPSOutcome("nxdomain", 0, None)
    dns.set({f"_{lport}._https.plain.test": {"HTTPS": []}})
    with hev2.create_connection(("plain.test", lport), https_rr=True, **kw(dns)) as sock:
        assert hev2.service_of(sock) == hev2.HTTPSOutcome("nodata", 0, None)


def test_with_the_report(bed):
    dns, lport, rport = bed
    with hev2.create_connection(("svc.test", rport), https_rr=True, report=True, **kw(dns)) as sock:
        assert hev2.service_of(sock).service.port == lport
        report = hev2.report_of(sock)
    assert report.connected and report.attempts[report.winner].port == lport


def test_aio(bed):
    dns, lport, rport = bed

    async def run():
        reader, writer = await hev2.aio.open_connection("svc.test", rport, https_rr=True, **kw(dns))
        try:
            return writer.get_extra_info("peername"), hev2.service_of(writer), hev2.service_of(writer.transport)
        finally:
            writer.close()

    peer, out, same = asyncio.run(run())
    assert peer == ("127.0.0.1", lport) and out is same
    assert out.state == "answered" and out.service.port == lport and out.service.alpn == ("h2", "http/1.1")


def test_aio_failure_carries_the_outcome(bed):
    dns, _, rport = bed

    async def run():
        await hev2.aio.open_connection("plain.test", rport, https_rr=True, **kw(dns))

    with pytest.raises(ConnectionRefusedError) as info:
        asyncio.run(run())
    assert info.value.hev2_service.state == "nodata"


# ---- the scenario client ---------------------------------------------------

CLIENTS = {"blocking": str(HERE / "client" / "hev2-client"), "asyncio": str(HERE / "client" / "hev2-client-asyncio")}


def client(kind, *args):
    p = subprocess.run([CLIENTS[kind], *map(str, args)], env=child_env(), capture_output=True, text=True, timeout=60)
    lines = p.stdout.splitlines()
    return p.returncode, (json.loads(lines[0]) if lines else None), p.stderr


@pytest.mark.parametrize("kind", list(CLIENTS))
def test_client_svcb(bed, kind):
    dns, lport, rport = bed
    ns = ["--resolver", "builtin", "--nameserver", dns.address]
    code, out, err = client(kind, *ns, "svc.test", lport)
    assert code == 0 and out["svcb"] is None, err
    code, out, err = client(kind, *ns, "--https-rr", "svc.test", rport)
    assert code == 0, err
    assert out["port"] == lport
    assert out["svcb"] == {
        "state": "answered",
        "service": {"priority": 1, "target": "svc.test.", "port": lport, "alpn": ["h2", "http/1.1"], "ech": False},
    }
    code, out, err = client(kind, *ns, "--https-rr", "--ech", "--alpn", "h2", "ech.test", rport)
    assert code == 0 and out["svcb"]["service"]["ech"] is True, err
    code, out, err = client(kind, *ns, "--https-rr", "--alpn", "h3", "h3.test", rport)
    assert code == 0 and out["svcb"]["service"]["alpn"] == ["h3"], err
    code, out, err = client(kind, *ns, "--https-rr", "plain.test", rport)
    assert code == 1 and out["svcb"] == {"state": "nodata", "service": None}, err


@pytest.mark.parametrize("alpn", ["", "h2,,h3", "h2,"])
def test_client_alpn_usage_errors(alpn):
    code, out, err = client("blocking", "--https-rr", "--alpn", alpn, "127.0.0.1", 1)
    assert code == 2 and out is None and err.startswith("hev2-client:"), err
