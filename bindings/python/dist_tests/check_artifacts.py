"""The sdist's and the wheels' contents and metadata, as a package index
reads them (run by `make test-dist-python`):

    check_artifacts.py DIST_DIR VERSION TAGGER

- each wheel is hev2-VERSION-py3-none-manylinux_2_N_ARCH.whl, its WHEEL
  file says the same tag (not pure: a library inside), and TAGGER
  (scripts/manylinux-tag.py) run on the library it carries gives that tag;
- METADATA has the fields a package index shows (license, project URLs,
  classifiers, requires-python ...) and the license file is inside;
- the sdist carries the package, setup.py, the license and the Go module
  sources with vendored modules, and no test, test data, benchmark or
  built library.
"""

from __future__ import annotations

import email.parser
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ARCHES = ("x86_64", "aarch64")
# Classifiers the metadata must carry, among others.
CLASSIFIERS = (
    "License :: OSI Approved :: MIT License",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Python :: 3 :: Only",
    "Typing :: Typed",
)
URLS = ("Homepage", "Documentation", "Source", "Changelog", "Issues")


def fail(message: str) -> None:
    sys.exit(f"check_artifacts: {message}")


def check_metadata(wheel: zipfile.ZipFile, name: str, version: str) -> None:
    info = f"hev2-{version}.dist-info"
    meta = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    expect = {"Metadata-Version": None, "Name": "hev2", "Version": version, "License": "MIT", "Requires-Python": ">=3.11"}
    for field, value in expect.items():
        got = meta.get(field)
        if not got or (value is not None and got != value):
            fail(f"{name}: METADATA {field} is {got!r}, want {value or 'a value'!r}")
    for field in ("Summary", "Description-Content-Type", "Author"):
        if not meta.get(field):
            fail(f"{name}: METADATA has no {field}")
    if meta.get("Description-Content-Type") != "text/markdown" or "# hev2 for Python" not in meta.get_payload():
        fail(f"{name}: METADATA does not carry README.md as its markdown description")
    classifiers = meta.get_all("Classifier") or []
    for c in CLASSIFIERS:
        if c not in classifiers:
            fail(f"{name}: METADATA has no classifier {c!r}")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    for label in URLS:
        if not urls.get(label, "").startswith("https://"):
            fail(f"{name}: METADATA has no Project-URL {label}")
    if "MIT License" not in wheel.read(f"{info}/LICENSE").decode():
        fail(f"{name}: {info}/LICENSE is not the MIT license")


def check_wheel(path: str, version: str, tagger: str) -> str:
    name = os.path.basename(path)
    m = re.fullmatch(rf"hev2-{re.escape(version)}-py3-none-(manylinux_2_([0-9]+)_([a-z0-9_]+))\.whl", name)
    if m is None:
        fail(f"{name}: not named hev2-{version}-py3-none-manylinux_2_N_ARCH.whl")
    tag = m.group(1)
    with zipfile.ZipFile(path) as wheel:
        bad = wheel.testzip()
        if bad:
            fail(f"{name}: {bad} is corrupt")
        info = f"hev2-{version}.dist-info"
        fields = email.parser.Parser().parsestr(wheel.read(f"{info}/WHEEL").decode())
        if fields.get_all("Tag") != [f"py3-none-{tag}"] or fields.get("Root-Is-Purelib") != "false":
            fail(f"{name}: WHEEL says Tag {fields.get_all('Tag')}, Root-Is-Purelib {fields.get('Root-Is-Purelib')}")
        record = wheel.read(f"{info}/RECORD").decode()
        for member in ("hev2/__init__.py", "hev2/__main__.py", "hev2/py.typed", "hev2/libhev2.so"):
            if member not in wheel.namelist() or f"\n{member}," not in "\n" + record:
                fail(f"{name}: {member} missing (or not in RECORD)")
        check_metadata(wheel, name, version)
        with tempfile.TemporaryDirectory() as tmp:
            lib = wheel.extract("hev2/libhev2.so", tmp)
            read = subprocess.run([sys.executable, tagger, "-v", lib], capture_output=True, text=True)
    if read.returncode != 0:
        fail(f"{name}: {read.stderr.strip()}")
    if read.stdout.strip() != tag:
        fail(f"{name}: tagged {tag}, but its library reads as {read.stdout.strip()}")
    glibc = f"2.{m.group(2)}"
    print(f"{name}: {os.path.getsize(path)} bytes; tag {tag} (glibc {glibc}) = {os.path.basename(tagger)} on its libhev2.so")
    return m.group(3)


def check_sdist(path: str, version: str) -> None:
    name = os.path.basename(path)
    root = f"hev2-{version}/"
    with tarfile.open(path) as tar:
        files = [member.name for member in tar.getmembers() if member.isfile()]
        pkg_info = tar.extractfile(root + "PKG-INFO")
        assert pkg_info is not None
        meta = email.parser.Parser().parsestr(pkg_info.read().decode())
    if meta.get("Version") != version or meta.get("Name") != "hev2":
        fail(f"{name}: PKG-INFO says {meta.get('Name')} {meta.get('Version')}")
    outside = [f for f in files if not f.startswith(root)]
    if outside:
        fail(f"{name}: files outside {root}: {outside[:3]}")
    inside = {f[len(root) :] for f in files}
    for needed in (
        "pyproject.toml",
        "setup.py",
        "LICENSE",
        "README.md",
        "src/hev2/__init__.py",
        "src/hev2/__main__.py",
        "src/hev2/py.typed",
        "go.mod",
        "go.sum",
        "include/hev2.h",
        "capi/main.go",
        "capi/hev2.map",
        "core/dialer.go",
        "vendor/modules.txt",
    ):
        if needed not in inside:
            fail(f"{name}: {needed} missing")
    for top in ("internal/", "vendor/golang.org/x/sys/unix/"):
        if not any(f.startswith(top) for f in inside):
            fail(f"{name}: nothing under {top}")
    unwanted = re.compile(r"(_test\.go$|(^|/)testdata/|^(tests|bench|bindings|cmd|examples)/|\.so(\.[0-9.]+)?$|__pycache__|\.pyc$)")
    shipped = sorted(f for f in inside if unwanted.search(f))
    if shipped:
        fail(f"{name}: carries tests, benchmarks or built files: {shipped[:5]}")
    print(f"{name}: {os.path.getsize(path)} bytes; {len(inside)} files: the package, setup.py, LICENSE, the Go sources and vendor/, no tests")


def main(argv: list[str]) -> None:
    dist, version, tagger = argv
    wheels = sorted(glob.glob(os.path.join(dist, "hev2-*.whl")))
    arches = sorted(check_wheel(w, version, tagger) for w in wheels)
    if arches != sorted(ARCHES):
        fail(f"{dist}: wheels for {arches}, want one each for {sorted(ARCHES)}")
    check_sdist(os.path.join(dist, f"hev2-{version}.tar.gz"), version)


if __name__ == "__main__":
    main(sys.argv[1:])
