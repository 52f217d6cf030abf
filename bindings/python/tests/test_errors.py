"""Every exception class create_connection raises, each from a real cause:
refused and blackholed loopback ports, a real DNS server answering NXDOMAIN
or staying silent, and getaddrinfo really failing with EAI_SYSTEM."""

from __future__ import annotations

import errno
import socket

import pytest

import hev2
from isolated import run_json
from loopback import blackhole, one_port, refusing




def test_refused_is_connection_refused_error():
    with refusing("127.0.0.1") as port:
        with pytest.raises(ConnectionRefusedError) as info:
            hev2.create_connection(("127.0.0.1", port))
    e = info.value
    assert e.errno == errno.ECONNREFUSED and e.strerror == "Connection refused"
    assert e.hev2_failure.errno_name == "ECONNREFUSED"
    assert any("127.0.0.1" in n for n in e.__notes__)


def test_all_errors_gives_every_attempt():
    # refusing on ::1 and 127.0.0.1, same port
    with one_port(lambda p: refusing("::1", p), lambda p: refusing("127.0.0.1", p)) as port:
        hosts = {"refusing.test": ["::1", "127.0.0.1"]}
        with pytest.raises(ConnectionRefusedError):
            hev2.create_connection(("refusing.test", port), hosts=hosts)
        with pytest.raises(ExceptionGroup) as info:
            hev2.create_connection(("refusing.test", port), hosts=hosts, all_errors=True)
    group = info.value
    assert [type(e) for e in group.exceptions] == [ConnectionRefusedError, ConnectionRefusedError]
    assert [e.errno for e in group.exceptions] == [errno.ECONNREFUSED] * 2
    shown = " ".join(n for e in group.exceptions for n in e.__notes__)
    assert "[::1]" in shown and "127.0.0.1" in shown
    # except* works on it, as for socket.create_connection(all_errors=True)
    try:
        raise group
    except* ConnectionRefusedError as caught:
        assert len(caught.exceptions) == 2


def test_connect_timeout_is_timeout_error():
    with blackhole("127.0.0.1") as port:
        with pytest.raises(TimeoutError) as info:
            hev2.create_connection(("127.0.0.1", port), connect_timeout=0.2)
    e = info.value
    assert isinstance(e, socket.timeout) and isinstance(e, OSError)
    assert (e.errno, e.timeout_kind) == (errno.ETIMEDOUT, "connect_timeout")
    assert e.hev2_failure.errno_name == "ETIMEDOUT"


def test_socket_timeout_bounds_the_connection_like_socket_does():
    with blackhole("127.0.0.1") as port:
        with pytest.raises(TimeoutError) as info:
            hev2.create_connection(("127.0.0.1", port), 0.2)
    assert info.value.timeout_kind == "connect_timeout"


def test_open_timeout_and_all_errors_with_a_timeout():
    with blackhole("::1") as port:
        with pytest.raises(TimeoutError) as info:
            hev2.create_connection(("::1", port), open_timeout=0.2)
        assert info.value.timeout_kind == "open_timeout"
        with pytest.raises(ExceptionGroup) as group:
            hev2.create_connection(("::1", port), open_timeout=0.2, all_errors=True)
    assert all(isinstance(e, TimeoutError) for e in group.value.exceptions)


RESOLVER_CHILD = """
import json, socket, time, hev2
from loopback import listener
from testdns import DNSServer
out = {}
never = {"never": True}
zone = {"v4only.test": {"A": ["127.0.0.1"]}, "noaaaa.test": {"A": ["127.0.0.1"], "AAAA": never},
        "dead.test": {"A": never, "AAAA": never}}
with listener("127.0.0.1") as port, DNSServer(zone, listen="127.0.0.1:53"):
    def attempt(name, **kw):
        start = time.monotonic()
        try:
            hev2.create_connection((name, port), resolver="system", **kw).close()
            r = {"ok": True}
        except OSError as e:
            r = {"type": type(e).__name__, "errno": e.errno, "gai": isinstance(e, socket.gaierror),
                 "timeout_kind": getattr(e, "timeout_kind", None)}
        r["elapsed"] = time.monotonic() - start
        return r
    out["nxdomain"] = attempt("nx.test")
    out["silent_aaaa"] = attempt("noaaaa.test")
    out["resolv_timeout"] = attempt("dead.test", resolv_timeout=0.3)
print(json.dumps(out))
"""


