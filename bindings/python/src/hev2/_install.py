"""The opt-in switch: make socket.create_connection use hev2.

Off unless ``install()`` is called. http.client, urllib, smtplib, ftplib and
many libraries built on them call ``socket.create_connection`` through the
``socket`` module's attribute at call time, so replacing that attribute is
enough for them to get Happy Eyeballs; code that did
``from socket import create_connection`` before ``install()`` keeps its own
reference and is unaffected.
"""

from __future__ import annotations

import _thread
import functools
import socket

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Callable

_lock = _thread.allocate_lock()  # threading.Lock, without importing threading
_original: Callable[..., socket.socket] | None = None


def install(**defaults: Any) -> None:
    """Replace ``socket.create_connection`` with ``hev2.create_connection``.

    ``defaults`` are hev2 keyword arguments (``resolv_timeout=``,
    ``resolver=``, ``connection_attempt_delay=`` ...) applied to every call
    that does not pass them itself. Calling it again replaces the defaults.
    """
    from ._connect import create_connection, validate_defaults

    validate_defaults(defaults)
    global _original
    with _lock:
        if _original is None:
            _original = socket.create_connection

        @functools.wraps(create_connection)
        def create_connection_hev2(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            return create_connection(address, *args, **{**defaults, **kwargs})

        create_connection_hev2.__hev2_installed__ = True  # type: ignore[attr-defined]
        socket.create_connection = create_connection_hev2


def uninstall() -> None:
    """Put the original ``socket.create_connection`` back (no-op if not installed)."""
    global _original
    with _lock:
        if _original is not None:
            socket.create_connection = _original
            _original = None


def installed() -> bool:
    """Whether ``install()`` is in effect."""
    return getattr(socket.create_connection, "__hev2_installed__", False)
