"""One line per benchmark row, with its goal and a verdict, the shape every
language's benchmarks print (bench/c/row.h):

    row: NAME   1.14x [1.09-1.20]  goal <= 1.15x  ok

the median of the values given (per-round ratios, per-pair differences)
and their spread. The line is also appended to the file $HEV2_BENCH_ROWS
names, when set: `make bench` prints every row together at its end.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence

REPORT = None  # no goal: the row is reported, not judged


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """median, min, max"""
    return statistics.median(values), min(values), max(values)


def row(name: str, values: Sequence[float], unit: str, goal: float | None = REPORT, detail: str = "") -> None:
    """unit: "x" (ratios), "ms" (differences in ms) or "MB" (differences in
    MB)."""
    med, lo, hi = spread(values)
    if unit == "x":
        value, target = f"{med:.2f}x [{lo:.2f}-{hi:.2f}]", f"goal <= {goal:.2f}x" if goal is not None else ""
    else:
        value, target = f"{med:+.2f} {unit} [{lo:+.2f} .. {hi:+.2f}]", f"goal <= {goal:g} {unit}" if goal is not None else ""
    verdict = "-" if goal is None else "ok" if med <= goal else "ABOVE GOAL"
    line = f"row: {name:74} {value:28} {target or 'goal: report':16} {verdict}" + (f"  ({detail})" if detail else "")
    print(line, flush=True)
    path = os.environ.get("HEV2_BENCH_ROWS")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
