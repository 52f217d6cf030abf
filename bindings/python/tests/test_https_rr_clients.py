"""The https_rr setting of the integrations: hev2.install() (http.client,
requests through urllib3), hev2.httpx's transports and hev2.aiohttp's
connector. It applies to connections to port 443 (or the ports given):
the HTTPS record of svc.test redirects https://svc.test/ to another
target and port, where a TLS server with a certificate for svc.test
alone listens. The request succeeds only if the client's TLS still sends
svc.test as its server name and checks the certificate against it (the
server keeps the names it was sent). Names come from hev2-testdns on
loopback through the built-in resolver; nothing listens on port 443.
"""

from __future__ import annotations

import asyncio
import http.client
import ssl

import aiohttp
import httpx
import pytest
import requests

import hev2
import hev2.aiohttp
import hev2.httpx
from hev2._options import https_rr_ports, with_https_rr
from http_loopback import certificate, http_server, https_server
from testdns import DNSServer


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    return certificate(tmp_path_factory.mktemp("tls"), "svc.test")


@pytest.fixture
def bed(cert):
    """(dns, its options for hev2, the TLS port, the names the TLS server
    was sent, a plain HTTP port, the CA file)."""
    cafile, key = cert
    with https_server("127.0.0.1", cafile, key) as (tls_port, names), http_server("127.0.0.1") as http_port:
        zone = {
            "svc.test": {
                "A": ["127.0.0.1"],
                "HTTPS": [{"priority": 1, "target": "backend.test.", "port": tls_port, "alpn": ["http/1.1"]}],
            },
            "backend.test": {"A": ["127.0.0.1"]},
        }
        with DNSServer(zone) as dns:
            yield dns, {"resolver": "builtin", "nameservers": [dns.address]}, tls_port, names, http_port, str(cafile)


def https_queries(dns):
    """The HTTPS query names received, each once (a retransmission under
    load is no second query)."""
    return sorted({name for name, qtype in dns.queries if qtype == "HTTPS"})


# ---- the setting -----------------------------------------------------------


def test_https_rr_ports():
    assert https_rr_ports(True) == {443}
    assert https_rr_ports(False) == https_rr_ports(None) == frozenset()
    assert https_rr_ports([443, 8443]) == https_rr_ports({8443, 443}) == {443, 8443}
    for bad in ("443", b"443", 443, [True], ["443"], 1.5):
        with pytest.raises(TypeError):
            https_rr_ports(bad)
    for bad in ([], [0], [65536]):
        with pytest.raises(ValueError):
            https_rr_ports(bad)


def test_with_https_rr():
    ports = frozenset({443, 8443})
    assert with_https_rr({"nodelay": True}, 443, ports) == {"nodelay": True, "https_rr": True}
    assert with_https_rr({}, "8443", ports) == {"https_rr": True}
    assert with_https_rr({}, "https", ports) == {"https_rr": True}  # /etc/services
    assert with_https_rr({}, 80, ports) == {}
    assert with_https_rr({}, 443, frozenset()) == {}
    # The call's own choice stands; a bad port is create_connection's to refuse.
    assert with_https_rr({"https_rr": False}, 443, ports) == {"https_rr": False}
    assert with_https_rr({}, "no such service", ports) == {}
    assert with_https_rr({}, None, ports) == {}


def test_bad_settings_are_refused():
    with pytest.raises(TypeError):
        hev2.install(https_rr="yes")
    assert not hev2.installed()
    with pytest.raises(ValueError):
        hev2.httpx.HTTPTransport(https_rr=[])
    with pytest.raises(TypeError):
        hev2.httpx.AsyncHTTPTransport(https_rr=443)
    with pytest.raises(TypeError, match="sequence of str"):
        hev2.httpx.HTTPTransport(https_rr=True, alpn="h2")

    async def connector():
        hev2.aiohttp.TCPConnector(hev2_options={"https_rr": "443"})

    with pytest.raises(TypeError):
        asyncio.run(connector())


# ---- hev2.install() ------------------------------------------------------------


@pytest.fixture
def installed():
    yield hev2.install
    hev2.uninstall()


