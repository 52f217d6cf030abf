"""The scenario client command (shared contract): one JSON line on stdout,
exit 0/1/2, blocking and asyncio. The full scenario table runs in the test
bed (make test-python-scenarios); these are its loopback and resolver cases."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import HERE, child_env
from isolated import run_json
from loopback import blackhole, listener, refusing

CLIENTS = {"blocking": str(HERE / "client" / "hev2-client"), "asyncio": str(HERE / "client" / "hev2-client-asyncio")}


def client(kind, *args):
    p = subprocess.run([CLIENTS[kind], *map(str, args)], env=child_env(), capture_output=True, text=True, timeout=60)
    lines = p.stdout.splitlines()
    return p.returncode, (json.loads(lines[0]) if lines else None), p.stderr, len(lines)


@pytest.fixture(params=list(CLIENTS))
def kind(request):
    return request.param


def test_success(kind):
    with listener("::1") as port:
        code, out, err, nlines = client(kind, "--static", "c.test:::1", "c.test", port)
    assert code == 0 and nlines == 1, err
    assert out["ok"] is True and out["address"] == "::1" and out["family"] == "ipv6" and out["port"] == port
    assert isinstance(out["elapsed_ms"], float) and out["elapsed_ms"] >= 0


def test_refused(kind):
    with refusing("127.0.0.1") as port:
        code, out, err, _ = client(kind, "127.0.0.1", port)
    assert code == 1, err
    assert out["ok"] is False
    assert out["error"]["errno"] == "ECONNREFUSED" and out["error"]["eai"] == "" and out["error"]["timeout"] == ""
    assert "refused" in out["error"]["message"]


def test_timeouts(kind):
    with blackhole("127.0.0.1") as port:
        code, out, _, _ = client(kind, "--connect-timeout", 150, "127.0.0.1", port)
        assert code == 1 and out["error"]["errno"] == "ETIMEDOUT" and out["error"]["timeout"] == "connect_timeout"
        code, out, _, _ = client(kind, "--open-timeout", 150, "127.0.0.1", port)
        assert code == 1 and out["error"]["timeout"] == "open_timeout"


def test_fallback_and_family(kind):
    with blackhole("::1") as port, listener_on("127.0.0.1", port):
        code, out, _, _ = client(kind, "--static", "h.test:[::1],127.0.0.1", "h.test", port)
        assert code == 0 and out["family"] == "ipv4"
        code, out, _, _ = client(kind, "--family", "4", "--static", "h.test:[::1],127.0.0.1", "h.test", port)
        assert code == 0 and out["address"] == "127.0.0.1"


def listener_on(host, port):
    import socket
    from contextlib import contextmanager

    @contextmanager
    def cm():
        with socket.socket() as s:
            s.bind((host, port))
            s.listen(8)
            yield

    return cm()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["only-host"],
        ["--family", "5", "h", "1"],
        ["--resolver", "dns", "h", "1"],
        ["--open-timeout", "x", "h", "1"],
        ["--open-timeout", "1", "--resolv-timeout", "1", "h", "1"],
        ["h", "70000"],
        ["--static", "nocolon", "h", "1"],
        ["--connect-timeout", "-5", "h", "1"],
    ],
)
def test_usage_errors_exit_2(args):
    code, out, err, nlines = client("blocking", *args)
    assert code == 2 and nlines == 0 and err.startswith("hev2-client:"), (args, code, err)


CLIENT_IN_NETNS = """
import json, subprocess
from loopback import listener
from testdns import DNSServer
out = {}
with listener("127.0.0.1") as port, DNSServer({"v4.test": {"A": ["127.0.0.1"]}}, listen="127.0.0.1:53"):
    for kind, cmd in CLIENTS.items():
        for name in ("v4.test", "nx.test"):
            p = subprocess.run([cmd, "--resolver", "system", name, str(port)], capture_output=True, text=True)
            out[f"{kind} {name}"] = [p.returncode, json.loads(p.stdout)]
print(json.dumps(out))
"""


def test_names_through_the_system_resolver(tmp_path):
    out = run_json(tmp_path, f"CLIENTS = {CLIENTS!r}\n" + CLIENT_IN_NETNS)
    for kind in CLIENTS:
        code, ok = out[f"{kind} v4.test"]
        assert code == 0 and ok["address"] == "127.0.0.1"
        code, nx = out[f"{kind} nx.test"]
        assert code == 1 and nx["error"]["eai"] == "EAI_NONAME" and nx["error"]["errno"] == ""
