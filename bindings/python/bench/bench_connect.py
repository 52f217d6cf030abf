"""One connection at a time to a loopback listener, side by side in one run:

  socket.create_connection              (Python's own, the baseline)
  hev2.create_connection                (IP literal, and a name from a static list)
  the same connect as bare ctypes calls  (the library's floor: what is left is Python's)
  asyncio loop.create_connection(happy_eyeballs_delay=0.25)
  hev2.aio.create_connection

The listener runs in a separate process (accept and close), so that it does
not compete for this process's GIL. Methods run in rounds, each round in
its own shuffled order (seeded: runs repeat), so that machine noise spreads
over all of them and no method always follows the same one: with a fixed
rotation, a method's neighbour moved its figures by more than 10%. Prints the mean and median time per
connection and the ratio to socket.create_connection.

BENCH_BASELINE_SRC=DIR adds "hev2.create_connection (baseline)": the hev2
package found in DIR (another checkout's bindings/python/src, say the tree
before a change), imported as hev2_baseline and run in the same rounds, so
that a change is measured interleaved in one process.

A second, short table shows what the race is for: a name whose addresses
are ::1, where SYNs are dropped (listen backlog 0 + an unaccepted filler),
then 127.0.0.1, which answers. For socket and asyncio, socket.getaddrinfo
answers that list for the name (as a dual-stack host's resolver would; no
resolver is asked); hev2 gets it as a static address list.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import hev2  # noqa: E402
import hev2.aio  # noqa: E402
import rows  # noqa: E402  (this directory's)

HOST = "127.0.0.1"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
PER_ROUND = int(os.environ.get("BENCH_PER_ROUND", "300"))

ACCEPTOR = """
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 0))
l.listen(4096)
print(l.getsockname()[1], flush=True)
while True:
    c, _ = l.accept()
    c.close()
"""


def blocking_method(connect):
    def run(port, n):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            s = connect(port)
            times.append(time.perf_counter() - t)
            s.close()
        return times

    return run


def asyncio_method(connect):
    def run(port, n):
        async def main():
            times = []
            for _ in range(n):
                t = time.perf_counter()
                transport, _ = await connect(port)
                times.append(time.perf_counter() - t)
                transport.close()
            await asyncio.sleep(0)  # let the transports finish closing
            return times

        return asyncio.run(main())

    return run


def time_wait() -> str:
    """The kernel's count of TCP sockets in TIME_WAIT (/proc/net/sockstat):
    tens of thousands of them on loopback make every connect dearer."""
    try:
        with open("/proc/net/sockstat") as f:
            for line in f:
                if line.startswith("TCP:"):
                    fields = line.split()
                    return fields[fields.index("tw") + 1]
    except (OSError, ValueError):
        pass
    return "?"


def abi_floor(port):
    """What create_connection cannot go below: the bare ctypes call of one
    connect on the calling thread (hev2_connect_wait: the healthy path is
    this one call; a slower race goes on with hev2_wait) and the socket
    object, with no argument checks and no Python objects of hev2's. The
    gap to socket.create_connection is the library's and ctypes'; the gap
    from here to hev2.create_connection is the package's."""
    from hev2 import _abi

    lib = _abi.api()
    host, service = HOST.encode(), str(port).encode()
    # The winner's fd blocking, as create_connection asks for a socket
    # without timeout: the library clears O_NONBLOCK, no settimeout.
    options = _abi.Options()
    lib.hev2_options_init_size(_abi.ctypes.byref(options), _abi.ctypes.sizeof(options))
    options.drive, options.blocking = _abi.DRIVE_WAITER, 1
    out = _abi.hev2_conn(0)
    fd = _abi.ctypes.c_int(-1)
    out_ref, fd_ref = _abi.ctypes.byref(out), _abi.ctypes.byref(fd)

    def connect(port):
        rc = lib.hev2_connect_wait(host, service, options, 50, out_ref, fd_ref)
        while rc == _abi.EAGAIN:
            rc = lib.hev2_wait(out.value, 50)
        if out.value:  # not won within the first call: the handle's fd
            r = _abi.ResultInfo()
            r.size = _abi.ctypes.sizeof(r)
            lib.hev2_result(out.value, _abi.ctypes.byref(r))
            lib.hev2_release(out.value)
            fd.value = r.fd
        return socket.socket(-1, socket.SOCK_STREAM, socket.IPPROTO_TCP, fileno=fd.value)

    return connect


