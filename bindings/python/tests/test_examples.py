"""The examples users copy from run, and do what they say."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, child_env

EXAMPLES = REPO / "examples" / "python"


@pytest.mark.parametrize(
    "name, expect",
    [
        ("blocking.py", ["hev2:   connected to 127.0.0.1", "refused: ConnectionRefusedError", "which: open_timeout", "ExceptionGroup"]),
        ("asyncio_streams.py", ["connected to 127.0.0.1", "nothing is left open"]),
        ("install_urllib.py", ["urllib through hev2: b'hello over ::1\\n'", "after uninstall(): False"]),
        (
            "http_clients.py",
            ["requests: hello over ::1", "httpx: hello over ::1", "httpx async: hello over ::1", "aiohttp: hello over ::1"],
        ),
    ],
)
def test_example_runs(name, expect):
    env = child_env()
    env["PYTHONPATH"] += ":" + str(EXAMPLES)
    p = subprocess.run(["/usr/bin/python3", str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for text in expect:
        assert text in p.stdout, (text, p.stdout)
