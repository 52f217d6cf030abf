"""hev2.install() covers urllib3's own connect loop (hence requests):
whether urllib3 was imported before install() or after; its socket options
reach the socket; uninstall() gives urllib3 its function back."""

from __future__ import annotations

import socket
import sys

import pytest
import requests
import urllib3
import urllib3.util.connection

import hev2
from http_loopback import http_server
from isolated import run_json
from loopback import blackhole, listener, one_port

HOSTS = {"web.test": ["::1"]}


@pytest.fixture
def installed():
    original = urllib3.util.connection.create_connection
    yield
    hev2.uninstall()
    assert urllib3.util.connection.create_connection is original
    assert not any(type(f).__name__ == "_Urllib3Finder" for f in sys.meta_path)


def created():
    return hev2.stats()["handles_created"]


def test_requests_and_urllib3_go_through_hev2(installed):
    with http_server("::1") as port:
        hev2.install(hosts=HOSTS)
        before = created()
        # A name only hev2's static address list knows.
        with requests.Session() as s:
            s.trust_env = False
            assert s.get(f"http://web.test:{port}/", timeout=5).text == "hello from ::1"
        with urllib3.PoolManager(retries=False) as pm:
            assert pm.request("GET", f"http://web.test:{port}/").data == b"hello from ::1"
            # an IPv6 literal in a URL: urllib3 hands it over in brackets
            assert pm.request("GET", f"http://[::1]:{port}/").data == b"hello from ::1"
        assert created() == before + 3


def test_the_race_happens_under_requests(installed):
    # dual.test is ::1 (SYNs dropped) and 127.0.0.1 (answers) on one port,
    # a name only hev2 knows: the race (IPv4 after the Connection Attempt
    # Delay) made requests' connection. Its timing is judged on the test
    # bed (make test-python-clients).
    with one_port(lambda p: http_server("127.0.0.1", p), lambda p: blackhole("::1", p)) as port:
        hev2.install(hosts={"dual.test": ["::1", "127.0.0.1"]})
        before = created()
        with requests.Session() as s:
            s.trust_env = False
            r = s.get(f"http://dual.test:{port}/", timeout=5)
        assert r.text == "hello from 127.0.0.1"
        assert created() == before + 1


def test_urllib3_socket_options_reach_the_socket(installed):
    hev2.install(hosts=HOSTS)
    options = [
        (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
        (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 7),
    ]
    with http_server("::1") as port:
        pool = urllib3.HTTPConnectionPool("web.test", port, socket_options=options, retries=False)
        r = pool.request("GET", "/", preload_content=False)
        sock = r.connection.sock
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 7
        assert r.read() == b"hello from ::1"
        r.release_conn()
        # and urllib3's default (TCP_NODELAY) when none are given
        r = urllib3.HTTPConnectionPool("web.test", port, retries=False).request("GET", "/", preload_content=False)
        assert r.connection.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        r.release_conn()


def test_urllib3_errors_are_urllib3s(installed):
    hev2.install(hosts={"gone.test": ["127.0.0.1"]})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(urllib3.exceptions.NewConnectionError) as e:
            urllib3.HTTPConnectionPool("gone.test", port, retries=False).request("GET", "/")
        assert isinstance(e.value.__context__, ConnectionRefusedError)
        assert e.value.__context__.hev2_failure is not None  # hev2 made the attempt
    with blackhole("127.0.0.1") as port:
        with pytest.raises(urllib3.exceptions.ConnectTimeoutError):
            urllib3.HTTPConnectionPool("gone.test", port, retries=False, timeout=0.2).request("GET", "/")
    # a name IDNA cannot encode: urllib3's own LocationParseError, as without hev2
    with pytest.raises(urllib3.exceptions.LocationParseError):
        urllib3.util.connection.create_connection(("a" * 64 + ".test", 80))


def test_urllib3_imported_after_install(tmp_path):
    got = run_json(
        tmp_path,
        """
        import json, sys
        import hev2
        hev2.install()
        assert "urllib3" not in sys.modules
        import urllib3.util.connection as c
        patched = getattr(c.create_connection, "__hev2_installed__", False)
        hev2.uninstall()
        print(json.dumps({"patched": patched, "restored": not hasattr(c.create_connection, "__hev2_installed__")}))
        """,
    )
    assert got == {"patched": True, "restored": True}


def test_not_installed_means_urllib3_untouched(tmp_path):
    got = run_json(
        tmp_path,
        """
        import json, sys
        import hev2
        import urllib3.util.connection as c
        print(json.dumps({"module": c.create_connection.__module__, "finders": [type(f).__name__ for f in sys.meta_path]}))
        """,
    )
    assert got["module"] == "urllib3.util.connection"
    assert "_Urllib3Finder" not in got["finders"]
