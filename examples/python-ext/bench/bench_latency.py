"""Completion latency: from the library finishing a connect to the
interpreter running its completion, one loopback connect at a time.

Both ends are CLOCK_MONOTONIC (time.monotonic_ns in Python):
  finish      hev2ext's forms: taken in C, first thing in the library's
              completion callback (hev2_options.on_done, Connect.finished_ns).
              The packaged binding (bindings/python) has no callback of its
              own: bench_shim.so stands in for the C function it calls and
              stamps the equivalent moment, when the library hands over the
              decided race (hev2_connect_wait's return for
              hev2.create_connection; hev2_connect_len's return, or an
              on_done it adds, whichever is first, for hev2.aio).
  completion  the first Python statement that holds the socket: after
              wait() returns, in the done-callback, or after the await.
Also the whole connect, from the call that starts it to that statement.

Rows:
  hev2ext wait()        connect().wait() on the main thread: woken when the
                        job ran, it runs the pending call itself
                        (Py_MakePendingCalls)
  hev2ext pending call  the main thread runs Python (a loop) and the
                        pending call runs at its next check; on CPython
                        3.11 after the extension's nudge (README.md)
  hev2ext async fd      connect_async(route="fd"): loop.add_reader on the
                        handle's fd
  hev2ext async ts      connect_async(route="threadsafe"): the callback
                        takes the GIL, loop.call_soon_threadsafe
  hev2.create_connection, hev2.aio (connect + socket object, the part of
                        hev2.aio.create_connection before the transport)

Methods run in rounds, each round in its own shuffled (seeded) order, as
bindings/python/bench/bench_connect.py does. A listener in another process
accepts and closes. BENCH_ROUNDS, BENCH_PER_ROUND set the sizes. The
table's last lines are `row:` lines (bindings/python/bench/rows.py): per
form, the median of the per-round medians of finish -> completion, and
their spread over the rounds; reported, not judged.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import hev2
import hev2.aio
import hev2ext
from hev2 import _abi, _connect, _handle
from rows import row

HOST = "127.0.0.1"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "11"))
PER_ROUND = int(os.environ.get("BENCH_PER_ROUND", "200"))
# The pending call with the main thread running Python costs milliseconds
# on 3.11 (the nudge's grace and the GIL's switch interval): fewer of them.
PER_ROUND_NUDGED = max(1, PER_ROUND // 20)

ACCEPTOR = """
import socket
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(4096)
print(l.getsockname()[1], flush=True)
while True:
    c, _ = l.accept()
    c.close()
"""

ROW_PREFIX, ROW_SUFFIX = "python-ext ", ": finish->completion"

Sample = tuple[int, int]  # (finish -> completion, start -> completion), ns
Method = Callable[[int, int], list[Sample]]


def pending_wait(port: int, n: int) -> list[Sample]:
    out = []
    for _ in range(n):
        t0 = time.monotonic_ns()
        c = hev2ext.connect(HOST, port)
        s = c.wait()
        t1 = time.monotonic_ns()
        out.append((t1 - c.finished_ns, t1 - t0))
        s.close()
    return out


def pending_call(port: int, n: int) -> list[Sample]:
    out = []
    for _ in range(n):
        got: list[int] = []
        t0 = time.monotonic_ns()
        c = hev2ext.connect(HOST, port)
        c.add_done_callback(lambda _: got.append(time.monotonic_ns()))
        while not got:
            pass
        out.append((got[0] - c.finished_ns, got[0] - t0))
        c.wait().close()
    return out


def stamped(c: hev2ext.Connect) -> int:
    # The fd route's fd is readable just before the library's callback
    # runs: the loop can get there first, and the stamp follows.
    while not c.finished_ns:
        time.sleep(0)
    return c.finished_ns


def ext_async(route: str) -> Method:
    def run(port: int, n: int) -> list[Sample]:
        async def main() -> list[Sample]:
            out = []
            for _ in range(n):
                t0 = time.monotonic_ns()
                c = hev2ext.connect_async(HOST, port, route=route)
                s = await c
                t1 = time.monotonic_ns()
                out.append((t1 - stamped(c), t1 - t0))
                s.close()
            return out

        return asyncio.run(main())

    return run


class Shim:
    """bench_shim.so in place of the binding's two ctypes functions."""

    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)
        self.lib.shim_finish_ns.restype = ctypes.c_longlong
        lib: Any = _handle.api()
        wait = self.lib.shim_connect_wait
        wait.restype = ctypes.c_int  # no argtypes, as the binding's own (_handle.unchecked_connect_wait)
        _handle._unchecked_connect_wait = wait
        start = self.lib.shim_connect_len
        start.restype, start.argtypes = lib.hev2_connect_len.restype, lib.hev2_connect_len.argtypes
        lib.hev2_connect_len = start

    def finish_ns(self) -> int:
        return int(self.lib.shim_finish_ns())


