"""A loopback HTTP server for the client integration tests: answers every
GET with the client's address, on 127.0.0.1 or ::1."""

from __future__ import annotations

import http.server
import socket
import threading
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def http_server(host: str, port: int = 0) -> Iterator[int]:
    class Server(http.server.ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        daemon_threads = True

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