def test_resolution_errors_through_the_system_resolver(tmp_path):
    # glibc would wait 5 s x 2 for a silent server: the timeouts below must
    # come from hev2, not from the resolver giving up.
    out = run_json(tmp_path, RESOLVER_CHILD, resolv="nameserver 127.0.0.1\noptions timeout:5 attempts:2\n")
    assert out["nxdomain"]["type"] == "gaierror" and out["nxdomain"]["errno"] == socket.EAI_NONAME
    # AAAA never answered: A's address is used after the resolution delay,
    # not after glibc's 10 s (which socket.create_connection would wait).
    assert out["silent_aaaa"]["ok"] and out["silent_aaaa"]["elapsed"] < 2
    assert out["resolv_timeout"]["type"] == "TimeoutError"
    assert out["resolv_timeout"]["timeout_kind"] == "resolv_timeout"
    assert 0.25 < out["resolv_timeout"]["elapsed"] < 3


EAI_SYSTEM_CHILD = """
import json, os, resource, socket, hev2
# Start the library's machinery first (runtime, poller, resolver set-up):
# what is measured below is getaddrinfo itself running out of fds.
try:
    hev2.create_connection(("warm-up.test", 80), resolver="system")
except OSError:
    pass
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    assert e.errno == 24
try:
    hev2.create_connection(("eai-system.test", 80), resolver="system")
    r = {"ok": True}
except OSError as e:
    f = e.hev2_failure
    r = {"type": type(e).__name__, "errno": e.errno, "eai": getattr(e, "eai", None), "gai": isinstance(e, socket.gaierror),
         "failure_eai": f.eai, "errno_name": f.errno_name, "eai_name": f.eai_name,
         "lookups": [(l.eai, l.errno) for l in f.lookups]}
for fd in held:
    os.close(fd)
print(json.dumps(r))
"""


def test_eai_system_raises_oserror_with_the_resolver_threads_errno(tmp_path):
    r = run_json(tmp_path, EAI_SYSTEM_CHILD)
    eai_system = getattr(socket, "EAI_SYSTEM", -11)
    assert r["type"] == "OSError" and not r["gai"]
    assert r["errno"] == errno.EMFILE, r  # captured on the getaddrinfo thread
    assert r["eai"] == eai_system and r["failure_eai"] == eai_system
    assert (r["errno_name"], r["eai_name"]) == ("EMFILE", "EAI_SYSTEM")
    assert [errno.EMFILE, errno.EMFILE] == [e for _, e in r["lookups"]]


def test_timeout_maps_to_socket_per_attempt_bound_in_serial_mode():
    """timeout= bounds each attempt in serial mode, exactly as
    socket.create_connection bounds each connect(); in the race it bounds the
    wait after the last attempt started, so the call is never longer."""
    import time

    # ::1 and 127.0.0.1 blackholed on the same port
    with one_port(lambda p: blackhole("::1", p), lambda p: blackhole("127.0.0.1", p)) as port:
        hosts = {"holes.test": ["::1", "127.0.0.1"]}
        took = {}
        attempts = {}
        for fast_fallback in (False, True):
            start = time.monotonic()
            with pytest.raises(ExceptionGroup) as info:
                hev2.create_connection(
                    ("holes.test", port),
                    0.3,
                    hosts=hosts,
                    fast_fallback=fast_fallback,
                    all_errors=True,
                    connection_attempt_delay=0.05,
                    report=True,
                )
            took[fast_fallback] = time.monotonic() - start
            kinds = [e.timeout_kind for e in info.value.exceptions]
            assert kinds == ["connect_timeout", "connect_timeout"]  # one per attempt
            attempts[fast_fallback] = info.value.hev2_report.attempts  # type: ignore[attr-defined]
    # Lower bounds only: a loaded machine makes every call longer, never
    # shorter. Serial: 2 attempts x 0.3 s, one after the other.
    assert took[False] >= 0.55
    assert attempts[False][1].start >= attempts[False][0].end
    # The race: the second attempt starts 0.05 s in, while the first still
    # runs (the library's own account, not a wall-clock comparison).
    assert took[True] >= 0.33  # 0.05 s attempt delay + 0.3 s
    assert attempts[True][1].start < attempts[True][0].end


