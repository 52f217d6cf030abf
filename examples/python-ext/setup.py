"""Builds hev2ext against libhev2, found by pkg-config and nothing else.

    python3 setup.py build_ext --inplace

pkg-config finds an installed libhev2 (libhev2-dev: /usr/lib/.../pkgconfig/
hev2.pc) by itself; for a hev2 source tree, point PKG_CONFIG_PATH at its
build/ directory, whose hev2-uninstalled.pc pkg-config prefers there.
"""

import shutil
import subprocess
import sys

from setuptools import Extension, setup


def pkg_config(option: str) -> list[str]:
    """`pkg-config OPTION hev2`, split; exits with one line when it cannot."""
    if shutil.which("pkg-config") is None:
        sys.exit("hev2ext: pkg-config is not installed (Debian: apt-get install pkg-config)")
    found = subprocess.run(["pkg-config", option, "hev2"], capture_output=True, text=True)
    if found.returncode != 0:
        why = " ".join(found.stderr.split()) or "no output"
        sys.exit(
            "hev2ext: pkg-config cannot find hev2 (install libhev2-dev, or set PKG_CONFIG_PATH "
            f"to the directory of hev2.pc or hev2-uninstalled.pc): {why}"
        )
    return found.stdout.split()


setup(
    name="hev2ext",
    version="0.1",
    description="Example CPython extension over libhev2",
    ext_modules=[
        Extension(
            "hev2ext",
            sources=["src/module.c", "src/connect.c", "src/completion.c"],
            depends=["src/hev2ext.h"],
            extra_compile_args=pkg_config("--cflags"),
            extra_link_args=pkg_config("--libs") + ["-lpthread", "-lm"],
        )
    ],
)
