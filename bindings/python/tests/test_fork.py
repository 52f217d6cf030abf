"""fork after the library was loaded: a clear error in the child, never a
hang (the Go runtime does not survive fork; the library's C shims refuse
with HEV2_EFORKED before entering Go). The scenarios run in a child process
with a timeout, so a hang fails the test instead of freezing it."""

from __future__ import annotations

import json
import subprocess

from conftest import child_env

FORK_CHILD = """
import asyncio, json, multiprocessing, os, time, hev2, hev2.aio
from loopback import listener


def in_child(port, use_asyncio):
    try:
        if use_asyncio:
            asyncio.run(hev2.aio.open_connection("127.0.0.1", port))
        else:
            hev2.create_connection(("127.0.0.1", port)).close()
        return "connected"
    except hev2.ForkedError as e:
        return "ForkedError: " + str(e)
    except BaseException as e:
        return f"{type(e).__name__}: {e}"


def with_os_fork(port, use_asyncio):
    r, w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, in_child(port, use_asyncio).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        message = f.read()
    os.waitpid(pid, 0)
    return [message, time.monotonic() - start]


def with_pool(method, port):
    start = time.monotonic()
    with multiprocessing.get_context(method).Pool(1) as pool:
        return [pool.apply_async(in_child, (port, False)).get(timeout=30), time.monotonic() - start]


def main():
    out = {}
    with listener("127.0.0.1") as port:
        hev2.create_connection(("127.0.0.1", port)).close()  # the parent uses the library
        out["os.fork"] = with_os_fork(port, False)
        out["os.fork asyncio"] = with_os_fork(port, True)
        out["multiprocessing fork"] = with_pool("fork", port)
        # spawn starts a fresh interpreter that loads the library itself: fine.
        out["multiprocessing spawn"] = with_pool("spawn", port)
        hev2.create_connection(("127.0.0.1", port)).close()  # the parent is unaffected
        out["parent after"] = ["connected", 0]
    print(json.dumps(out))


# spawn children import this file as a module: only the parent runs main().
if __name__ == "__main__":
    main()
"""


def test_fork_children_get_a_clear_error_and_never_hang(tmp_path):
    script = tmp_path / "fork_child.py"
    script.write_text(FORK_CHILD)
    p = subprocess.run(["/usr/bin/python3", str(script)], env=child_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for case in ("os.fork", "os.fork asyncio", "multiprocessing fork"):
        message, took = out[case]
        assert message.startswith("ForkedError: "), (case, message)
        assert "fork" in message and "spawn" in message  # says what happened and what to do
        assert took < 10, (case, took)  # answered, not hung
    assert out["multiprocessing spawn"][0] == "connected"
    assert out["parent after"][0] == "connected"
