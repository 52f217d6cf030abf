"""hev2.install()'s stand-in for ``urllib3.util.connection.create_connection``.

urllib3 (hence requests) does not call ``socket.create_connection``: it runs
its own getaddrinfo + connect loop in ``urllib3.util.connection``, looked up
through that module's attribute at call time by
``urllib3.connection.HTTPConnection._new_conn``. ``install()`` replaces that
attribute with the function made here; urllib3 1.26 and 2.x share its
signature ``(address, timeout, source_address, socket_options)``.

urllib3 is never imported here (importing it costs tens of ms, and a program
that does not use it must not pay for it): ``_install`` patches the module
when it is, or will be, imported.
"""

from __future__ import annotations

import socket
import sys

from ._connect import create_connection as hev2_create_connection
from ._options import DEFAULT_TIMEOUT, with_https_rr

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

    CreateConnection = Callable[..., socket.socket]

MODULE = "urllib3.util.connection"


def make_create_connection(
    original: CreateConnection, defaults: dict[str, Any], https_ports: frozenset[int] = frozenset()
) -> CreateConnection:
    """urllib3's create_connection with hev2's race; ``defaults`` are
    install()'s hev2 options, ``https_ports`` the ports its https_rr
    setting applies to (urllib3 wraps the socket in TLS for the URL's host
    afterwards: SNI and the certificate check stay the origin's)."""

    def create_connection(
        address: tuple[str, int],
        timeout: Any = DEFAULT_TIMEOUT,
        source_address: tuple[str, int] | None = None,
        socket_options: Iterable[tuple[int, int, Any]] | None = None,
    ) -> socket.socket:
        host, port = address
        # urllib3 strips the brackets of an IPv6 literal from a URL here.
        if host.startswith("["):
            host = host.strip("[]")
        try:
            host.encode("idna")
        except UnicodeError:
            # urllib3's own error for a name IDNA cannot encode
            # (LocationParseError), raised by its own function.
            return original(address, timeout, source_address, socket_options)
        options = dict(with_https_rr(defaults, port, https_ports))
        # urllib3 asks for IPv4 only when this host cannot bind an IPv6
        # address (HAS_IPV6); keep that decision.
        module = sys.modules.get(MODULE)
        allowed = getattr(module, "allowed_gai_family", None)
        if allowed is not None and "family" not in options and allowed() == socket.AF_INET:
            options["family"] = socket.AF_INET
        sock = hev2_create_connection((host, port), timeout, source_address, **options)
        try:
            # urllib3 sets these (TCP_NODELAY by default) before connect();
            # the race's sockets are the library's, so they are set on the
            # winner, right after. Options that only act before connect()
            # (a receive buffer's window scale ...) therefore do not act.
            for opt in socket_options or ():
                sock.setsockopt(*opt)
        except BaseException:
            sock.close()
            raise
        return sock

    create_connection.__doc__ = original.__doc__
    create_connection.__hev2_installed__ = True  # type: ignore[attr-defined]
    return create_connection
