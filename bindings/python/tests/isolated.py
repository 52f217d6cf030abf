"""Running a child Python in its own network and mount namespaces.

The system resolver (getaddrinfo) must never reach this machine's real
name servers. The child therefore gets a new network namespace (only its
own loopback, nothing can leave) and a private mount namespace in which
/etc/resolv.conf and /etc/hosts are the test's own files: getaddrinfo
inside talks to a test DNS server on the child's 127.0.0.1:53, the real
files are untouched. Needs root (the tests run as root, as in CI).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from conftest import child_env

PYTHON = "/usr/bin/python3"


def run_isolated(
    tmp: Path, script: str, *, hosts: str = "", resolv: str = "nameserver 127.0.0.1\n", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    (tmp / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n" + hosts)
    (tmp / "resolv.conf").write_text(resolv)
    (tmp / "child.py").write_text(textwrap.dedent(script))
    setup = (
        f"mount --bind {tmp / 'hosts'} /etc/hosts && "
        f"mount --bind {tmp / 'resolv.conf'} /etc/resolv.conf && "
        f"ip link set lo up && exec {PYTHON} {tmp / 'child.py'}"
    )
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

