"""Argument handling: what create_connection accepts, and the clear errors
for what it refuses: Python's own type checks before the library is called,
the library's value rules (core's) mapped to the exceptions socket users
expect."""

from __future__ import annotations

import math
import socket

import pytest

import hev2
from hev2._options import build_request
from loopback import listener, refusing


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
        # Python's own checks: types, and what Python itself converts.
        ({"timeout": -1}, ValueError, "out of range"),
        ({"timeout": "1"}, TypeError, "timeout"),
        ({"timeout": math.nan}, ValueError, "out of range"),
        ({"resolv_timeout": math.nan}, ValueError, "resolv_timeout: Invalid value NaN"),
        ({"open_timeout": True}, TypeError, "open_timeout"),
        ({"fast_fallback": 1}, TypeError, "fast_fallback"),
        ({"resolver": "dns"}, ValueError, "resolver"),
        ({"family": "inet"}, TypeError, "family"),
        ({"hosts": ["a"]}, TypeError, "mapping"),
        ({"hosts": {"a:b": ["::1"]}}, ValueError, "list format"),
        ({"hosts": {"a b": ["::1"]}}, ValueError, "list format"),
        ({"hosts": {"a": ["::1;b:::2"]}}, ValueError, "list format"),
        ({"resolver": "builtin", "nameservers": ["::1,::2"]}, ValueError, "list format"),
        ({"first_address_family_count": "2"}, TypeError, "first_address_family_count"),
        ({"nodelay": "yes"}, TypeError, "nodelay"),
        ({"nat64": 0}, TypeError, "nat64"),
        ({"bogus": 1}, TypeError, "bogus"),
    ],
)
def test_bad_types_are_refused_clearly(kw, exc, words):
    with pytest.raises(exc, match=words):
        request(**kw)


@pytest.mark.parametrize(
    "kw, words",
    [
        # The library's rules (core's, the only ones), as ValueError with
        # the library's reason.
        ({"resolv_timeout": -0.5}, "invalid resolv_timeout: -500ms out of range"),
        ({"resolv_timeout": -0.0001}, "invalid resolv_timeout: -1ms out of range"),
        ({"connect_timeout": 10**9}, "invalid connect_timeout: .* out of range"),
        ({"keepalive": math.inf}, "invalid keepalive: .* out of range"),
        ({"resolution_delay": -1}, "invalid resolution_delay"),
        ({"open_timeout": 1, "resolv_timeout": 1}, "invalid open_timeout: cannot be combined"),
        ({"resolver": "system", "nameservers": ["127.0.0.1"]}, "nameservers need the built-in resolver"),
        ({"resolver": "builtin", "nameservers": ["ns.example"]}, "not IP, IP:PORT"),
        ({"resolver": "builtin", "nameservers": ["127.0.0.1:0"]}, "127.0.0.1:0"),
        ({"family": 99}, "family 99"),
        ({"family": 2**40}, "family 2147483647"),
        ({"hosts": {"a": []}}, 'static_hosts entry "a:"'),
        ({"hosts": {"a": ["not-an-ip"]}}, "not an IP address"),
        ({"hosts": {"": ["::1"]}}, "static_hosts entry"),
        ({"first_address_family_count": 65}, "invalid first_address_family_count: 65 out of range"),
        ({"first_address_family_count": 2**64}, "invalid first_address_family_count: 2147483647 out of range"),
    ],
)
def test_bad_values_are_refused_by_the_library(kw, words):
    with refusing("127.0.0.1") as port:
        with pytest.raises(ValueError, match=words):
            hev2.create_connection(("127.0.0.1", port), **kw)


