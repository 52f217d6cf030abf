"""requests, httpx and aiohttp with hev2, one line each. Here a name only
hev2's static address list knows (www.demo.test -> ::1) points at a local
server; with real names nothing but the one line changes.

    PYTHONPATH=bindings/python/src /usr/bin/python3 examples/python/http_clients.py
"""

import asyncio
import http.server
import socket
import threading

import aiohttp
import httpx
import requests

import hev2


class Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = b"hello over " + self.client_address[0].encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True


server = V6Server(("::1", 0), Hello)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://www.demo.test:{server.server_address[1]}/"
options = {"hosts": {"www.demo.test": ["::1"]}}  # any hev2 option; usually none

# requests (and urllib3, urllib, http.client): hev2.install(), off unless called.
hev2.install(**options)
try:
    print("requests:", requests.get(url, timeout=5).text)
finally:
    hev2.uninstall()

# httpx: a transport, blocking or asyncio.
with httpx.Client(transport=hev2.httpx.HTTPTransport(**options)) as client:
    print("httpx:", client.get(url).text)


async def main() -> None:
    async with httpx.AsyncClient(transport=hev2.httpx.AsyncHTTPTransport(**options)) as client:
        print("httpx async:", (await client.get(url)).text)
    # aiohttp 3.8: a connector.
    async with aiohttp.ClientSession(connector=hev2.aiohttp.TCPConnector(hev2_options=options)) as session:
        async with session.get(url) as r:
            print("aiohttp:", await r.text())


asyncio.run(main())
server.shutdown()