def binding_blocking(shim: Shim) -> Method:
    def run(port: int, n: int) -> list[Sample]:
        out = []
        for _ in range(n):
            t0 = time.monotonic_ns()
            s = hev2.create_connection((HOST, port))
            t1 = time.monotonic_ns()
            out.append((t1 - shim.finish_ns(), t1 - t0))
            s.close()
        return out

    return run


def binding_aio(shim: Shim) -> Method:
    def run(port: int, n: int) -> list[Sample]:
        req, _, _ = hev2.aio._request(HOST, port, {})

        async def main() -> list[Sample]:
            out = []
            for _ in range(n):
                t0 = time.monotonic_ns()
                outcome = await hev2.aio.connect(req)
                s = _connect.socket_from(outcome)  # type: ignore[arg-type]
                t1 = time.monotonic_ns()
                out.append((t1 - shim.finish_ns(), t1 - t0))
                s.close()
            return out

        return asyncio.run(main())

    return run


def one_library() -> None:
    """hev2ext links libhev2.so.1, the binding dlopens build/libhev2.so: the
    same file, loaded once (else the stamps would come from two runtimes)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libhev2.so" in line}
    if len({os.path.realpath(p) for p in paths}) != 1:
        sys.exit(f"bench_latency: expected one libhev2 in the process, found {sorted(paths)}")


def main() -> None:
    shim_path = os.environ.get("BENCH_SHIM")
    if not shim_path:
        sys.exit("bench_latency: set BENCH_SHIM to bench_shim.so (make bench-extension-python does)")
    shim = Shim(shim_path)
    methods: dict[str, tuple[Method, int]] = {
        "hev2ext wait() (pending call)": (pending_wait, PER_ROUND),
        "hev2ext pending call, main runs Python": (pending_call, PER_ROUND_NUDGED),
        "hev2ext async, route fd": (ext_async("fd"), PER_ROUND),
        "hev2ext async, route threadsafe": (ext_async("threadsafe"), PER_ROUND),
        "hev2.create_connection": (binding_blocking(shim), PER_ROUND),
        "hev2.aio connect + socket": (binding_aio(shim), PER_ROUND),
    }
    assert all(len(ROW_PREFIX + name + ROW_SUFFIX) <= 74 for name in methods), "row names fit their column"
    acceptor = subprocess.Popen([sys.executable, "-c", ACCEPTOR], stdout=subprocess.PIPE, text=True)
    try:
        assert acceptor.stdout
        port = int(acceptor.stdout.readline())
        for run, _ in methods.values():  # warm-up: the library's first race, imports, caches
            run(port, 5)
        one_library()
        samples: dict[str, list[Sample]] = {name: [] for name in methods}
        rounds: dict[str, list[float]] = {name: [] for name in methods}  # each round's median, µs
        order = random.Random(8305)
        for _ in range(ROUNDS):
            names = list(methods)
            order.shuffle(names)
            for name in names:
                run, n = methods[name]
                got = run(port, n)
                samples[name] += got
                rounds[name].append(statistics.median(s[0] for s in got) / 1e3)
    finally:
        acceptor.kill()
        acceptor.wait()
    print_table(samples)
    for name, medians in rounds.items():
        whole = statistics.median(s[1] for s in samples[name]) / 1e3
        row(ROW_PREFIX + name + ROW_SUFFIX, medians, "µs", detail=f"whole connect {whole:.0f} µs")


def pct(values: list[int], p: float) -> float:
    return values[min(len(values) - 1, int(len(values) * p))] / 1e3


def print_table(samples: dict[str, list[Sample]]) -> None:
    print(f"loopback {HOST}, {ROUNDS} rounds, one connect at a time")
    print(
        f"python {sys.version.split()[0]}, libhev2 {hev2.library_version()}, "
        f"switch interval {sys.getswitchinterval() * 1e3:g} ms, load average {os.getloadavg()[0]:.2f}"
    )
    print("finish -> completion: the library's finish (C) to the first Python statement holding the socket")
    print(f"{'':44} {'finish -> completion, µs':>34} {'whole connect µs':>17}")
    print(f"{'form':44} {'n':>5} {'median':>8} {'p10':>8} {'p90':>8} {'median':>17}")
    for name, got in samples.items():
        latency = sorted(s[0] for s in got)
        whole = sorted(s[1] for s in got)
        print(
            f"{name:44} {len(got):5d} {statistics.median(latency) / 1e3:8.1f} {pct(latency, 0.1):8.1f}"
            f" {pct(latency, 0.9):8.1f} {statistics.median(whole) / 1e3:17.1f}"
        )


if __name__ == "__main__":
    _abi.api()  # the binding's library first: its prototypes are then in place for the shim
    main()
