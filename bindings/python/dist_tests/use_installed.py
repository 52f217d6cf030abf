"""Run by the interpreter a wheel or an sdist was installed for, from /,
with HEV2_LIBRARY unset (`make test-dist-python`):

    use_installed.py --site DIR --version V --checkout DIR [--machine M] [--main subprocess|runpy]

The package and the libhev2.so it loads must be the ones installed under
--site (no checkout on any path), of version V, on machine M; a connection
to a loopback listener is made and accepted, and `python -m hev2 127.0.0.1
PORT` prints the race (exit 0) and a refused port's one line (exit 1). The
module is run as a child `python -m hev2` (subprocess), or in this process
through runpy as `python -m` runs it (runpy: under qemu, where a child
would need binfmt_misc).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import re
import runpy
import socket
import subprocess
import sys


def fail(message: str) -> None:
    sys.exit(f"use_installed: {message}")


def under(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return path == directory or path.startswith(directory + os.sep)


def run_main(how: str, args: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `python -m hev2 ARGS`."""
    if how == "subprocess":
        done = subprocess.run([sys.executable, "-m", "hev2", *args], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["hev2", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_module("hev2", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def check_main(how: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        code, out, err = run_main(how, ["127.0.0.1", str(port)])
    lines = out.splitlines()
    if code != 0 or not lines or lines[0] != f"hev2 127.0.0.1 port {port}":
        fail(f"python -m hev2 127.0.0.1 {port}: exit {code}\n{out}{err}")
    for pattern in (
        rf" +[0-9.]+ ms  attempt-started +#0 127\.0\.0\.1 port {port}",
        rf" +[0-9.]+ ms  attempt-won +#0 127\.0\.0\.1 port {port}",
        r"report: ipv4 won \(given-addresses\) in [0-9.]+ ms; .*attempts #0 connected [0-9.]+ ms",
        rf"connected to 127\.0\.0\.1 port {port} \(ipv4\) in [0-9.]+ ms",
    ):
        if not any(re.fullmatch(pattern, line) for line in lines):
            fail(f"python -m hev2: no line matching {pattern!r} in:\n{out}")
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))  # bound, not listening: connect is refused
        port = refusing.getsockname()[1]
        code, out, err = run_main(how, ["127.0.0.1", str(port)])
    want = f"python -m hev2: cannot connect to 127.0.0.1 port {port}: connect 127.0.0.1:{port}: connection refused\n"
    if code != 1 or err != want:
        fail(f"python -m hev2 to a refusing port: exit {code}, stderr {err!r}, want 1 and {want!r}")
    code, out, err = run_main(how, ["127.0.0.1"])
    if code != 2 or "usage: python -m hev2 " not in err:
        fail(f"python -m hev2 without a port: exit {code}, stderr {err!r}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--site", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--checkout", required=True)
    p.add_argument("--machine", default="x86_64")
    p.add_argument("--main", choices=("subprocess", "runpy"), default="subprocess")
    args = p.parse_args()

    if "HEV2_LIBRARY" in os.environ:
        fail("HEV2_LIBRARY is set")
    # The interpreter's own library may lie under the checkout (the arm64
    # root in build/); nothing else on the path may.
    on_path = [e for e in sys.path if e and under(e, args.checkout) and not under(e, sys.base_prefix)]
    if on_path or under(os.getcwd(), args.checkout):
        fail(f"the checkout is on the path: {on_path or os.getcwd()}")
    if platform.machine() != args.machine:
        fail(f"platform.machine() is {platform.machine()}, want {args.machine}")

    import hev2

    if not under(hev2.__file__ or "", args.site):
        fail(f"imported {hev2.__file__}, not the package installed under {args.site}")
    if hev2.__version__ != args.version:
        fail(f"hev2.__version__ is {hev2.__version__}, want {args.version}")
    path = hev2.library_path()
    if not under(path, args.site) or os.path.basename(path) != "libhev2.so":
        fail(f"loaded {path}, not the libhev2.so installed under {args.site}")
    if hev2.library_version() != args.version:
        fail(f"the library is {hev2.library_version()}, want {args.version}")

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        with hev2.create_connection(("127.0.0.1", port), timeout=30) as sock:
            accepted, peer = listener.accept()
            with accepted:
                if sock.getpeername() != ("127.0.0.1", port) or peer != sock.getsockname():
                    fail(f"connected {sock.getsockname()} -> {sock.getpeername()}, accepted from {peer}")
                sock.sendall(b"ping")
                if accepted.recv(4) != b"ping":
                    fail("the bytes sent did not arrive")

    check_main(args.main)
    print(
        f"{platform.machine()}: hev2 {hev2.__version__} imported from {os.path.dirname(hev2.__file__ or '')}, "
        f"libhev2 {hev2.library_version()}, Python {platform.python_version()}: connected; "
        f"python -m hev2 ({args.main}) exit 0, 1 and 2 as documented"
    )


if __name__ == "__main__":
    main()
