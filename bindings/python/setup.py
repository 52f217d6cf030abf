"""The hev2 package's build steps (its metadata is pyproject.toml's).

The package is ctypes over libhev2.so, which every wheel carries next to the
package (hev2/libhev2.so, where the loader looks first). The build step
puts it there from one of two places:

- HEV2_WHEEL_LIBRARY=PATH: that library, already built (`make dist-python`
  builds the manylinux wheels from the libraries it built for each
  architecture);
- otherwise it builds the library with Go from the module sources an sdist
  carries next to this file (go.mod, go.sum, capi/, core/, internal/,
  include/ and the vendored modules, so that no network is needed), with
  the flags of mk/capi.mk's capi-lib. What is missing (the sources, Go,
  cgo's C compiler) is said in one line.

A wheel with a library in it is tagged py3-none-PLATFORM: the package is
pure Python, so one wheel serves every Python 3 of its platform.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

try:  # setuptools >= 70.1 has its own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "libhev2.so"
GO_SOURCES = ("go.mod", "go.sum", "capi", "core", "internal", "include", "vendor")
ALTERNATIVE = "or install a hev2 wheel instead (pip install --only-binary hev2 hev2)"


def required_go() -> str:
    """The Go version go.mod asks for ("1.26.0")."""
    with open(os.path.join(HERE, "go.mod")) as f:
        m = re.search(r"^go ([0-9][0-9.]*)\s*$", f.read(), re.M)
    if m is None:
        raise SetupError("hev2: go.mod has no `go` line")
    return m.group(1)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"[0-9]+", text)[:3])


def soname_major() -> str:
    """HEV2_VERSION_MAJOR of include/hev2.h: the SONAME's number."""
    with open(os.path.join(HERE, "include", "hev2.h")) as f:
        m = re.search(r"^#define HEV2_VERSION_MAJOR ([0-9]+)$", f.read(), re.M)
    if m is None:
        raise SetupError("hev2: include/hev2.h has no HEV2_VERSION_MAJOR")
    return m.group(1)


def go_build(out: str) -> None:
    """Builds libhev2.so into out with Go, as `make capi-lib` does."""
    missing = [name for name in GO_SOURCES if not os.path.exists(os.path.join(HERE, name))]
    if missing:
        raise SetupError(
            f"hev2: building {LIBRARY} needs the Go module sources next to setup.py "
            f"({', '.join(missing)} missing): build from the sdist `make dist-python` makes, "
            f"set HEV2_WHEEL_LIBRARY to a built {LIBRARY}, {ALTERNATIVE}"
        )
    need = required_go()
    go = shutil.which("go")
    if go is None:
        raise SetupError(
            f"hev2: building {LIBRARY} from source needs Go {need} or newer (https://go.dev/dl/) "
            f"and `go` on PATH; {ALTERNATIVE}"
        )
    env = dict(os.environ, CGO_ENABLED="1", GOFLAGS="-mod=vendor", GOTOOLCHAIN="local")
    have = subprocess.run([go, "env", "GOVERSION"], env=env, cwd=HERE, capture_output=True, text=True).stdout.strip()
    if version_tuple(have) < version_tuple(need):
        raise SetupError(
            f"hev2: building {LIBRARY} from source needs Go {need} or newer (https://go.dev/dl/), "
            f"{go} is {have or 'of an unknown version'}; {ALTERNATIVE}"
        )
    cc = subprocess.run([go, "env", "CC"], env=env, cwd=HERE, capture_output=True, text=True).stdout.split()
    if not cc or shutil.which(cc[0]) is None:
        raise SetupError(
            f"hev2: building {LIBRARY} from source needs a C compiler for cgo "
            f"({cc[0] if cc else 'gcc'} not found; set CC or install gcc); {ALTERNATIVE}"
        )
    major = soname_major()
    version_script = os.path.join(HERE, "capi", "hev2.map")
    ldflags = f'-s -extldflags "-Wl,-soname,{LIBRARY}.{major} -Wl,--version-script={version_script}"'
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags", ldflags, "-o", out, "./capi"]
    print(f"hev2: building {LIBRARY} with {have}: {shlex.join(cmd)}", flush=True)
    if subprocess.run(cmd, env=env, cwd=HERE).returncode != 0:
        raise SetupError(f"hev2: `go build` of {LIBRARY} failed (its errors are above)")
    # go build writes the C header beside the library; the package does not use it.
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)


class BuildWithLibrary(build_py):
    """build_py, then libhev2.so into the built package."""

    def run(self) -> None:
        super().run()
        target = os.path.join(self.build_lib, "hev2", LIBRARY)
        given = os.environ.get("HEV2_WHEEL_LIBRARY")
        if given:
            if not os.path.isfile(given):
                raise SetupError(f"hev2: HEV2_WHEEL_LIBRARY={given}: no such file")
            shutil.copyfile(given, target)
        else:
            go_build(os.path.abspath(target))
        os.chmod(target, 0o755)


class WithLibrary(Distribution):
    """A distribution with a platform's binary in it (not a pure wheel)."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):  # type: ignore[misc,valid-type]
    """py3-none-PLATFORM: any Python 3, this platform's library."""

    def get_tag(self) -> tuple[str, str, str]:
        _python, _abi, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=WithLibrary, cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
