"""hev2.aio.open_connection beside asyncio.open_connection(host, port,
happy_eyeballs_delay=0.25), interleaved in one event loop (make
bench-python-aio): BENCH_ROUNDS rounds (15) of BENCH_PER_ROUND connects
(200) each, the order alternating from round to round; each round's median
time per connect, and the row is the median of the per-round ratios with
their spread (goal: at most 1.1x). Only the open_connection call is timed;
the writer is closed (and waited for) outside it.

    bench_aio.py [NAME]         the literal 127.0.0.1, then NAME if given
    bench_aio.py --probe NAME   a few connects of each, untimed (for
                                bench/loopback-only.sh)

NAME is a name of the hosts file, mapped to ::1 and 127.0.0.1 (a real race
on each connect, IPv6 first); make runs this in a namespace whose hosts
file and resolv.conf are the benchmark's own (scripts/hosts-netns.sh), and
it refuses a NAME that resolves to anything but loopback. The listener is
another process (accept and close, on both addresses, same port), so that
it does not compete for this one's GIL.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time

import hev2
import hev2.aio
import rows

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
PER_ROUND = int(os.environ.get("BENCH_PER_ROUND", "200"))
HE_DELAY = 0.25

ACCEPTOR = """
import selectors, socket
sel = selectors.DefaultSelector()
four = socket.socket()
four.bind(("127.0.0.1", 0))
port = four.getsockname()[1]
six = socket.socket(socket.AF_INET6)
six.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
six.bind(("::1", port))
for s in (four, six):
    s.listen(4096)
    sel.register(s, selectors.EVENT_READ)
print(port, flush=True)
while True:
    for key, _ in sel.select():
        key.fileobj.accept()[0].close()
"""


async def by_asyncio(host: str, port: int) -> asyncio.StreamWriter:
    _, writer = await asyncio.open_connection(host, port, happy_eyeballs_delay=HE_DELAY)
    return writer


async def by_hev2(host: str, port: int) -> asyncio.StreamWriter:
    _, writer = await hev2.aio.open_connection(host, port)
    return writer


METHODS = {"hev2.aio.open_connection": by_hev2, "asyncio.open_connection": by_asyncio}


async def batch(method, host: str, port: int, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        writer = await method(host, port)
        times.append(time.perf_counter() - t)
        writer.close()
        await writer.wait_closed()
    return times


async def compare(host: str, port: int) -> dict[str, list[float]]:
    """Each method's median per connect, round by round."""
    for method in METHODS.values():  # warm-up: imports, the library's first race, caches
        await batch(method, host, port, 20)
    medians: dict[str, list[float]] = {name: [] for name in METHODS}
    for r in range(ROUNDS):
        for name in METHODS if r % 2 == 0 else reversed(list(METHODS)):
            medians[name].append(statistics.median(await batch(METHODS[name], host, port, PER_ROUND)))
    return medians


def check_loopback(name: str, port: int) -> list[str]:
    """NAME's addresses, which must all be loopback ones."""
    addrs = sorted({ai[4][0] for ai in socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)})
    if not addrs or any(not (a.startswith("127.") or a == "::1") for a in addrs):
        raise SystemExit(f"{name} resolves to {addrs}: run this where it maps to loopback only (make bench-python-aio)")
    return addrs


def main() -> None:
    args = sys.argv[1:]
    probe = args[:1] == ["--probe"]
    names = args[1:] if probe else args
    acceptor = subprocess.Popen([sys.executable, "-c", ACCEPTOR], stdout=subprocess.PIPE, text=True)
    try:
        assert acceptor.stdout is not None
        port = int(acceptor.stdout.readline())
        hosts = {"127.0.0.1": "127.0.0.1 (literal)"}
        for name in names:
            hosts[name] = f"hosts-file name ({', '.join(check_loopback(name, port))})"
        if probe:
            for host in hosts:
                for method in METHODS.values():
                    asyncio.run(batch(method, host, port, 3))
            return
        print(
            f"asyncio, python {sys.version.split()[0]}, libhev2 {hev2.library_version()}: {ROUNDS} rounds x "
            f"{PER_ROUND} connects, interleaved in one loop; load average {os.getloadavg()[0]:.2f}"
        )
        for host, label in hosts.items():
            medians = asyncio.run(compare(host, port))
            h, a = medians["hev2.aio.open_connection"], medians["asyncio.open_connection"]
            print(
                f"  {label}: hev2.aio.open_connection {statistics.median(h) * 1e6:.0f} us, "
                f"asyncio.open_connection(happy_eyeballs_delay={HE_DELAY}) {statistics.median(a) * 1e6:.0f} us "
                "per connect (median round)"
            )
            kind = "127.0.0.1" if host == "127.0.0.1" else "hosts-file name"
            rows.row(
                f"python asyncio: hev2.aio.open_connection / asyncio's, {kind}",
                [x / y for x, y in zip(h, a)],
                "x",
                1.1,
                f"asyncio.open_connection(happy_eyeballs_delay={HE_DELAY})",
            )
    finally:
        acceptor.kill()
        acceptor.wait()


if __name__ == "__main__":
    main()