@pytest.mark.parametrize(
    "address, exc, words",
    [
        ("example.test:80", TypeError, r"\(host, port\)"),
        (("example.test",), TypeError, r"\(host, port\)"),
        ((None, 80), TypeError, "host"),
        (("a\0b", 80), ValueError, "embedded null character"),
        (("example.test", 70000), OverflowError, "0-65535"),
        (("example.test", -1), OverflowError, "0-65535"),
        (("example.test", 1.5), TypeError, "port"),
        (("example.test", "no-such-service-hev2"), socket.gaierror, "Servname"),
    ],
)
def test_bad_addresses_are_refused_clearly(address, exc, words):
    with pytest.raises(exc, match=words):
        request(address)


@pytest.mark.parametrize("host", ["", "[]", "a" * 254, "[" + "a" * 254 + "]"])
def test_hosts_no_resolver_could_answer_are_gaierror_as_in_socket(host):
    # socket.create_connection raises gaierror EAI_NONAME for these (its
    # getaddrinfo answers so); the library's rule says why, in a note.
    with pytest.raises(socket.gaierror) as info:
        hev2.create_connection((host, 80))
    assert info.value.errno == socket.EAI_NONAME
    assert any("invalid host" in n for n in info.value.__notes__)


def test_addresses_are_converted_not_judged():
    assert request(("[::1]", "80")).host == "[::1]"  # the library takes the brackets off
    assert request(("::1", "http")).port == 80
    assert request(("bücher.example", 1)).host == "xn--bcher-kva.example"
    r = request(source=("127.0.0.1", 0))
    assert (r.local_address, r.local_port) == ("127.0.0.1", 0)
    r = request(resolver="builtin", nameservers=["::1", "[2001:db8::1]:5353", "127.0.0.1:53"])
    assert r.nameservers == ("::1", "[2001:db8::1]:5353", "127.0.0.1:53")
    assert request(first_address_family_count=0).first_address_family_count == 0  # the default


def test_source_address_is_checked_by_the_library():
    with refusing("127.0.0.1") as port:
        with pytest.raises(ValueError, match="not an IP address"):
            hev2.create_connection(("127.0.0.1", port), source_address=("localhost", 0))
        with pytest.raises(ValueError, match="invalid local_host: ::1 is not an address of family ipv4"):
            hev2.create_connection(("127.0.0.1", port), source_address=("::1", 0), family=socket.AF_INET)
    with pytest.raises(OverflowError, match="source_address port must be 0-65535"):
        request(source=("127.0.0.1", 70000))


def test_port_zero_is_refused_by_the_library():
    # The message is the library's last error: the function and the detail.
    with pytest.raises(ValueError, match="hev2: hev2_connect_wait: invalid port: 0 cannot be connected to"):
        hev2.create_connection(("127.0.0.1", 0))


def test_a_socket_timeout_beyond_the_librarys_longest_bounds_nothing():
    # socket's timeout has no upper bound: a year is accepted, as socket does.
    with listener("127.0.0.1") as port:
        with hev2.create_connection(("127.0.0.1", port), timeout=365 * 86400) as s:
            assert s.gettimeout() == 365 * 86400


def test_seconds_become_milliseconds_without_turning_into_none():
    from hev2._handle import milliseconds

    assert milliseconds(None) == 0  # no timeout / the default
    assert milliseconds(0.0004) == 1  # tiny but real: never 0, which means "none"
    assert milliseconds(1.5) == 1500
    assert milliseconds(0) == 0
    assert milliseconds(0, zero_to_1ms=True) == 1  # resolution_delay=0: the smallest delay
    assert milliseconds(-0.0001) == -1  # negative stays negative, for the library to refuse
    assert milliseconds(1e12) == 2**31 - 1  # saturated, never wrapped into range
    assert milliseconds(-math.inf) == -(2**31)


def test_nat64_off_reaches_the_options_struct():
    from hev2 import _abi
    from hev2._handle import options_for

    assert request().nat64 is True and request().default_options()
    off = request(nat64=False)
    assert not off.default_options()
    assert options_for(off).nat64 == _abi.NAT64_OFF
    assert options_for(request(nat64=True, nodelay=True)).nat64 == _abi.NAT64_AUTO
