"""The HTTP client tests run inside the test bed's client namespace, started
by `hev2-testbed run` (make test-python-clients), which says where the web
server is. Run any other way they fail, saying so: they are never skipped."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HEV2_LIBRARY", str(HERE.parents[2] / "build" / "libhev2.so"))

import bed  # noqa: E402
import hev2  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def in_bed_with_hev2_installed() -> Iterator[None]:
    if not bed.in_bed():
        pytest.fail(f"run inside the test bed: build/hev2-testbed run -- ... (needs {', '.join(bed.ENV)})")
    hev2.init()
    hev2.install()  # requests, urllib3, urllib, http.client
    yield
    hev2.uninstall()


@pytest.fixture
def show(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Prints a line in pytest's output as the test runs (not captured)."""

    def show(line: str) -> None:
        with capsys.disabled():
            print(line)

    return show
