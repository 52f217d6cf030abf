"""A script that loads hev2 and connects once, beside the same script with
Python's own socket, as whole fresh processes (make bench-python-fresh):

    hev2:   import hev2;   hev2.create_connection(("127.0.0.1", port))
    socket: import socket; socket.create_connection(("127.0.0.1", port))

BENCH_PAIRS pairs (30 by default, at least 20), the order alternating from
pair to pair. Each process's wall time is taken by this parent with
time.monotonic() around posix_spawn and waitpid; the row is the median of
the per-pair differences (goal: at most 15 ms). Each child also stamps the
same clock (CLOCK_MONOTONIC) after its interpreter started, after the import
and after the connect, so the parent splits the whole into interpreter
start, import, first connect and exit; and reads its VmRSS after the import
and its VmRSS and VmHWM after the connect (the memory rows).

After each pair a third process makes the hev2 side's first connect in
steps, to show where its time goes: import socket, import hev2 (the
binding's import), import ctypes, ctypes.CDLL (dlopen), a first call into Go
that does nothing of hev2's (hev2_set_max_handles(its default): the Go
runtime's start and the packages' initialisation), hev2_init, hev2.api()
(the binding's own preparation: its ABI structs and prototypes), the first
create_connection, then a second one for reference.

The listener is this process's, never accepted from while a child runs
(the handshake needs no accept; the queue is emptied between pairs). The
children compile their bytecode once, into a temporary
PYTHONPYCACHEPREFIX, before anything is measured: an installed package has
its .pyc files, and the tree is left untouched.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
import time

import rows

PAIRS = int(os.environ.get("BENCH_PAIRS", "30"))
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include", "hev2.h")

STAMP = "t.append(time.monotonic())\n"
MEMORY = """def memory():
    f = open("/proc/self/status")
    v = {l.split(":")[0]: l.split()[1] for l in f if l.startswith(("VmRSS:", "VmHWM:"))}
    f.close()
    return v
