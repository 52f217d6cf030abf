"""Argument handling: what create_connection accepts, and the clear errors
for what it refuses (raised before the library is called)."""

from __future__ import annotations

import math
import socket

import pytest

import hev2
from hev2._options import build_request


def request(address=("example.test", 443), timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source=None, **kw):
    named = {k: kw.pop(k) for k in ("resolv_timeout", "connect_timeout", "open_timeout") if k in kw}
    return build_request(
        address,
        timeout,
        source,
        resolv_timeout=named.get("resolv_timeout"),
        connect_timeout=named.get("connect_timeout"),
        open_timeout=named.get("open_timeout"),
        fast_fallback=kw.pop("fast_fallback", True),
        more=kw,
    )


def test_timeout_becomes_connect_timeout_and_socket_timeout():
    r = request(timeout=2.5)
    assert (r.connect_timeout, r.socket_timeout, r.resolv_timeout) == (2.5, 2.5, None)


def test_default_timeout_follows_getdefaulttimeout():
    old = socket.getdefaulttimeout()
    try:
        socket.setdefaulttimeout(7)
        r = request()
        assert (r.connect_timeout, r.socket_timeout) == (7.0, 7.0)
        socket.setdefaulttimeout(None)
        r = request()
        assert (r.connect_timeout, r.socket_timeout) == (None, None)
    finally:
        socket.setdefaulttimeout(old)


def test_explicit_timeouts_win_over_socket_timeout():
    assert request(timeout=3, connect_timeout=1).connect_timeout == 1
    r = request(timeout=3, open_timeout=1)
    assert (r.connect_timeout, r.open_timeout, r.socket_timeout) == (None, 1, 3)


def test_zero_timeout_is_a_non_blocking_socket_and_no_bound():
    r = request(timeout=0)
    assert (r.connect_timeout, r.socket_timeout) == (None, 0.0)


@pytest.mark.parametrize(
    "kw, exc, words",
    [
        ({"timeout": -1}, ValueError, "out of range"),
        ({"timeout": "1"}, TypeError, "timeout"),
        ({"timeout": math.nan}, ValueError, "out of range"),
        ({"resolv_timeout": -0.5}, ValueError, "resolv_timeout"),
        ({"connect_timeout": 10**9}, ValueError, "connect_timeout"),
        ({"open_timeout": True}, TypeError, "open_timeout"),
        ({"open_timeout": 1, "resolv_timeout": 1}, ValueError, "cannot be combined"),
        ({"fast_fallback": 1}, TypeError, "fast_fallback"),
        ({"resolver": "dns"}, ValueError, "resolver"),
        ({"nameservers": ["8.8.8.8"]}, ValueError, "resolver='builtin'"),
        ({"resolver": "builtin", "nameservers": ["ns.example"]}, ValueError, "not an IP address"),
        ({"resolver": "builtin", "nameservers": ["127.0.0.1:0"]}, ValueError, "port"),
        ({"family": 99}, ValueError, "family"),
        ({"hosts": {"a": []}}, ValueError, "no address"),
        ({"hosts": {"a": ["not-an-ip"]}}, ValueError, "not an IP address"),
        ({"hosts": ["a"]}, TypeError, "mapping"),
        ({"hosts": {"a:b": ["::1"]}}, ValueError, "not a host name"),
        ({"hosts": {"a b": ["::1"]}}, ValueError, "not a host name"),
        ({"first_address_family_count": 0}, ValueError, "first_address_family_count"),
        ({"nodelay": "yes"}, TypeError, "nodelay"),
        ({"bogus": 1}, TypeError, "bogus"),
    ],
)
def test_bad_options_are_refused_clearly(kw, exc, words):
    with pytest.raises(exc, match=words):
        request(**kw)


@pytest.mark.parametrize(
    "address, exc, words",
    [
        ("example.test:80", TypeError, r"\(host, port\)"),
        (("example.test",), TypeError, r"\(host, port\)"),
        ((None, 80), TypeError, "host"),
        (("", 80), ValueError, "empty"),
        (("a\0b", 80), ValueError, "NUL"),
        (("a" * 300, 80), ValueError, "253"),
        (("example.test", 70000), OverflowError, "0-65535"),
        (("example.test", -1), OverflowError, "0-65535"),
        (("example.test", 1.5), TypeError, "port"),
        (("example.test", "no-such-service-hev2"), socket.gaierror, "Servname"),
    ],
)
def test_bad_addresses_are_refused_clearly(address, exc, words):
    with pytest.raises(exc, match=words):
        request(address)


def test_addresses_are_normalised():
    assert request(("[::1]", "80")).host == "::1"
    assert request(("::1", "http")).port == 80
    assert request(("bücher.example", 1)).host == "xn--bcher-kva.example"
    r = request(source=("127.0.0.1", 0))
    assert (r.local_address, r.local_port) == ("127.0.0.1", 0)
    r = request(resolver="builtin", nameservers=["::1", "[2001:db8::1]:5353", "127.0.0.1:53"])
    assert r.nameservers == ("::1", "[2001:db8::1]:5353", "127.0.0.1:53")


def test_source_address_must_be_literal_and_match_family():
    with pytest.raises(ValueError, match="not an IP address"):
        request(source=("localhost", 0))
    with pytest.raises(ValueError, match="does not match family"):
        request(source=("::1", 0), family=socket.AF_INET)


def test_port_zero_is_refused_by_the_library():
    # The message is the library's last error: the function and the detail.
    with pytest.raises(ValueError, match="hev2: hev2_connect_wait: port 0 cannot be connected to"):
        hev2.create_connection(("127.0.0.1", 0))


def test_seconds_become_milliseconds_without_turning_into_none():
    from hev2._handle import milliseconds

    assert milliseconds(None) == 0  # no timeout / the default
    assert milliseconds(0.0004) == 1  # tiny but real: never 0, which means "none"
    assert milliseconds(1.5) == 1500
    assert milliseconds(0) == 0
    assert milliseconds(0, zero_to_1ms=True) == 1  # resolution_delay=0: the smallest delay
