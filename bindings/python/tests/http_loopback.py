"""A loopback HTTP server for the client integration tests: answers every
GET with the client's address, on 127.0.0.1 or ::1; over TLS too
(https_server), keeping the server names the clients sent (SNI)."""

from __future__ import annotations

import http.server
import socket
import ssl
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def http_server(host: str, port: int = 0, tls: ssl.SSLContext | None = None) -> Iterator[int]:
    """tls: a server context; each accepted connection is wrapped in it (the
    handshake runs in the connection's own thread)."""

    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True

        def get_request(self) -> tuple[Any, Any]:
            sock, addr = super().get_request()
            if tls is not None:
                sock = tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            return sock, addr

    class Hello(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = f"hello from {self.client_address[0]}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = Server((host, port), Hello)
    t = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    t.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def certificate(directory: Path, name: str) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for name (and its key): the
    clients' CA file as well."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName=DNS:{name}"],
        check=True, capture_output=True,
    )
    return cert, key


@contextmanager
def https_server(host: str, cert: Path, key: Path) -> Iterator[tuple[int, list[str | None]]]:
    """An HTTPS server with cert; yields its port and the list of server
    names (SNI) its clients sent, in order (None: a client sent none)."""
    names: list[str | None] = []
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)

    def sni(_sock: Any, name: str | None, _ctx: Any) -> None:
        names.append(name)

    ctx.sni_callback = sni
    with http_server(host, tls=ctx) as port:
        yield port, names
