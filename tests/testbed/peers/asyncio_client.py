#!/usr/bin/python3
"""Scenario-client peer: Python's asyncio loop.create_connection with
happy_eyeballs_delay=0.25 (its RFC 8305 mode), behind the shared contract.

Stdlib only; run with Debian's /usr/bin/python3.
Mapping: --open-timeout bounds the whole call (asyncio.wait_for);
--no-fast-fallback leaves happy_eyeballs_delay unset (serial tries);
--family 4|6 sets the family. asyncio has no resolution-only or
connect-only timeout and only the system resolver, so --resolv-timeout,
--connect-timeout and --resolver builtin are usage errors (exit 2).
"""
import argparse
import asyncio
import errno
import json
import socket
import sys
import time

EAI_NAMES = {getattr(socket, n): n for n in dir(socket) if n.startswith("EAI_")}
FAMILIES = {0: socket.AF_UNSPEC, 4: socket.AF_INET, 6: socket.AF_INET6}


def parse():
    p = argparse.ArgumentParser(prog="asyncio_client")
    p.add_argument("--resolv-timeout", type=int, default=0)
    p.add_argument("--connect-timeout", type=int, default=0)
    p.add_argument("--open-timeout", type=int, default=0)
    p.add_argument("--no-fast-fallback", action="store_true")
    p.add_argument("--family", type=int, choices=[4, 6], default=0)
    p.add_argument("--resolver", choices=["system", "builtin"], default="system")
    p.add_argument("host")
    p.add_argument("port", type=int)
    args = p.parse_args()  # exits 2 on a usage error, as the contract wants
    if args.resolv_timeout or args.connect_timeout or args.resolver != "system":
        print("asyncio_client: asyncio has no --resolv-timeout, --connect-timeout "
              "or built-in resolver", file=sys.stderr)
        sys.exit(2)
    return args


def emit(result):
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def failure(port, elapsed, err_no="", eai="", timeout="", message=""):
    return {"ok": False, "port": port, "elapsed_ms": elapsed,
            "error": {"errno": err_no, "eai": eai, "timeout": timeout, "message": message}}


async def connect(args):
    loop = asyncio.get_running_loop()
    coro = loop.create_connection(
        asyncio.Protocol, args.host, args.port, family=FAMILIES[args.family],
        happy_eyeballs_delay=None if args.no_fast_fallback else 0.25)
    if args.open_timeout:
        coro = asyncio.wait_for(coro, args.open_timeout / 1000)
    start = time.monotonic()
    try:
        transport, _ = await coro
    except asyncio.TimeoutError:
        ms = (time.monotonic() - start) * 1000
        return failure(args.port, ms, "ETIMEDOUT", "", "open_timeout", "open timeout expired")
    except socket.gaierror as e:
        ms = (time.monotonic() - start) * 1000
        return failure(args.port, ms, "", EAI_NAMES.get(e.errno, str(e.errno)), "", str(e))
    except OSError as e:
        ms = (time.monotonic() - start) * 1000
        return failure(args.port, ms, errno.errorcode.get(e.errno, ""), "", "", str(e))
    ms = (time.monotonic() - start) * 1000
    peer = transport.get_extra_info("peername")
    sock = transport.get_extra_info("socket")
    transport.close()
    family = "ipv6" if sock.family == socket.AF_INET6 else "ipv4"
    return {"ok": True, "address": peer[0], "family": family, "port": peer[1], "elapsed_ms": ms}


def main():
    args = parse()
    return emit(asyncio.run(connect(args)))


if __name__ == "__main__":
    sys.exit(main())
