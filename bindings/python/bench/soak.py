"""Soak: N hev2.create_connection calls (default 100,000), mixed across
success, refusal and timeout, from four threads; every tenth of the run
the process's RSS, fds and threads and the library's live and running
handles are printed. The run passes when fds, threads and live handles
come back to their baseline after the warm-up (exit status 1 otherwise).

    python3 bindings/python/bench/soak.py [N]

Destinations are spread over 127.0.0.1-127.0.0.200 (all loopback, one
listener on 0.0.0.0) so TIME_WAIT sockets do not pile up on one address."""

from __future__ import annotations

import os
import random
import socket
import sys
import threading
import time

import hev2

THREADS = 4


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def counts() -> tuple[int, int, int, int, int]:
    s = hev2.stats()
    return rss_kib(), len(os.listdir("/proc/self/fd")), threading.active_count(), len(os.listdir("/proc/self/task")), int(s["handles_live"])


def main() -> int:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    accept = socket.socket()
    accept.bind(("0.0.0.0", 0))
    accept.listen(4096)
    drop = socket.socket()
    drop.bind(("0.0.0.0", 0))
    drop.listen(0)
    filler = socket.socket()
    filler.setblocking(False)
    filler.connect_ex(("127.0.0.1", drop.getsockname()[1]))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused_port = closed.getsockname()[1]
    closed.close()

    def acceptor() -> None:
        while True:
            try:
                c, _ = accept.accept()
                c.close()
            except OSError:
                return

    threading.Thread(target=acceptor, daemon=True).start()
    done = 0
    unexpected = 0
    lock = threading.Lock()

    def worker(n: int, seed: int) -> None:
        nonlocal done, unexpected
        rng = random.Random(seed)
        for _ in range(n):
            host = f"127.0.0.{rng.randint(1, 200)}"
            kind = rng.choice("AAAARRRRT")
            try:
                if kind == "A":
                    hev2.create_connection((host, accept.getsockname()[1])).close()
                elif kind == "R":
                    try:
                        hev2.create_connection((host, refused_port))
                        ok = False
                    except ConnectionRefusedError:
                        ok = True
                    if not ok:
                        raise AssertionError("connected to a closed port")
                else:
                    try:
                        hev2.create_connection((host, drop.getsockname()[1]), open_timeout=0.002)
                        raise AssertionError("connected to a dropping listener")
                    except TimeoutError:
                        pass
            except Exception:  # noqa: BLE001 - counted and reported
                with lock:
                    unexpected += 1
            with lock:
                done += 1

    def run(n: int) -> None:
        ts = [threading.Thread(target=worker, args=(n // THREADS, i)) for i in range(THREADS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    run(2000)  # warm-up: the library's permanent fds, a wake fd per thread
    time.sleep(0.2)
    base = counts()
    done = 0
    print(f"soak: {total} hev2.create_connection (success, refusal, timeout) from {THREADS} threads")
    print(f"{'connects':>10} {'RSS KiB':>10} {'fds':>6} {'pythreads':>9} {'threads':>8} {'live':>6} {'s':>7}")
    print(f"{0:>10} {base[0]:>10} {base[1]:>6} {base[2]:>9} {base[3]:>8} {base[4]:>6} {0:>7.1f}")
    t0 = time.monotonic()
    runner = threading.Thread(target=run, args=(total,))
    runner.start()
    step = max(total // 10, 1)
    nxt = step
    # Threads are judged by their peaks in the first and the second half of
    # the run: the Go runtime never gives an M back, so the count settles a
    # little above the baseline; a leak would keep it growing.
    thread_peak = [base[3], 0]
    while runner.is_alive():
        time.sleep(0.05)
        c = counts()
        half = 1 if done * 2 >= total else 0
        thread_peak[half] = max(thread_peak[half], c[3])
        if done >= nxt:
            print(f"{done:>10} {c[0]:>10} {c[1]:>6} {c[2]:>9} {c[3]:>8} {c[4]:>6} {time.monotonic() - t0:>7.1f}", flush=True)
            nxt += step
    runner.join()
    time.sleep(0.2)
    end = counts()
    print(f"after: RSS {end[0] - base[0]:+} KiB, fds {base[1]} -> {end[1]}, threads {base[3]} -> {end[3]}, live handles {base[4]} -> {end[4]}, unexpected {unexpected}")
    print(f"threads, peak: first half {thread_peak[0]}, second half {thread_peak[1]}")
    flat = end[1] <= base[1] and thread_peak[1] <= thread_peak[0] + 1 and end[4] == base[4] and unexpected == 0
    print("soak:", "flat" if flat else "NOT FLAT")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
