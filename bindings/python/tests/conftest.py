"""Shared set-up: import the package from this checkout and find the library.

The tests need build/libhev2.so (`make build`); mk/python.mk points
HEV2_LIBRARY at it. Without it the tests fail with the loader's message:
they are never skipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
REPO = HERE.parents[2]
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HEV2_LIBRARY", str(REPO / "build" / "libhev2.so"))


@pytest.fixture(scope="session", autouse=True)
def library_loaded() -> None:
    from warmup import warm_up

    # The runtime's start-up and the library's lazily created process-wide
    # fds, once, before any measurement (see warmup.py).
    warm_up()
    # Each test's race starts from RFC 8305's defaults, however often a name
    # is reused: the history is off but in test_history.py, which turns it
    # on around each of its tests.
    import hev2

    hev2.set_history(False)


def child_env() -> dict[str, str]:
    """Environment for a child Python that imports this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
