"""Finding libhev2.so: the env var, next to the package, the checkout's
build/, the system path; a clear error naming every path tried; the version
check."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

import hev2
from conftest import SRC
from hev2 import _abi
from hev2._lib import LibraryError

PROBE = "import hev2; print(hev2.library_path()); print(hev2.library_version())"


def run_child(cwd, env, code=PROBE):
    return subprocess.run(["/usr/bin/python3", "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("HEV2_LIBRARY", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def copy_package(dest):
    shutil.copytree(SRC / "hev2", dest / "hev2", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return dest / "hev2"


def test_bundled_library_next_to_the_package_is_found(tmp_path):
    pkg = copy_package(tmp_path)
    shutil.copy(os.path.realpath(hev2.library_path()), pkg / "libhev2.so")
    p = run_child(tmp_path, clean_env())
    assert p.returncode == 0, p.stderr
    path, version = p.stdout.split()
    assert path == str(pkg / "libhev2.so") and version == hev2.library_version()


def test_missing_library_names_every_path_tried(tmp_path):
    pkg = copy_package(tmp_path)
    p = run_child(tmp_path, clean_env(), "import hev2; hev2.create_connection(('127.0.0.1', 9))")
    assert p.returncode == 1
    assert "LibraryError: cannot load libhev2.so; tried:" in p.stderr
    for tried in (str(pkg / "libhev2.so"), "libhev2.so.1", "make build", "HEV2_LIBRARY"):
        assert tried in p.stderr


def test_explicit_env_var_is_never_silently_replaced(tmp_path):
    missing = tmp_path / "nowhere" / "libhev2.so"
    p = run_child(SRC, clean_env(HEV2_LIBRARY=str(missing)))
    assert p.returncode == 1
    assert f"{missing}: no such file" in p.stderr and "HEV2_LIBRARY is set" in p.stderr


def test_a_file_that_is_not_a_library_is_reported(tmp_path):
    bogus = tmp_path / "libhev2.so"
    bogus.write_text("not an ELF file")
    p = run_child(SRC, clean_env(HEV2_LIBRARY=str(bogus)))
    assert p.returncode == 1 and str(bogus) in p.stderr and f"{bogus}: " in p.stderr and "file too short" in p.stderr


def test_import_needs_no_library():
    p = run_child(SRC, clean_env(HEV2_LIBRARY="/nonexistent/libhev2.so"), "import hev2, hev2.aio; print('ok')")
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


# The package needs the header it was generated from (hev2.h's version): an
# older minor lacks calls it makes (1.0 hev2_last_error, 1.1 the drive field,
# 1.2 the establishment report), another major is another ABI.
HEADER = _abi.HEADER_VERSION
NEEDS = rf"this package needs {HEADER // 10000}\.{HEADER // 100 % 100}\.0 or a later {HEADER // 10000}\.x"


@pytest.mark.parametrize("num", [9999, 10000, 10100, HEADER - 100, HEADER - 1, HEADER + 10000, 30101])
def test_version_check_refuses_other_versions(num):
    with pytest.raises(LibraryError, match=NEEDS):
        _abi.check_version(num, "/x/libhev2.so")


def test_version_check_accepts_newer_minor():
    _abi.check_version(HEADER + 103, "/x/libhev2.so")
    _abi.check_version(_abi.api().hev2_version(), hev2.library_path())
