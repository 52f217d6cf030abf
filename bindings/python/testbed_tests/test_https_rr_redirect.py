"""The https_rr setting of hev2's HTTP client integrations on the test bed,
over HTTPS, with a redirecting HTTPS record (tests/testbed/README.md, "The
HTTPS-record redirect"): https://<origin>:<HTTPS port>/, whose own
addresses refuse that port and whose HTTPS record (asked for that port)
sends the connection to another name and port, where the bed's web server
has a certificate for the origin's name alone and hands it only to a client
that sends that name (SNI).

Each client, with https_rr on for the bed's HTTPS port, gets the page from
the redirect port, the server having seen the origin's name as SNI (and
the client's certificate check passing with it); with https_rr off the same
fetch, still through hev2, is refused: only the record's redirect reaches
the page. requests, urllib3, urllib and http.client take the setting from
hev2.install(https_rr=...), httpx (blocking and async) from hev2's
transports, aiohttp from hev2's connector.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import json
import os
import ssl
import urllib.parse
import urllib.request
from typing import Any, Callable, Iterator

import aiohttp
import httpx
import pytest
import requests
import urllib3

import bed
import hev2
import hev2.aiohttp
import hev2.httpx

TIMEOUT = 10.0


def redirect() -> dict[str, Any]:
    raw = os.environ.get("HEV2_BED_HTTPS_REDIRECT")
    if raw is None:
        pytest.fail("HEV2_BED_HTTPS_REDIRECT is not set: run by a hev2-testbed run that serves the redirect")
    return json.loads(raw)


def origin_url() -> str:
    return f"https://{redirect()['host']}:{bed.ports()['https']}/redirected"


# Each getter fetches url and returns the server's JSON; https_rr is the
# setting (a set of ports) or None (off). The install clients are set by
# the installed fixture.


def get_requests(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    with requests.Session() as s:
        s.trust_env = False
        r = s.get(url, verify=ca, timeout=TIMEOUT)
        r.raise_for_status()
        return r.json()


def get_urllib3(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    with urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca, timeout=TIMEOUT, retries=False) as pm:
        return json.loads(pm.request("GET", url).data)


def get_urllib(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca))
    )
    with opener.open(url, timeout=TIMEOUT) as r:
        return json.loads(r.read())


def get_http_client(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    u = urllib.parse.urlsplit(url)
    assert u.hostname and u.port
    conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=TIMEOUT, context=ssl.create_default_context(cafile=ca))
    try:
        conn.request("GET", u.path)
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def get_httpx(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    transport = hev2.httpx.HTTPTransport(verify=ca, https_rr=https_rr or False)
    with httpx.Client(transport=transport, trust_env=False, timeout=TIMEOUT) as c:
        r = c.get(url)
        r.raise_for_status()
        return r.json()


def get_httpx_async(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        transport = hev2.httpx.AsyncHTTPTransport(verify=ca, https_rr=https_rr or False)
        async with httpx.AsyncClient(transport=transport, trust_env=False, timeout=TIMEOUT) as c:
            r = await c.get(url)
            r.raise_for_status()
            return r.json()

    return asyncio.run(main())


def get_aiohttp(url: str, ca: str, https_rr: frozenset[int] | None) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        connector = hev2.aiohttp.TCPConnector(
            ssl=ssl.create_default_context(cafile=ca), hev2_options={"https_rr": https_rr or False}
        )
        async with aiohttp.ClientSession(
            connector=connector, trust_env=False, timeout=aiohttp.ClientTimeout(total=TIMEOUT)
        ) as s:
            async with s.get(url) as r:
                r.raise_for_status()
                return json.loads(await r.read())

    return asyncio.run(main())


Get = Callable[[str, str, "frozenset[int] | None"], dict[str, Any]]
# name -> (get, whether the setting comes from hev2.install()).
CLIENTS: dict[str, tuple[Get, bool]] = {
    "requests": (get_requests, True),
    "urllib3": (get_urllib3, True),
    "urllib": (get_urllib, True),
    "http.client": (get_http_client, True),
    "httpx": (get_httpx, False),
    "httpx-async": (get_httpx_async, False),
    "aiohttp": (get_aiohttp, False),
}


@pytest.fixture
def setting(request: pytest.FixtureRequest) -> Iterator[frozenset[int] | None]:
    """The https_rr setting of the test (its "on" parameter), given to
    hev2.install() for the install clients; the session's hev2.install()
    (no https_rr) is put back afterwards."""
    client, on = request.param
    ports = frozenset({bed.ports()["https"]}) if on else None
    if CLIENTS[client][1]:
        hev2.install(https_rr=ports or False)
    yield ports
    hev2.install()


def refused(exc: BaseException) -> bool:
    """Whether exc, or an error it was raised from, says connection refused
    (hev2's error or the client's wrapping of it)."""
    seen = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED:
            return True
        if "refused" in str(e).lower():
            return True
        todo += [e.__cause__, e.__context__, getattr(e, "reason", None)]
        todo += [a for a in e.args if isinstance(a, BaseException)]
    return False


@pytest.mark.parametrize(
    "client,setting", [(c, (c, on)) for c in CLIENTS for on in (True, False)], indirect=["setting"],
    ids=[f"{c}-https_rr-{'on' if on else 'off'}" for c in CLIENTS for on in (True, False)],
)
def test_https_record_redirect(client: str, setting: frozenset[int] | None, show: Callable[[str], None]) -> None:
    get = CLIENTS[client][0]
    r = redirect()
    url = origin_url()
    created = hev2.stats()["handles_created"]
    if setting:
        seen = get(url, bed.ca_file(), setting)
        show(
            f"  {client:12} https_rr={sorted(setting)} {url}: server saw {seen['peer']} via "
            f"{seen['local']} port {seen['port']} ({seen['family']}) SNI {seen['sni']}"
        )
        assert seen["tls"] and seen["path"] == "/redirected"
        # The record's port and target; the origin's name as SNI (the
        # server has no certificate for any other, so the client's check
        # against the origin's name passed too).
        assert seen["port"] == r["port"] and seen["local"] in r["winners"], f"{client}: server saw {seen}"
        assert seen["sni"] == r["host"], f"{client}: SNI {seen['sni']!r}, want the origin's {r['host']!r}"
    else:
        with pytest.raises(Exception) as info:
            get(url, bed.ca_file(), None)
        show(f"  {client:12} https_rr off {url}: {type(info.value).__name__}: {info.value}")
        assert refused(info.value), f"{client}: {info.value!r}, want connection refused (the origin's own port)"
    assert hev2.stats()["handles_created"] > created, f"{client}: the connection was not made by hev2"
