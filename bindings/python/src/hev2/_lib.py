"""Finding and loading libhev2.so.

The library is looked for, in order:

1. ``$HEV2_LIBRARY`` when set: a path to the library. An explicit choice that
   does not load is an error, never silently replaced by another copy.
2. Next to the package (``hev2/libhev2.so``), where a bundled copy lives.
3. The ``build/`` directory of the source tree this package sits in
   (``bindings/python/src/hev2`` → ``build/libhev2.so``), for a checkout.
4. The system library path, through the dynamic loader (``libhev2.so`` or
   whatever ``ctypes.util.find_library("hev2")`` names, then ``libhev2.so.1``).

It is loaded with ``ctypes.CDLL``, which releases the GIL around every call
(``PyDLL`` would hold it), and loaded once: a Go c-shared library cannot be
unloaded, so nothing here tries.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from pathlib import Path

LIBRARY_NAME = "libhev2.so"
RUNTIME_NAME = "libhev2.so.1"
ENV_VAR = "HEV2_LIBRARY"


class LibraryError(RuntimeError):
    """libhev2.so could not be found, loaded, or is of an incompatible version."""


def candidates() -> list[str]:
    """Every place the library is looked for, in order (see the module doc)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return [explicit]
    here = Path(__file__).resolve().parent
    paths = [str(here / LIBRARY_NAME)]
    # src/hev2 -> src -> python -> bindings -> repository root
    if len(here.parents) >= 4:
        paths.append(str(here.parents[3] / "build" / LIBRARY_NAME))
    # The dynamic loader's search: the development name, else the runtime
    # name an installed library has without its -dev symlink.
    found = ctypes.util.find_library("hev2")
    paths.append(found if found else LIBRARY_NAME)
    if RUNTIME_NAME not in paths:
        paths.append(RUNTIME_NAME)
    return paths


def load_first(paths: list[str]) -> tuple[ctypes.CDLL, str]:
    """dlopen the first path that loads; the error names every path and why."""
    tried = []
    for path in paths:
        if os.sep in path and not os.path.exists(path):
            tried.append(f"  {path}: no such file")
            continue
        try:
            # use_errno: HEV2_ESYSTEM leaves the cause in errno.
            return ctypes.CDLL(path, use_errno=True), path
        except OSError as e:
            tried.append(f"  {path}: {e}")
    how = (
        f"{ENV_VAR} is set; unset it to search the default places"
        if os.environ.get(ENV_VAR)
        else f"build it with `make build` in the hev2 source tree, or point {ENV_VAR} at it"
    )
    raise LibraryError(f"cannot load {LIBRARY_NAME}; tried:\n" + "\n".join(tried) + f"\n({how})")


_lock = threading.Lock()
_loaded: tuple[ctypes.CDLL, str] | None = None


def library() -> tuple[ctypes.CDLL, str]:
    """The loaded library and its path, loading it on first use."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = load_first(candidates())
    return _loaded
