"""hev2.install(): existing code (urllib, http.client, libraries built on
them) gets Happy Eyeballs without changes. Off unless called.

    PYTHONPATH=bindings/python/src /usr/bin/python3 examples/python/install_urllib.py
"""

import http.server
import socket
import threading
import time
import urllib.request

import hev2


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello over " + self.client_address[0].encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


server = V6Server(("::1", 0), Hello)
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]

# Defaults given to install() apply to every call: here a static address for
# a name no resolver knows (hev2 options such as resolv_timeout work alike).
hev2.install(hosts={"www.demo.test": ["::1"]})
try:
    start = time.monotonic()
    with urllib.request.urlopen(f"http://www.demo.test:{port}/", timeout=5) as r:
        print(f"urllib through hev2: {r.read()!r} in {(time.monotonic() - start) * 1000:.0f} ms")
    print(f"socket.create_connection is hev2's: {hev2.installed()}")
finally:
    hev2.uninstall()
print(f"after uninstall(): {hev2.installed()}")
server.shutdown()
