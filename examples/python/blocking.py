"""hev2.create_connection in place of socket.create_connection.

    PYTHONPATH=bindings/python/src /usr/bin/python3 examples/python/blocking.py

IPv6 is tried first, as the RFC asks; when it does not answer, IPv4 starts
250 ms later instead of after a connect timeout, and the winner is a plain
socket.socket.
"""

import socket
import time

import hev2
from loopback_demo import NAME, broken_ipv6_server

with broken_ipv6_server() as (port, hosts):
    start = time.monotonic()
    with hev2.create_connection((NAME, port), timeout=5, hosts=hosts) as sock:
        took = time.monotonic() - start
        print(f"hev2:   connected to {sock.getpeername()[0]} in {took * 1000:.0f} ms; got {sock.recv(16)!r}")
        print(f"        a real {type(sock).__name__}, timeout {sock.gettimeout()} s as socket.create_connection leaves it")

    # Errors are the ones Python users already catch.
    try:
        hev2.create_connection(("127.0.0.1", 1))
    except ConnectionRefusedError as e:
        print(f"refused: {e!r}")
    try:
        hev2.create_connection(("::1", port), open_timeout=0.3)
    except TimeoutError as e:
        print(f"timeout: {e} (which: {e.timeout_kind})")
    try:
        hev2.create_connection((NAME, port), hosts={NAME: ["::1"]}, connect_timeout=0.2, all_errors=True)
    except* TimeoutError as group:
        print(f"all_errors=True: {len(group.exceptions)} timeout(s) in an ExceptionGroup")

    # What socket.create_connection does with the same server: ::1 first,
    # for the whole timeout, then 127.0.0.1 (here ::1 only is given a 1 s timeout).
    start = time.monotonic()
    with socket.socket(socket.AF_INET6) as s6:
        s6.settimeout(1)
        try:
            s6.connect(("::1", port))
        except TimeoutError:
            pass
    with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        print(f"serial: connected to {sock.getpeername()[0]} in {(time.monotonic() - start) * 1000:.0f} ms")
