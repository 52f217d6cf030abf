"""python -m hev2 HOST PORT (hev2/__main__.py): the race printed from its
report, the exit statuses and the usage errors. The installed package's
`python -m hev2` is run by `make test-dist-python` too."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import hev2.__main__ as cli
from conftest import child_env
from loopback import listener, one_port, refusing
from testdns import DNSServer

LINE = re.compile(r"^ +([0-9]+\.[0-9]{3}) ms  (\S+) *(.*)$")


def timeline(out: str) -> list[tuple[float, str, str]]:
    return [(float(m[1]), m[2], m[3]) for m in map(LINE.match, out.splitlines()) if m]


def test_a_name_through_the_builtin_resolver(capsys):
    # ::1 refuses, 127.0.0.1 accepts: both lookups, both attempts, IPv4 wins.
    zone = {"both.test": {"A": ["127.0.0.1"], "AAAA": {"addrs": ["::1"], "hold_until": {"type": "A"}}}}
    ports = one_port(lambda p: refusing("::1", port=p), lambda p: listener("127.0.0.1", port=p))
    with DNSServer(zone) as dns, ports as port:
        assert cli.main(["--nameserver", dns.address, "both.test", str(port)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"hev2 both.test port {port}"
    events = timeline(out)
    assert [t for t, _, _ in events] == sorted(t for t, _, _ in events)
    kinds = [(kind, detail) for _, kind, detail in events]
    for expected in [
        ("lookup-started", "AAAA"),
        ("lookup-started", "A"),
        ("lookup-answered", "AAAA: 1 address"),
        ("lookup-answered", "A: 1 address"),
        ("attempt-started", f"#0 [::1] port {port}"),
        ("attempt-failed", f"#0 [::1] port {port} (ECONNREFUSED)"),
        ("attempt-started", f"#1 127.0.0.1 port {port}"),
        ("attempt-won", f"#1 127.0.0.1 port {port}"),
    ]:
        assert expected in kinds, (expected, out)
    assert kinds.index(("attempt-started", f"#0 [::1] port {port}")) < kinds.index(
        ("attempt-failed", f"#0 [::1] port {port} (ECONNREFUSED)")
    )
    assert kinds[-1] == ("done", "")
    assert lines[-2].startswith("report: ipv4 won (other-family-failed) in ")
    assert "attempts #0 failed ECONNREFUSED" in lines[-2] and ", #1 connected " in lines[-2]
    assert re.fullmatch(rf"connected to 127\.0\.0\.1 port {port} \(ipv4\) in [0-9.]+ ms", lines[-1])


def test_refused_is_exit_1_with_one_line(capsys):
    with refusing("127.0.0.1") as port:
        assert cli.main(["127.0.0.1", str(port)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"python -m hev2: cannot connect to 127.0.0.1 port {port}: connect 127.0.0.1:{port}: connection refused\n"
    assert f"attempt-failed    #0 127.0.0.1 port {port} (ECONNREFUSED)" in captured.out
    assert "report: nothing connected in " in captured.out


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: HOST, PORT"),
        (["127.0.0.1", "0"], "invalid port '0'"),
        (["127.0.0.1", "http"], "invalid port 'http'"),
        (["--resolve", "x.test", "x.test", "80"], "invalid --resolve 'x.test'"),
        (["--connect-timeout", "-1", "127.0.0.1", "80"], "invalid timeout '-1'"),
    ],
)
def test_usage_errors_exit_2(capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m hev2 ") and message in err


def test_as_a_module_with_help_and_version():
    # The real `python -m hev2`, as a user runs it.
    run = [sys.executable, "-m", "hev2"]
    helped = subprocess.run([*run, "--help"], env=child_env(), capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "usage: python -m hev2 " in helped.stdout and "Exit status" in helped.stdout
    version = subprocess.run([*run, "--version"], env=child_env(), capture_output=True, text=True, timeout=60)
    assert version.stdout == f"python -m hev2 {cli.hev2.__version__}\n"
    with listener("127.0.0.1") as port:
        done = subprocess.run([*run, "127.0.0.1", str(port)], env=child_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith(f"connected to 127.0.0.1 port {port} (ipv4) in ")
