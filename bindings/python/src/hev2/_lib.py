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

Importing this module costs next to nothing (``import hev2`` imports it):
ctypes and ctypes.util (which brings shutil, subprocess, tempfile ...) are
imported when the library is first loaded, and the dynamic loader's search
(``find_library`` runs ``ldconfig -p``) only when the earlier places fail.
"""

from __future__ import annotations

import _thread
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import ctypes
    from collections.abc import Iterable, Iterator

LIBRARY_NAME = "libhev2.so"
RUNTIME_NAME = "libhev2.so.1"
ENV_VAR = "HEV2_LIBRARY"


class LibraryError(RuntimeError):
    """libhev2.so could not be found, loaded, or is of an incompatible version."""


def candidates() -> list[str]:
    """Every place the library is looked for, in order (see the module doc)."""
    return list(iter_candidates())


def iter_candidates() -> Iterator[str]:
    """candidates(), one at a time: the system search runs only if asked for."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        yield explicit
        return
    here = os.path.dirname(os.path.realpath(__file__))
    yield os.path.join(here, LIBRARY_NAME)
    # src/hev2 -> src -> python -> bindings -> repository root
    root = here
    for _ in range(4):
        root, tail = os.path.split(root)
        if not tail:
            break
    else:
        yield os.path.join(root, "build", LIBRARY_NAME)
    # The dynamic loader's search: the development name, else the runtime
    # name an installed library has without its -dev symlink.
    import ctypes.util

    found = ctypes.util.find_library("hev2")
    yield found if found else LIBRARY_NAME
    if found != RUNTIME_NAME:
        yield RUNTIME_NAME


def load_first(paths: Iterable[str]) -> tuple[ctypes.CDLL, str]:
    """dlopen the first path that loads; the error names every path and why."""
    import ctypes

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


_lock = _thread.allocate_lock()  # threading.Lock, without importing threading
_loaded: tuple[ctypes.CDLL, str] | None = None


def library() -> tuple[ctypes.CDLL, str]:
    """The loaded library and its path, loading it on first use."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = load_first(iter_candidates())
    return _loaded
