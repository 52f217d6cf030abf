"""Running a child Python in its own network and mount namespaces.

The system resolver (getaddrinfo) must never reach this machine's real
name servers, and what it answers must not depend on how this machine is
set up. The child therefore gets a new network namespace (only its own
loopback, nothing can leave) and a private mount namespace in which every
file glibc's resolver reads is the test's own: resolv.conf and hosts, and
nsswitch.conf (a desktop's "hosts: files mdns4_minimal [NOTFOUND=return]
dns" would put nss-mdns in front of DNS, with its own answers and errnos),
gai.conf (a local preference would reorder the addresses) and host.conf.
getaddrinfo inside talks to a test DNS server on the child's
127.0.0.1:53, the real files are untouched. Needs root (the tests run as
root, as in CI).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from conftest import child_env

PYTHON = "/usr/bin/python3"

# The name service switch of the child: hosts from the hosts file, then DNS
# (nothing else: no mdns, no systemd-resolved); the other databases from
# their files, as glibc does with no nsswitch.conf entry.
NSSWITCH = """\
passwd: files
group: files
shadow: files
hosts: files dns
networks: files
protocols: files
services: files
ethers: files
rpc: files
"""
# glibc's default address sorting (RFC 6724): an empty gai.conf.
GAI_CONF = ""
HOST_CONF = "multi on\n"


def run_isolated(
    tmp: Path, script: str, *, hosts: str = "", resolv: str = "nameserver 127.0.0.1\n", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    files = {
        "hosts": "127.0.0.1 localhost\n::1 localhost\n" + hosts,
        "resolv.conf": resolv,
        "nsswitch.conf": NSSWITCH,
        "gai.conf": GAI_CONF,
        "host.conf": HOST_CONF,
    }
    etc = tmp / "etc"
    etc.mkdir(exist_ok=True)
    mounts = []
    for name, text in files.items():
        (etc / name).write_text(text)
        # A bind mount needs its target; a file this host lacks is read by
        # nobody (gai.conf, host.conf: glibc's defaults are the files' own
        # above), but the first three must be there to be replaced.
        if name in ("hosts", "resolv.conf", "nsswitch.conf") or Path("/etc", name).exists():
            mounts.append(f"mount --bind {etc / name} /etc/{name} && ")
    (tmp / "child.py").write_text(textwrap.dedent(script))
    setup = "".join(mounts) + f"ip link set lo up && exec {PYTHON} {tmp / 'child.py'}"
    return subprocess.run(
        ["unshare", "--net", "--mount", "sh", "-c", setup],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_json(tmp: Path, script: str, **kw: Any) -> Any:
    """Runs script isolated; its last stdout line is JSON."""
    p = run_isolated(tmp, script, **kw)
    assert p.returncode == 0, f"child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return json.loads(p.stdout.strip().splitlines()[-1])