def test_bind_failure_is_oserror_with_its_errno():
    from loopback import listener

    with listener("127.0.0.1") as port, listener("127.0.0.1") as taken:
        with pytest.raises(OSError) as info:
            hev2.create_connection(("127.0.0.1", port), source_address=("127.0.0.1", taken))
    assert info.value.errno == errno.EADDRINUSE
    assert "bind" in info.value.__notes__[0]


UNREACHABLE_CHILD = """
import errno, json, hev2
# A namespace with only a loopback: no route anywhere, nothing leaves it.
out = {}
for addr in ("198.18.0.1", "2001:db8::1"):
    try:
        hev2.create_connection((addr, 80))
        out[addr] = "connected?"
    except OSError as e:
        out[addr] = [type(e).__name__, errno.errorcode.get(e.errno, str(e.errno))]
print(json.dumps(out))
"""


def test_unreachable_network_is_oserror_with_its_errno(tmp_path):
    out = run_json(tmp_path, UNREACHABLE_CHILD)
    assert out["198.18.0.1"] == ["OSError", "ENETUNREACH"]
    assert out["2001:db8::1"] == ["OSError", "ENETUNREACH"]


FIRST_CONNECT_WITHOUT_FDS_CHILD = """
import json, os, resource, hev2
# No warm-up: the first connection of the process is made with (almost)
# no fd free. Go's runtime used to create its poller at that moment, fail,
# and abort the whole host process; the library now brings it up at load.
free = int(os.environ["HEV2_TEST_FREE_FDS"])
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
for _ in range(free):
    os.close(held.pop())
try:
    hev2.create_connection(("no-fds.test", 80), resolver="system")
    r = {"ok": True}
except Exception as e:
    r = {"type": type(e).__name__, "errno": getattr(e, "errno", None), "message": str(e)}
for fd in held:
    os.close(fd)
print(json.dumps(r))
"""


@pytest.mark.parametrize("free", [0, 1, 2])
def test_first_connect_with_no_fd_free_raises_instead_of_aborting(tmp_path, monkeypatch, free):
    monkeypatch.setenv("HEV2_TEST_FREE_FDS", str(free))
    r = run_json(tmp_path, FIRST_CONNECT_WITHOUT_FDS_CHILD)
    # An exception, not an abort: with no fd at all the library cannot even
    # be loaded (LibraryError); with one or two, the library refuses, and
    # the OSError carries the real cause (EMFILE), not a stale errno.
    assert not r.get("ok") and r["type"] in ("LibraryError", "OSError"), r
    if r["type"] == "OSError":
        assert r["errno"] == errno.EMFILE, r
        assert "hev2_connect_wait: cannot make the library's permanent fds" in r["message"], r
        assert "Too many open files" in r["message"], r


def test_last_error_is_the_calling_threads_detail():
    import ctypes
    import threading

    from hev2 import _abi

    lib = _abi.api()
    assert lib.hev2_wait(0, 0) == _abi.EHANDLE
    assert _abi.last_error() == ("hev2_wait: handle 0 is never valid", 0)
    seen = []

    def other() -> None:
        seen.append(lib.hev2_set_max_handles(0))
        seen.append(_abi.last_error())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [_abi.EINVAL, ("hev2_set_max_handles: max 0 out of range [1, 1000000]", 0)]
    assert _abi.last_error() == ("hev2_wait: handle 0 is never valid", 0)  # this thread's, untouched
    s = _abi.StatsInfo()
    s.size = ctypes.sizeof(s)
    assert lib.hev2_stats(ctypes.byref(s)) == _abi.OK
    assert _abi.last_error()[0] == "hev2_wait: handle 0 is never valid"  # success leaves it as it was
