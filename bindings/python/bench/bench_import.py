"""What `import hev2` costs: `python3 -X importtime -c 'import hev2'` run in
fresh processes, the cumulative time of the top-level hev2 line (every module
that importing hev2 pulled in), median of BENCH_RUNS runs.

BENCH_BASELINE_SRC=DIR runs DIR's hev2 package (another checkout's
bindings/python/src, say the tree before a change) in the same loop,
alternating with this one, and prints the ratio. BENCH_CODE replaces the
imported statement (e.g. "import socket; import hev2" to leave socket, which
most programs have imported already, out of the figure).

Both trees are measured with their bytecode compiled (as an installed
package has it), cached in a temporary PYTHONPYCACHEPREFIX written by a
first, unmeasured import: nothing is written into the trees, and a tree that
happens to have __pycache__ gets no edge over one that has not.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile

RUNS = int(os.environ.get("BENCH_RUNS", "10"))
CODE = os.environ.get("BENCH_CODE", "import hev2")
HEV2_LINE = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| hev2$", re.M)


PYCACHE = tempfile.mkdtemp(prefix="hev2-bench-import-")


def import_us(src: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=PYCACHE)
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CODE], env=env, capture_output=True, text=True, check=True
    )
    m = HEV2_LINE.search(p.stderr)
    if not m:
        raise SystemExit(f"no hev2 line in the -X importtime output of {src}:\n{p.stderr}")
    return int(m.group(1))


def main() -> None:
    trees = {"this tree": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")}
    if os.environ.get("BENCH_BASELINE_SRC"):
        trees["baseline"] = os.environ["BENCH_BASELINE_SRC"]
    for src in trees.values():
        import_us(src)  # once first: writes the .pyc files into PYCACHE
    times: dict[str, list[int]] = {name: [] for name in trees}
    for r in range(RUNS):
        for name in trees if r % 2 == 0 else reversed(list(trees)):
            times[name].append(import_us(trees[name]))
    subprocess.run(["rm", "-rf", PYCACHE], check=True)
    print(f"{CODE!r}: -X importtime cumulative, {RUNS} runs each, alternating; load average {os.getloadavg()[0]:.2f}")
    for name, us in times.items():
        print(f"{name:10} median {statistics.median(us) / 1e3:6.1f} ms  [{min(us) / 1e3:.1f} - {max(us) / 1e3:.1f}]")
    if "baseline" in times:
        ratios = sorted(a / b for a, b in zip(times["this tree"], times["baseline"]))
        print(f"this tree / baseline, per pair: median {statistics.median(ratios):.2f}x [{ratios[0]:.2f} - {ratios[-1]:.2f}]")


if __name__ == "__main__":
    main()
