"""The ctypes mirror (_abi.py) against the real header: a C program compiled
with include/hev2.h prints every struct's size and field offsets, and they
must equal what ctypes computes. A header change missed here fails loudly
instead of corrupting memory."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess

import pytest

from conftest import REPO
from hev2 import _abi

STRUCTS = {
    "hev2_options": _abi.Options,
    "hev2_lookup_info": _abi.LookupInfo,
    "hev2_result_info": _abi.ResultInfo,
    "hev2_attempt_info": _abi.AttemptInfo,
    "hev2_event_info": _abi.EventInfo,
    "hev2_stats_info": _abi.StatsInfo,
}


def c_program() -> str:
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "hev2.h"', "int main(void) {", 'printf("{");']
    first = True
    for cname, py in STRUCTS.items():
        for field, _ in py._fields_:
            sep = "" if first else ","
            first = False
            lines.append(f'printf("{sep}\\"{cname}.{field}\\": %zu", offsetof({cname}, {field}));')
        lines.append(f'printf(",\\"{cname}\\": %zu", sizeof({cname}));')
    lines.append('printf(",\\"HEV2_VERSION_NUM\\": %d", HEV2_VERSION_NUM);')
    lines.append('printf("}\\n"); return 0; }')
    return "\n".join(lines)


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (gcc, a Debian package of mk/python.mk) is needed to check the ABI layout"
    d = tmp_path_factory.mktemp("layout")
    (d / "layout.c").write_text(c_program())
    subprocess.run(
        [cc, "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "include"), "-o", str(d / "layout"), str(d / "layout.c")],
        check=True,
    )
    return json.loads(subprocess.run([str(d / "layout")], check=True, capture_output=True, text=True).stdout)


@pytest.mark.parametrize("cname", STRUCTS)
def test_struct_layout_matches_header(c_layout, cname):
    py = STRUCTS[cname]
    assert ctypes.sizeof(py) == c_layout[cname], f"sizeof({cname})"
    for field, _ in py._fields_:
        assert getattr(py, field).offset == c_layout[f"{cname}.{field}"], f"{cname}.{field}"


def test_header_version_matches(c_layout):
    assert _abi.HEADER_VERSION == c_layout["HEV2_VERSION_NUM"]


def test_constants_match_header():
    text = (REPO / "include" / "hev2.h").read_text()
    for name in ("EFORKED", "ECONNECT", "ERESOLVE", "ETIMEOUT", "ECANCELED", "ESYSTEM", "ECAPACITY"):
        assert f"#define HEV2_{name} " in text
        line = next(l for l in text.splitlines() if l.startswith(f"#define HEV2_{name} "))
        assert int(line.split()[2]) == getattr(_abi, name), name
