"""The opt-in switch: make socket.create_connection, and urllib3's own
connect loop, use hev2.

Off unless ``install()`` is called. http.client, urllib, smtplib, ftplib and
many libraries built on them call ``socket.create_connection`` through the
``socket`` module's attribute at call time, so replacing that attribute is
enough for them to get Happy Eyeballs; code that did
``from socket import create_connection`` before ``install()`` keeps its own
reference and is unaffected.

urllib3 (hence requests) has a getaddrinfo + connect loop of its own,
``urllib3.util.connection.create_connection``, which its connections look up
at call time too: ``install()`` replaces it as well (``_urllib3``), at once
if urllib3 is imported already, otherwise the moment it is imported (a
finder at the head of ``sys.meta_path`` that only answers for that one
module). ``uninstall()`` undoes both.
"""

from __future__ import annotations

import _thread
import functools
import socket
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    import importlib.machinery
    import types
    from collections.abc import Sequence
    from typing import Any, Callable

_lock = _thread.allocate_lock()  # threading.Lock, without importing threading
_original: Callable[..., socket.socket] | None = None
# urllib3's own create_connection, kept while ours replaces it.
_original_urllib3: Callable[..., socket.socket] | None = None
_defaults: dict[str, Any] = {}
# install(https_rr=...)'s ports (hev2._options.https_rr_ports).
_https_ports: frozenset[int] = frozenset()


def install(**defaults: Any) -> None:
    """Replace ``socket.create_connection`` with ``hev2.create_connection``,
    and urllib3's ``urllib3.util.connection.create_connection`` (used by
    requests) with its hev2 equivalent.

    ``defaults`` are hev2 keyword arguments (``resolv_timeout=``,
    ``resolver=``, ``connection_attempt_delay=`` ...) applied to every call
    that does not pass them itself. Calling it again replaces the defaults.

    ``https_rr`` is a setting here, as the connect calls see a port, not a
    URL: True asks the HTTPS record (Happy Eyeballs v3) for connections to
    port 443, a collection of ports for connections to those (``{443,
    8443}``); the record may redirect the connection to another port. The
    TLS of http.client, urllib3 and requests still sends the URL's host as
    its server name and checks the certificate against it. ``alpn``,
    ``ech`` and ``ech_wait`` go with it (see ``hev2.create_connection``).
    """
    from ._connect import create_connection, validate_defaults
    from ._options import https_rr_ports, with_https_rr

    defaults = dict(defaults)
    ports = https_rr_ports(defaults.pop("https_rr", False))
    validate_defaults(defaults)
    global _original, _defaults, _https_ports
    with _lock:
        if _original is None:
            _original = socket.create_connection
        _defaults = dict(defaults)
        _https_ports = ports

        @functools.wraps(create_connection)
        def create_connection_hev2(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            options = {**defaults, **kwargs}
            if ports:
                port = address[1] if isinstance(address, tuple) and len(address) == 2 else None
                options = dict(with_https_rr(options, port, ports))
            return create_connection(address, *args, **options)

        create_connection_hev2.__hev2_installed__ = True  # type: ignore[attr-defined]
        socket.create_connection = create_connection_hev2

        from ._urllib3 import MODULE

        module = sys.modules.get(MODULE)
        if module is not None:
            _patch_urllib3(module)
        elif not any(isinstance(f, _Urllib3Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Urllib3Finder())


def uninstall() -> None:
    """Put the original ``socket.create_connection`` (and urllib3's) back
    (no-op if not installed)."""
    global _original, _original_urllib3
    with _lock:
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Urllib3Finder)]
        if _original is not None:
            socket.create_connection = _original
            _original = None
        if _original_urllib3 is not None:
            from ._urllib3 import MODULE

            module = sys.modules.get(MODULE)
            if module is not None:
                module.create_connection = _original_urllib3  # type: ignore[attr-defined]
            _original_urllib3 = None


def installed() -> bool:
    """Whether ``install()`` is in effect."""
    return getattr(socket.create_connection, "__hev2_installed__", False)


def _patch_urllib3(module: types.ModuleType) -> None:
    """Replaces urllib3's create_connection (under _lock, or from the import
    of urllib3, which install() made possible and uninstall() stops)."""
    global _original_urllib3
    from ._urllib3 import make_create_connection

    current = getattr(module, "create_connection", None)
    if current is None:
        return  # not a urllib3 this code knows: left alone
    if not getattr(current, "__hev2_installed__", False):
        _original_urllib3 = current
    if _original_urllib3 is not None:
        module.create_connection = make_create_connection(_original_urllib3, _defaults, _https_ports)  # type: ignore[attr-defined]


class _Urllib3Finder:
    """A meta path finder answering only for urllib3.util.connection: it
    finds the module as the finders after it would, and has it patched
    right after it runs. Asked about every import while installed, it
    answers anything else with one string comparison."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "urllib3.util.connection":  # _urllib3.MODULE
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _Urllib3Finder) or not hasattr(finder, "find_spec"):
                continue
            spec: importlib.machinery.ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader)  # type: ignore[assignment]
                return spec
        return None


class _PatchingLoader:
    """The module's own loader, then the patch."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        with _lock:
            if _original is not None:  # still installed
                _patch_urllib3(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