def test_install_http_client(bed, installed):
    dns, opts, tls_port, names, http_port, cafile = bed
    installed(https_rr=True, **opts)
    conn = http.client.HTTPSConnection("svc.test", context=ssl.create_default_context(cafile=cafile), timeout=10)
    try:
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"hello from 127.0.0.1"
        assert conn.sock.getpeername() == ("127.0.0.1", tls_port)  # redirected from 443
    finally:
        conn.close()
    assert names == ["svc.test"]
    assert https_queries(dns) == ["svc.test"]
    # Port 80, 8080 ...: no HTTPS query.
    conn = http.client.HTTPConnection("svc.test", http_port, timeout=10)
    conn.request("GET", "/")
    assert conn.getresponse().status == 200
    conn.close()
    assert https_queries(dns) == ["svc.test"]


def test_install_off_by_default(bed, installed):
    dns, opts, _, _, http_port, _ = bed
    installed(**opts)
    import socket

    try:
        with socket.create_connection(("svc.test", 443), 10) as sock:
            assert sock.getpeername()[1] == 443  # something of this machine's on 443: not redirected
    except ConnectionRefusedError:
        pass  # nothing listens on 443
    assert https_queries(dns) == [] and ("svc.test", "A") in dns.queries


def test_install_requests(bed, installed):
    dns, opts, tls_port, names, _, cafile = bed
    installed(https_rr=True, **opts)
    with requests.Session() as s:
        s.trust_env = False
        r = s.get("https://svc.test/", verify=cafile, timeout=10)
    assert r.text == "hello from 127.0.0.1"
    assert names == ["svc.test"] and https_queries(dns) == ["svc.test"]


def test_install_ports(bed, installed):
    dns, opts, tls_port, names, _, cafile = bed
    # The setting names the ports: a connect to tls_port itself asks
    # "_PORT._https.svc.test" (none here: NXDOMAIN) and goes to the origin.
    installed(https_rr={443, tls_port}, **opts)
    conn = http.client.HTTPSConnection("svc.test", tls_port, context=ssl.create_default_context(cafile=cafile), timeout=10)
    conn.request("GET", "/")
    assert conn.getresponse().status == 200
    conn.close()
    assert https_queries(dns) == [f"_{tls_port}._https.svc.test"] and names == ["svc.test"]


# ---- hev2.httpx ----------------------------------------------------------------


def test_httpx_blocking(bed):
    dns, opts, tls_port, names, http_port, cafile = bed
    transport = hev2.httpx.HTTPTransport(verify=cafile, https_rr=True, **opts)
    with httpx.Client(transport=transport, trust_env=False) as c:
        r = c.get("https://svc.test/")
        assert r.text == "hello from 127.0.0.1"
        assert r.extensions["network_stream"].get_extra_info("server_addr") == ("127.0.0.1", tls_port)
        assert c.get(f"http://svc.test:{http_port}/").status_code == 200
    assert names == ["svc.test"] and https_queries(dns) == ["svc.test"]


def test_httpx_async(bed):
    dns, opts, tls_port, names, http_port, cafile = bed

    async def main():
        transport = hev2.httpx.AsyncHTTPTransport(verify=cafile, https_rr=True, **opts)
        async with httpx.AsyncClient(transport=transport, trust_env=False) as c:
            r = await c.get("https://svc.test/")
            plain = await c.get(f"http://svc.test:{http_port}/")
            return r.text, r.extensions["network_stream"].get_extra_info("server_addr"), plain.status_code

    assert asyncio.run(main()) == ("hello from 127.0.0.1", ("127.0.0.1", tls_port), 200)
    assert names == ["svc.test"] and https_queries(dns) == ["svc.test"]


# ---- hev2.aiohttp --------------------------------------------------------------


def test_aiohttp(bed):
    dns, opts, tls_port, names, http_port, cafile = bed

    async def main():
        connector = hev2.aiohttp.TCPConnector(
            ssl=ssl.create_default_context(cafile=cafile), hev2_options={"https_rr": True, **opts}
        )
        async with aiohttp.ClientSession(connector=connector, trust_env=False) as s:
            # (nothing listens on 443: an answer is the redirected connection's)
            async with s.get("https://svc.test/") as r:
                text = await r.text()
            async with s.get(f"http://svc.test:{http_port}/") as r:
                return text, r.status

    assert asyncio.run(main()) == ("hello from 127.0.0.1", 200)
    assert names == ["svc.test"] and https_queries(dns) == ["svc.test"]
