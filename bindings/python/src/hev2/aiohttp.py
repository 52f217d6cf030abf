"""An aiohttp connector whose connections are made by hev2's race.

    session = aiohttp.ClientSession(connector=hev2.aiohttp.TCPConnector())

aiohttp 3.8 resolves a name (AF_UNSPEC, so a silent AAAA holds up the A
answer) and then tries the addresses one after another, each until it fails:
a resolver of hev2's could only hand it addresses to try in that same way.
The race has to make the connection itself, and aiohttp 3.8 has no public
hook that takes a connected socket. This connector therefore overrides two
PRIVATE methods of ``aiohttp.TCPConnector``, guarded by aiohttp's version
(3.8 only: the version tested; any other raises ``RuntimeError`` when the
connector is made, never a silent fallback):

- ``_resolve_host`` resolves nothing: it hands the name back as the one
  "address" to try (aiohttp's resolver and DNS cache are not used; hev2
  looks both families up, each on its own, on every connection);
- ``_wrap_create_connection`` runs the race (``hev2.aio.create_connection``)
  where aiohttp would call ``loop.create_connection``, under aiohttp's own
  ``sock_connect`` timeout and with aiohttp's own error mapping (TLS
  certificate and handshake errors, ``ClientConnectorError``).

Everything else is aiohttp's: the TLS context and fingerprint checks, the
connection pool and limits, proxies (the proxy itself is reached through the
race), and its protocol, which sets TCP_NODELAY on the socket as usual.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp.client_exceptions import (
    ClientConnectorCertificateError,
    ClientConnectorError,
    ClientConnectorSSLError,
    cert_errors,
    ssl_errors,
)
from aiohttp.helpers import ceil_timeout

from ._connect import validate_defaults
from ._options import https_rr_ports, with_https_rr

if TYPE_CHECKING:
    from aiohttp.client_reqrep import ClientRequest
    from aiohttp.tracing import Trace

__all__ = ["SUPPORTED_VERSIONS", "TCPConnector"]

# The aiohttp versions whose private methods this connector was written
# against and tested with (major, minor).
SUPPORTED_VERSIONS = ((3, 8),)


def _version() -> tuple[int, int]:
    major, minor = aiohttp.__version__.split(".")[:2]
    return int(major), int(minor)


class TCPConnector(aiohttp.TCPConnector):
    """``aiohttp.TCPConnector`` (same arguments; ``family`` and ``local_addr``
    restrict and bind the race, ``resolver``/``use_dns_cache`` are unused)
    whose connections are made by hev2's race. ``hev2_options`` are hev2
    keyword arguments (``resolv_timeout``, ``connection_attempt_delay`` ...).

    ``hev2_options["https_rr"]`` is a setting: True asks the HTTPS record
    (Happy Eyeballs v3) for connections to port 443, a collection of ports
    for those (``{443, 8443}``); the record may redirect the connection to
    another port, while aiohttp's TLS still sends the URL's host as its
    server name and checks the certificate against it."""

    def __init__(self, *args: Any, hev2_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if _version() not in SUPPORTED_VERSIONS:
            raise RuntimeError(
                f"hev2.aiohttp.TCPConnector relies on private methods of aiohttp "
                f"{', '.join(f'{a}.{b}' for a, b in SUPPORTED_VERSIONS)}; this is aiohttp {aiohttp.__version__}"
            )
        options = dict(hev2_options or {})
        https_ports = https_rr_ports(options.pop("https_rr", False))
        validate_defaults(options)
        super().__init__(*args, **kwargs)
        self._hev2_options = options
        self._hev2_https_ports = https_ports

    async def _resolve_host(self, host: str, port: int, traces: list[Trace] | None = None) -> list[dict[str, Any]]:
        # The name itself, for _wrap_create_connection's race to resolve.
        return [{"hostname": host, "host": host, "port": port, "family": self._family, "proto": 0, "flags": 0}]

    async def _wrap_create_connection(  # type: ignore[override]
        self,
        protocol_factory: Any,
        host: str,
        port: int,
        *,
        req: ClientRequest,
        timeout: aiohttp.ClientTimeout,
        client_error: type[Exception] = ClientConnectorError,
        **kwargs: Any,
    ) -> tuple[asyncio.Transport, aiohttp.client_proto.ResponseHandler]:
        from . import aio

        options = dict(with_https_rr(self._hev2_options, port, self._hev2_https_ports))
        if kwargs.get("family"):
            options.setdefault("family", kwargs["family"])
        if kwargs.get("local_addr"):
            options["local_addr"] = kwargs["local_addr"]
        try:
            async with ceil_timeout(timeout.sock_connect):
                transport, protocol = await aio.create_connection(
                    protocol_factory,
                    host,
                    port,
                    ssl=kwargs.get("ssl"),
                    server_hostname=kwargs.get("server_hostname"),
                    **options,
                )
                return transport, protocol
        except cert_errors as exc:
            raise ClientConnectorCertificateError(req.connection_key, exc) from exc
        except ssl_errors as exc:
            raise ClientConnectorSSLError(req.connection_key, exc) from exc
        except OSError as exc:
            if exc.errno is None and isinstance(exc, asyncio.TimeoutError):
                raise
            raise client_error(req.connection_key, exc) from exc