"""
# One line out: the three stamps, VmRSS after the import, VmRSS and VmHWM
# after the connect (KiB).
SCRIPT = (
    "import time\nt = [time.monotonic()]\n@LOAD@\n" + STAMP + MEMORY + "m = memory()\n" + STAMP + "s = @CONNECT@\n" + STAMP
    + "s.close()\nn = memory()\n"
    + 'print(*t, m["VmRSS"], n["VmRSS"], n["VmHWM"])\n'
)
SIDES = {
    "hev2": SCRIPT.replace("@LOAD@", "import hev2").replace("@CONNECT@", 'hev2.create_connection(("127.0.0.1", @PORT@))'),
    "socket": SCRIPT.replace("@LOAD@", "import socket").replace(
        "@CONNECT@", 'socket.create_connection(("127.0.0.1", @PORT@))'
    ),
}
STEPS = [
    ("import socket", "import socket"),
    ("import hev2 (the binding's import)", "import hev2"),
    ("import ctypes", "import ctypes"),
    ("ctypes.CDLL (dlopen)", 'lib = ctypes.CDLL(os.environ["HEV2_LIBRARY"], use_errno=True)'),
    ("first call into Go (runtime start, package init)", "lib.hev2_set_max_handles(@MAX_HANDLES@)"),
    ("hev2_init", "lib.hev2_init()"),
    ("hev2.api() (the binding's own preparation)", 'getattr(hev2, "api", lambda: None)()'),
    ("first hev2.create_connection", 'hev2.create_connection(("127.0.0.1", @PORT@)).close()'),
    ("second hev2.create_connection", 'hev2.create_connection(("127.0.0.1", @PORT@)).close()'),
]
SPLIT = "import os, time\nt = [time.monotonic()]\n" + "".join(code + "\n" + STAMP for _, code in STEPS) + "print(*t)\n"


def default_max_handles() -> int:
    with open(HEADER) as f:
        m = re.search(r"^#define HEV2_DEFAULT_MAX_HANDLES (\d+)", f.read(), re.M)
    if not m:
        raise SystemExit(f"no HEV2_DEFAULT_MAX_HANDLES in {HEADER}")
    return int(m.group(1))


def spawn(code: str, env: dict[str, str]) -> tuple[float, float, list[float]]:
    """Runs python -c code; its spawn time, the time waitpid returned, and
    the numbers of its one line."""
    r, w = os.pipe()
    argv = [sys.executable, "-c", code]
    t0 = time.monotonic()
    pid = os.posix_spawn(sys.executable, argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)])
    _, status = os.waitpid(pid, 0)
    t1 = time.monotonic()
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    if status != 0:
        raise SystemExit(f"a child failed (status {status}); its code:\n{code}")
    return t0, t1, [float(x) for x in out.split()]


def drain(listener: socket.socket) -> None:
    while True:
        try:
            listener.accept()[0].close()
        except BlockingIOError:
            return


def ms(values: list[float]) -> str:
    med, lo, hi = rows.spread(values)
    return f"{med:8.2f} [{lo:.2f} .. {hi:.2f}]"


def main() -> None:
    if PAIRS < 20:
        raise SystemExit(f"BENCH_PAIRS={PAIRS}: at least 20 pairs")
    if not os.environ.get("HEV2_LIBRARY"):
        raise SystemExit("set HEV2_LIBRARY to the libhev2.so to measure (make bench-python-fresh does)")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    pycache = tempfile.mkdtemp(prefix="hev2-bench-fresh-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    codes = {side: code.replace("@PORT@", str(port)) for side, code in SIDES.items()}
    split = SPLIT.replace("@PORT@", str(port)).replace("@MAX_HANDLES@", str(default_max_handles()))
    try:
        for code in [*codes.values(), split]:  # unmeasured: writes the .pyc files, fills the page cache
            spawn(code, env)
        drain(listener)
        stages = ["interpreter start", "import", "reading VmRSS", "first connect", "exit", "whole"]
        by: dict[str, dict[str, list[float]]] = {side: {s: [] for s in stages} for side in codes}
        memory: dict[str, dict[str, list[float]]] = {side: {"import": [], "rss": [], "hwm": []} for side in codes}
        steps: list[list[float]] = [[] for _ in STEPS]
        starts: list[float] = []
        exits: list[float] = []
        for i in range(PAIRS):
            for side in list(codes) if i % 2 == 0 else reversed(list(codes)):
                t0, t1, (a, b, m, c, rss_import, rss, hwm) = spawn(codes[side], env)
                for stage, value in zip(stages, [a - t0, b - a, m - b, c - m, t1 - c, t1 - t0]):
                    by[side][stage].append(value * 1e3)
                for key, kib in zip(["import", "rss", "hwm"], [rss_import, rss, hwm]):
                    memory[side][key].append(kib / 1024)
            t0, t1, t = spawn(split, env)
            starts.append((t[0] - t0) * 1e3)
            exits.append((t1 - t[-1]) * 1e3)
            for j in range(len(STEPS)):
                steps[j].append((t[j + 1] - t[j]) * 1e3)
            drain(listener)
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
        listener.close()
    print(
        f"python {sys.version.split()[0]}: fresh processes, {PAIRS} pairs alternated; ms from the parent's spawn, "
        f"split by the child's stamps (exit: its last stamp to the parent's waitpid); median [min .. max]; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"  {'':20} {'hev2':>26} {'socket':>26} {'hev2 - socket, per pair':>30}")
    for stage in stages:
        diff = [h - s for h, s in zip(by["hev2"][stage], by["socket"][stage])]
        print(f"  {stage:20} {ms(by['hev2'][stage]):>26} {ms(by['socket'][stage]):>26} {ms(diff):>30}")
    rows.row(
        "python script: import hev2 + create_connection - socket's, whole process",
        [h - s for h, s in zip(by["hev2"]["whole"], by["socket"]["whole"])],
        "ms",
        15,
        "fresh processes, per-pair differences",
    )
    for key, label in [("rss", "VmRSS"), ("hwm", "VmHWM")]:
        h, s = memory["hev2"][key], memory["socket"][key]
        rows.row(
            f"python memory {label}: import hev2 + one connect - socket's",
            [a - b for a, b in zip(h, s)],
            "MB",
            detail=f"hev2 {rows.spread(h)[0]:.1f} MB, socket {rows.spread(s)[0]:.1f} MB",
        )
    h, s = memory["hev2"]["import"], memory["socket"]["import"]
    print(f"  VmRSS after the import alone: hev2 {rows.spread(h)[0]:.1f} MB, socket {rows.spread(s)[0]:.1f} MB")
    print(f"where the hev2 side's time goes: one process per pair doing each step in turn, ms median [min .. max]")
    print(f"  {'interpreter start (spawn to first line)':52} {ms(starts)}")
    for (label, _), values in zip(STEPS, steps):
        print(f"  {label:52} {ms(values)}")
    print(f"  {'exit (last line to the parent wait)':52} {ms(exits)}")


if __name__ == "__main__":
    main()