class Floor:
    """abi_floor's connect, made on first use (the port is known then)."""

    def __init__(self):
        self.connect = None

    def __call__(self, port):
        if self.connect is None:
            self.connect = abi_floor(port)
        return self.connect(port)


async def asyncio_he(port):
    loop = asyncio.get_running_loop()
    return await loop.create_connection(asyncio.Protocol, HOST, port, happy_eyeballs_delay=0.25)


async def hev2_aio(port):
    return await hev2.aio.create_connection(asyncio.Protocol, HOST, port)


METHODS = {
    "socket.create_connection": blocking_method(lambda port: socket.create_connection((HOST, port))),
    "hev2.create_connection": blocking_method(lambda port: hev2.create_connection((HOST, port))),
    "hev2 C ABI floor (bare ctypes calls)": blocking_method(Floor()),
    "hev2.create_connection (static name)": blocking_method(
        lambda port: hev2.create_connection(("bench.test", port), hosts={"bench.test": [HOST]})
    ),
    "asyncio create_connection(he_delay=0.25)": asyncio_method(asyncio_he),
    "hev2.aio.create_connection": asyncio_method(hev2_aio),
}


def load_baseline(src: str):  # type: ignore[no-untyped-def]
    """The hev2 package in src, imported under another name."""
    init = os.path.join(src, "hev2", "__init__.py")
    here = [os.path.dirname(init)]
    spec = importlib.util.spec_from_file_location("hev2_baseline", init, submodule_search_locations=here)
    module = importlib.util.module_from_spec(spec)
    sys.modules["hev2_baseline"] = module
    spec.loader.exec_module(module)
    return module


if os.environ.get("BENCH_BASELINE_SRC"):
    baseline = load_baseline(os.environ["BENCH_BASELINE_SRC"])
    METHODS["hev2.create_connection (baseline)"] = blocking_method(
        lambda port: baseline.create_connection((HOST, port))
    )


BROKEN_NAME = "broken-v6.bench.test"
SOCKET_TIMEOUT = 1.0  # socket.create_connection waits this long on ::1
BROKEN_CONNECTIONS = 3


def broken_ipv6_table(port: int) -> None:
    hole = socket.socket(socket.AF_INET6)
    hole.bind(("::1", port))  # same port number as the IPv4 acceptor
    hole.listen(0)
    filler = socket.create_connection(("::1", port))
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, p, *args, **kw):  # type: ignore[no-untyped-def]
        if host != BROKEN_NAME:
            return real_getaddrinfo(host, p, *args, **kw)
        six = real_getaddrinfo("::1", p, socket.AF_INET6, socket.SOCK_STREAM)
        four = real_getaddrinfo("127.0.0.1", p, socket.AF_INET, socket.SOCK_STREAM)
        return six + four

    async def asyncio_broken(port: int):  # type: ignore[no-untyped-def]
        loop = asyncio.get_running_loop()
        return await loop.create_connection(asyncio.Protocol, BROKEN_NAME, port, happy_eyeballs_delay=0.25)

    methods = {
        f"socket.create_connection(timeout={SOCKET_TIMEOUT:g})": blocking_method(
            lambda port: socket.create_connection((BROKEN_NAME, port), timeout=SOCKET_TIMEOUT)
        ),
        "hev2.create_connection": blocking_method(
            lambda port: hev2.create_connection((BROKEN_NAME, port), hosts={BROKEN_NAME: ["::1", "127.0.0.1"]})
        ),
        "asyncio create_connection(he_delay=0.25)": asyncio_method(asyncio_broken),
    }
    socket.getaddrinfo = getaddrinfo
    try:
        results = {name: run(port, BROKEN_CONNECTIONS) for name, run in methods.items()}
    finally:
        socket.getaddrinfo = real_getaddrinfo
        filler.close()
        hole.close()
    print()
    print(f"broken IPv6 (::1 drops SYNs, 127.0.0.1 answers), {BROKEN_CONNECTIONS} connections per method")
    base = statistics.mean(next(iter(results.values())))
    print(f"{'method':42} {'mean ms':>9} {'ratio':>7}")
    for name, times in results.items():
        print(f"{name:42} {statistics.mean(times) * 1e3:9.1f} {statistics.mean(times) / base:6.2f}x")


