"""The cheap common case: a blocking connection with default options hands
the library one shared, prebuilt struct (the defaults with drive =
HEV2_DRIVE_WAITER), an asyncio one NULL options; other options get a copy of
hev2_options_init_size's struct with only the chosen fields (and drive) set;
importing hev2 imports nothing heavy (pathlib, asyncio, ctypes ... come when
used)."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

import hev2
from conftest import child_env
from hev2 import _abi, _connect, _handle, _options
from hev2._options import build_request
from loopback import blackhole, listener, refusing

DEFAULT = socket._GLOBAL_DEFAULT_TIMEOUT  # type: ignore[attr-defined]


def request(address=("127.0.0.1", 80), timeout=DEFAULT, source=None, **kw):
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


@pytest.fixture
def built_options(monkeypatch):
    """Records what options_for gives hev2_connect for each connection."""
    seen = []
    real = _handle.options_for

    def recording(req, *args, **kw):
        o = real(req, *args, **kw)
        seen.append(o)
        return o

    monkeypatch.setattr(_handle, "options_for", recording)
    # A request of the common call keeps its C arguments: a fresh cache, so
    # that this test's first connect to a destination builds them.
    monkeypatch.setattr(_options, "_common", {})
    return seen


def fields(o):
    return {name: getattr(o, name) for name, _ in _abi.Options._fields_}


def test_a_default_blocking_connection_passes_the_shared_waiter_struct(built_options):
    old = socket.getdefaulttimeout()
    try:
        socket.setdefaulttimeout(None)
        with listener("127.0.0.1") as port:
            with hev2.create_connection(("127.0.0.1", port)) as s:
                assert s.getpeername()[:2] == ("127.0.0.1", port)
                assert s.gettimeout() is None
    finally:
        socket.setdefaulttimeout(old)
    (o,) = built_options
    assert o is _handle.waiter_default_options(blocking=True)  # built once, not per connect
    want = fields(_handle.options_template())
    want["drive"] = _abi.DRIVE_WAITER
    want["blocking"] = 1  # no timeout: the fd comes blocking, no settimeout
    assert fields(o) == want


def test_a_default_asyncio_connection_passes_null_options(built_options):
    import asyncio

    import hev2.aio

    async def main(port):
        _, writer = await hev2.aio.open_connection("127.0.0.1", port)
        writer.close()
        await writer.wait_closed()

    with listener("127.0.0.1") as port:
        asyncio.run(main(port))
    assert built_options == [None]  # library-driven: the loop watches hev2_fd


def test_a_timeout_builds_options_with_only_that_field_set(built_options):
    with listener("::1") as port:
        with hev2.create_connection(("::1", port), timeout=2.5) as s:
            assert s.getpeername()[:2] == ("::1", port)
            assert s.gettimeout() == 2.5
    (o,) = built_options
    assert o is not None
    want = fields(_handle.options_template())
    want["connect_timeout_ms"] = 2500
    want["drive"] = _abi.DRIVE_WAITER
    assert fields(o) == want


@pytest.mark.parametrize("waiter", [False, True])
def test_defaults_in_every_form_need_no_struct_built(waiter):
    shared = _handle.waiter_default_options() if waiter else None
    assert _handle.options_for(request(), waiter) is shared
    assert _handle.options_for(request(timeout=None), waiter) is shared
    assert _handle.options_for(request(timeout=0), waiter) is shared  # a non-blocking socket bounds nothing
    assert _handle.options_for(request(source=("", 0), family=socket.AF_UNSPEC, nodelay=False), waiter) is shared


def test_the_template_is_the_full_1_2_struct():
    # hev2_options_init_size with our sizeof: every field of 1.2, drive
    # included, has its default (the library's own drive: a library thread).
    t = _handle.options_template()
    assert t.size == _abi.ctypes.sizeof(_abi.Options) == _abi.LAYOUT["hev2_options"][0]
    assert t.size > _abi.LAYOUT["hev2_options"][1]["drive"]
    assert (t.drive, t.fast_fallback, t.family, t.resolver) == (_abi.DRIVE_LIBRARY, 1, socket.AF_UNSPEC, _abi.RESOLVER_DEFAULT)
    # Why not hev2_options_init: the exported function fills 1.0's layout
    # only, and the library would then never read `drive`.
    old = _abi.Options()
    assert _abi.api().hev2_options_init(_abi.ctypes.byref(old)) == _abi.OK
    assert old.size <= _abi.LAYOUT["hev2_options"][1]["drive"]


@pytest.mark.parametrize(
    "kw, field, value",
    [
        ({"resolv_timeout": 1.5}, "resolv_timeout_ms", 1500),
        ({"connect_timeout": 0.0004}, "connect_timeout_ms", 1),
        ({"open_timeout": 3}, "open_timeout_ms", 3000),
        ({"fast_fallback": False}, "fast_fallback", 0),
        ({"resolution_delay": 0}, "resolution_delay_ms", 1),
        ({"connection_attempt_delay": 0.1}, "connection_attempt_delay_ms", 100),
        ({"first_address_family_count": 2}, "first_address_family_count", 2),
        ({"family": socket.AF_INET6}, "family", socket.AF_INET6),
        ({"source": ("127.0.0.1", 0)}, "local_host", b"127.0.0.1"),
        ({"source": ("", 4321)}, "local_port", 4321),
        ({"resolver": "system"}, "resolver", _abi.RESOLVER_SYSTEM),
        ({"resolver": "builtin"}, "resolver", _abi.RESOLVER_BUILTIN),
        ({"hosts": {"a.test": ["::1", "127.0.0.1"]}}, "static_hosts", b"a.test:[::1],127.0.0.1"),
        ({"nodelay": True}, "nodelay", 1),
        ({"keepalive": 30}, "keepalive_ms", 30000),
    ],
)
def test_one_option_sets_one_field_of_the_default_struct(kw, field, value):
    source = kw.pop("source", None)
    o = _handle.options_for(request(source=source, **kw))
    assert o is not None
    want = fields(_handle.options_template())
    assert want["size"] == _abi.ctypes.sizeof(_abi.Options)
    want[field] = value
    assert fields(o) == want
    # The blocking path's struct: the same, driven by the waiter.
    w = _handle.options_for(request(source=source, **kw), True)
    want["drive"] = _abi.DRIVE_WAITER
    assert fields(w) == want


def test_builtin_resolver_with_nameservers_sets_both():
    o = _handle.options_for(request(resolver="builtin", nameservers=["::1", "127.0.0.1:5353"]))
    assert (o.resolver, o.nameservers) == (_abi.RESOLVER_BUILTIN, b"::1,127.0.0.1:5353")


@pytest.mark.parametrize("timeout", [DEFAULT, None, 0, 2.5, 10**9])
def test_the_common_call_gives_the_same_request_as_the_full_checks(timeout):
    # A falsy source_address that is not None takes the path that checks
    # every option; (host, port) alone takes the short one.
    fast = request(("[::1]", "http"), timeout)
    full = request(("[::1]", "http"), timeout, source=())
    assert fast == full
    assert (fast.host, fast.port) == ("[::1]", 80)  # the library takes the brackets off


def test_the_common_call_checks_a_destination_once_and_shares_its_request(monkeypatch):
    monkeypatch.setattr(_options, "_common", {})
    first = _options.common_request(("127.0.0.1", 80), DEFAULT)
    assert first == request()  # what the full checks build
    assert _options.common_request(("127.0.0.1", 80), DEFAULT) is first
    assert _options.common_request(("127.0.0.1", 80), None) is first  # DEFAULT is None here
    old = socket.getdefaulttimeout()
    try:
        socket.setdefaulttimeout(3.0)
        # The socket's default timeout, read at each call, is in the key.
        later = _options.common_request(("127.0.0.1", 80), DEFAULT)
    finally:
        socket.setdefaulttimeout(old)
    assert later is not first and later.socket_timeout == 3.0 == later.connect_timeout
    assert len(_options._common) == 2
    # What must meet the checks on every call is never a key: True == 1.
    for bad, error in [(("127.0.0.1", True), TypeError), (("127.0.0.1\0", 80), ValueError), (("127.0.0.1", 70000), OverflowError)]:
        for _ in range(2):
            with pytest.raises(error):
                _options.common_request(bad, DEFAULT)
    assert _options.common_request((b"127.0.0.1", "80"), DEFAULT) == first
    assert len(_options._common) == 2


def test_the_common_requests_are_bounded(monkeypatch):
    monkeypatch.setattr(_options, "_common", {})
    for port in range(1, 2 * _options.COMMON_REQUESTS_MAX):
        _options.common_request(("127.0.0.1", port), DEFAULT)
        assert len(_options._common) <= _options.COMMON_REQUESTS_MAX


HEAVY = ("pathlib", "asyncio", "ctypes", "ctypes.util", "dataclasses", "typing", "threading", "ipaddress", "inspect")

IMPORT_CHILD = """
import json, sys
before = set(sys.modules)
import hev2
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_importing_hev2_imports_nothing_heavy():
    p = subprocess.run(
        ["/usr/bin/python3", "-c", IMPORT_CHILD], env=child_env(), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    imported = json.loads(p.stdout)
    assert "hev2._connect" in imported
    assert [m for m in HEAVY if m in imported] == []
    assert not any(m.startswith("hev2._abi") for m in imported)


FIRST_USE_CHILD = """
import json, socket, sys
import hev2
with socket.create_server(("127.0.0.1", 0)) as l:
    with hev2.create_connection(("127.0.0.1", l.getsockname()[1])) as s:
        ok = s.getpeername()[0] == "127.0.0.1"
print(json.dumps({"ok": ok, "ctypes": "ctypes" in sys.modules, "errors": "hev2._errors" in sys.modules,
                  "asyncio": "asyncio" in sys.modules, "dataclasses": "dataclasses" in sys.modules,
                  "threading": "threading" in sys.modules, "ForkedError": hev2.ForkedError.__module__,
                  "in_dir": "ForkedError" in dir(hev2)}))
"""


def test_the_first_connection_loads_what_it_needs():
    p = subprocess.run(
        ["/usr/bin/python3", "-c", FIRST_USE_CHILD], env=child_env(), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    # _errors comes with the library, so a failure can be reported even
    # with no fd left to import a module; asyncio only with hev2.aio; the
    # first connection's path imports neither dataclasses nor threading
    # (their cost would be most of that connection's).
    assert json.loads(p.stdout) == {
        "ok": True,
        "ctypes": True,
        "errors": True,
        "asyncio": False,
        "dataclasses": False,
        "threading": False,
        "ForkedError": "hev2._errors",
        "in_dir": True,
    }


def test_a_won_connection_gives_its_out_parameters_back_and_others_do_not(monkeypatch):
    # hev2_connect_wait's out-parameters are reused only when a connection
    # left them as it found them (handle 0, fd -1): after a win. A refused
    # one (its handle adopted, then released) and a slow one (driven in
    # slices on its handle) keep theirs, so a later call never starts with
    # another's handle or fd in them.
    monkeypatch.setattr(_handle, "_spare_outs", [])
    with listener("127.0.0.1") as port:
        hev2.create_connection(("127.0.0.1", port)).close()
        assert len(_handle._spare_outs) == 1
        outs = _handle._spare_outs[0]
        for _ in range(3):
            hev2.create_connection(("127.0.0.1", port)).close()
        assert _handle._spare_outs == [outs]  # the same set, call after call
        assert (outs.conn.value, outs.fd.value) == (0, -1)
    with refusing("127.0.0.1") as port:
        with pytest.raises(ConnectionRefusedError):
            hev2.create_connection(("127.0.0.1", port))
    assert _handle._spare_outs == []  # the refused call took the set and kept it
    with blackhole("127.0.0.1") as port:
        with pytest.raises(TimeoutError):
            hev2.create_connection(("127.0.0.1", port), timeout=0.2)
    assert _handle._spare_outs == []


def test_connections_in_flight_at_once_each_take_their_own_out_parameters(monkeypatch):
    # Each thread's hev2_connect_wait writes into a set no other call holds:
    # a set is taken from the spares (or made) and given back after a win.
    import threading

    monkeypatch.setattr(_handle, "_spare_outs", [])
    taken = []
    real_take = _handle.take_out_parameters
    both_taken = threading.Barrier(2)

    def take():
        outs = real_take()
        taken.append(outs)
        both_taken.wait(timeout=5)  # neither gives its set back before the other took one
        return outs

    monkeypatch.setattr(_connect, "take_out_parameters", take)
    with listener("127.0.0.1") as port:
        threads = [threading.Thread(target=lambda: hev2.create_connection(("127.0.0.1", port)).close()) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
    assert len(taken) == 2 and taken[0] is not taken[1]
    assert sorted(map(id, _handle._spare_outs)) == sorted(map(id, taken))
