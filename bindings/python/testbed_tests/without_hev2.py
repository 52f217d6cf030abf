"""The same clients without hev2 on the same rows, shown, not judged: every
request at once (one thread each), each client's own timeout 3 s, the wait
capped at 3 s. Run by make test-python-clients after the tests, in the bed."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HEV2_LIBRARY", str(HERE.parents[2] / "build" / "libhev2.so"))

import bed  # noqa: E402
from clients import CLIENTS  # noqa: E402
from test_http_clients import JUDGED  # noqa: E402

CAP_S = 3.0


def main() -> int:
    if not bed.in_bed():
        print("without_hev2.py: run inside the test bed (build/hev2-testbed run -- ...)", file=sys.stderr)
        return 2
    rows = bed.rows()
    results: dict[tuple[str, str, str], str] = {}

    def one(client: str, scheme: str, name: str) -> None:
        start = time.perf_counter()
        try:
            got = CLIENTS[client][0](bed.url(scheme, rows[name]), bed.ca_file(), False, CAP_S)
            outcome = f"server saw {got.seen['family']}"
        except Exception as exc:
            outcome = f"{type(exc).__name__}"
        results[(client, scheme, name)] = f"{(time.perf_counter() - start) * 1000:7.0f} ms  {outcome}"

    threads = []
    for client in CLIENTS:
        for scheme in ("http", "https"):
            for name in JUDGED:
                t = threading.Thread(target=one, args=(client, scheme, name), daemon=True)
                t.start()
                threads.append(t)
    deadline = time.monotonic() + CAP_S + 0.3
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    print(f"Without hev2 (shown, not judged; capped at {CAP_S:.0f} s):")
    for client in CLIENTS:
        for scheme in ("http", "https"):
            cells = [f"{name} {results.get((client, scheme, name), f'  >{CAP_S * 1000:.0f} ms  still waiting')}" for name in JUDGED]
            print(f"  {client:12} {scheme:5} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