def main() -> None:
    hev2.init()
    acceptor = subprocess.Popen([sys.executable, "-c", ACCEPTOR], stdout=subprocess.PIPE, text=True)
    try:
        port = int(acceptor.stdout.readline())
        for run in METHODS.values():  # warm-up: imports, the library's first race, caches
            run(port, 20)
        samples = {name: [] for name in METHODS}
        rounds = {name: [] for name in METHODS}  # each round's median
        order = random.Random(8305)
        for r in range(ROUNDS):
            names = list(METHODS)
            order.shuffle(names)
            for name in names:
                times = METHODS[name](port, PER_ROUND)
                samples[name] += times
                rounds[name].append(statistics.median(times))
        print_table(samples)
        print_round_ratios(rounds)
        broken_ipv6_table(port)
    finally:
        acceptor.kill()
        acceptor.wait()


def print_table(samples: dict[str, list[float]]) -> None:
    base_mean = statistics.mean(samples["socket.create_connection"])
    base_median = statistics.median(samples["socket.create_connection"])
    print(f"loopback {HOST}, {ROUNDS} rounds x {PER_ROUND} connections per method, one at a time")
    print(
        f"python {sys.version.split()[0]}, libhev2 {hev2.library_version()}, load average {os.getloadavg()[0]:.2f}, "
        f"TIME_WAIT sockets {time_wait()}"
    )
    print(f"{'method':42} {'mean µs':>9} {'median µs':>10} {'p90 µs':>8} {'mean ratio':>11} {'median ratio':>13}")
    for name, times in samples.items():
        times.sort()
        mean, median = statistics.mean(times), statistics.median(times)
        p90 = times[int(len(times) * 0.9)]
        print(
            f"{name:42} {mean * 1e6:9.1f} {median * 1e6:10.1f} {p90 * 1e6:8.1f}"
            f" {mean / base_mean:10.2f}x {median / base_median:12.2f}x"
        )
    print("ratio: time per connection / socket.create_connection's (the median resists machine noise)")


def print_round_ratios(rounds: dict[str, list[float]]) -> None:
    """Per round, each method's median over the same round's baseline median:
    the median of those ratios and their spread (noise that hits one round
    hits every method of it alike)."""
    pairs = [(name, "socket.create_connection") for name in rounds if name != "socket.create_connection"]
    if "hev2 C ABI floor (bare ctypes calls)" in rounds:
        pairs.append(("hev2.create_connection", "hev2 C ABI floor (bare ctypes calls)"))
    if "hev2.create_connection (baseline)" in rounds:
        pairs.append(("hev2.create_connection", "hev2.create_connection (baseline)"))
    print()
    print(f"per-round ratios of medians, {ROUNDS} rounds: median [min - max]")
    for name, base in pairs:
        ratios = sorted(a / b for a, b in zip(rounds[name], rounds[base]))
        print(f"{name:42} / {base:34} {statistics.median(ratios):5.2f}x [{ratios[0]:.2f} - {ratios[-1]:.2f}]")
    ratios = [a / b for a, b in zip(rounds["hev2.create_connection"], rounds["socket.create_connection"])]
    rows.row("python hev2.create_connection / socket.create_connection", ratios, "x", 1.15)


if __name__ == "__main__":
    main()
