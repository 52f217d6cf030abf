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
    import hev2
    from loopback import refusing

    hev2.init()  # the Go runtime's start-up, paid once before any measurement
    # The first race creates the library's process-wide epoll fd: create it
    # now so that fd counts before/after a test compare like with like.
    with refusing("127.0.0.1") as port:
        try:
            hev2.create_connection(("127.0.0.1", port))
        except ConnectionRefusedError:
            pass


def child_env() -> dict[str, str]:
    """Environment for a child Python that imports this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
