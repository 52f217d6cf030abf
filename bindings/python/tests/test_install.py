"""hev2.install(): off unless called; once called, socket.create_connection
and everything built on it (http.client, urllib) goes through hev2."""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import urllib.request
from contextlib import contextmanager

import pytest

import hev2


@contextmanager
def http_server(host):
    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"hello from {self.client_address[0]}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = Server((host, 0), Hello)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def installed():
    original = socket.create_connection
    yield
    hev2.uninstall()
    assert socket.create_connection is original


def created():
    return hev2.stats()["handles_created"]


def test_off_unless_called():
    assert not hev2.installed()
    assert socket.create_connection.__module__ == "socket"


def test_urllib_and_http_client_go_through_hev2(installed):
    with http_server("::1") as port:
        hev2.install(hosts={"web.test": ["::1"]})
        assert hev2.installed()
        before = created()
        # A name no resolver knows: only hev2's static address list can work.
        with urllib.request.urlopen(f"http://web.test:{port}/", timeout=5) as r:
            assert r.read() == b"hello from ::1"
        conn = http.client.HTTPConnection("web.test", port, timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"hello from ::1"
        conn.close()
        assert created() == before + 2
        # the timeout given by urllib/http.client reached the socket
        with socket.create_connection(("web.test", port), 3) as s:
            assert s.gettimeout() == 3


def test_uninstall_restores_the_original(installed):
    hev2.install()
    hev2.uninstall()
    assert not hev2.installed()
    with http_server("127.0.0.1") as port:
        before = created()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            assert r.read() == b"hello from 127.0.0.1"
        assert created() == before


def test_install_twice_replaces_the_defaults_and_uninstall_once_is_enough(installed):
    original = socket.create_connection
    hev2.install(hosts={"a.test": ["127.0.0.1"]})
    hev2.install(hosts={"b.test": ["127.0.0.1"]})
    with http_server("127.0.0.1") as port:
        with socket.create_connection(("b.test", port)) as s:
            assert s.getpeername()[0] == "127.0.0.1"
    hev2.uninstall()
    assert socket.create_connection is original


def test_install_checks_its_defaults(installed):
    with pytest.raises(TypeError, match="bogus"):
        hev2.install(bogus=1)
    with pytest.raises(ValueError, match="resolver"):
        hev2.install(resolver="nope")
    assert not hev2.installed()
