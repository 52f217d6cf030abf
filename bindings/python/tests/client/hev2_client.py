"""The scenario client: connect once, print one line of JSON, exit 0/1/2.

    hev2-client [--asyncio] [--resolv-timeout MS] [--connect-timeout MS]
        [--open-timeout MS] [--no-fast-fallback] [--family 4|6]
        [--resolver system|builtin] [--nameserver ADDR]... [--static NAME:ADDR[,ADDR]]...
        [--no-nat64] [--repeat N] [--no-history] [--https-rr] [--alpn LIST] [--ech]
        HOST PORT

--https-rr asks the HTTPS record too (https_rr=True), --alpn LIST gives the
protocols the caller's TLS offers (comma-separated: alpn=[...]), --ech says
it uses ECH (ech=True). The line's "svcb" is what the HTTPS query gave
(hev2.service_of), as hev2-connect prints it: null when no HTTPS query was
made, else {"state": ..., "service": null | {"priority", "target", "port",
"alpn", "ech"}} (service: the record the winner came from, null when it
came from the origin's own addresses; port 0: the origin's port; ech: the
record carries an ECH configuration).

--repeat N connects N times, one after the other, in this process: the line
is the first connect's, with "runs" listing every one (the Python API tells
no attempt order, so runs carry no "first_attempt").

It implements the project's shared client contract so that the test bed
runs the same scenario table through Python as through Go, C and Ruby:
exit 0 on success, 1 on connection failure, 2 on usage error. It goes
through the public API (hev2.create_connection, or hev2.aio with
--asyncio), so the scenarios test what users call. It is test code, not
part of the package: hev2-client and hev2-client-asyncio beside it run it
with this checkout's bindings/python/src on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
from typing import Any, NoReturn

import hev2

from hev2._errors import Failure


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parse(argv: list[str]) -> argparse.Namespace:
    p = Parser(prog="hev2-client", description="Connect once with hev2 and print the outcome as JSON.")
    p.add_argument("--asyncio", action="store_true", help="use hev2.aio.open_connection instead of the blocking call")
    p.add_argument("--resolv-timeout", type=float, metavar="MS")
    p.add_argument("--connect-timeout", type=float, metavar="MS")
    p.add_argument("--open-timeout", type=float, metavar="MS")
    p.add_argument("--no-fast-fallback", action="store_true")
    p.add_argument("--family", choices=("4", "6"))
    p.add_argument("--resolver", choices=("system", "builtin"))
    p.add_argument("--nameserver", action="append", default=[], metavar="ADDR", help="for --resolver builtin")
    p.add_argument("--static", action="append", default=[], metavar="NAME:ADDR[,ADDR]", help="static addresses")
    p.add_argument("--no-nat64", action="store_true", help="never reach IPv4 through a NAT64 prefix")
    # The contract's optional trace files (trace_files: the library writes them).
    p.add_argument("--svg", metavar="FILE", help="write the race as a waterfall picture")
    p.add_argument("--qlog", metavar="FILE", help="write the race as qlog (JSON-SEQ)")
    p.add_argument("--chrome-trace", metavar="FILE", help="write the race as a Chrome trace")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="connect N times, one after the other")
    p.add_argument("--no-history", action="store_true", help="neither read nor feed the network's history")
    p.add_argument("--https-rr", action="store_true", help="ask the HTTPS record (RFC 9460) too")
    p.add_argument("--alpn", metavar="LIST", help="the protocols your TLS offers, comma-separated (default h2,http/1.1)")
    p.add_argument("--ech", action="store_true", help="your TLS uses ECH: wait for the HTTPS answer")
    p.add_argument("host")
    p.add_argument("port")
    return p.parse_args(argv)


def options(args: argparse.Namespace) -> dict[str, Any]:
    def seconds(ms: float | None) -> float | None:
        # Its range is the library's rule: a refusal is a ValueError, a
        # usage error too (main).
        return None if ms is None else ms / 1000

    kw: dict[str, Any] = {
        "resolv_timeout": seconds(args.resolv_timeout),
        "connect_timeout": seconds(args.connect_timeout),
        "open_timeout": seconds(args.open_timeout),
        "fast_fallback": not args.no_fast_fallback,
    }
    if not 1 <= args.repeat <= 1000:
        raise UsageError(f"--repeat wants 1..1000, got {args.repeat}")
    if args.no_history:
        kw["history"] = False
    if args.family:
        kw["family"] = socket.AF_INET if args.family == "4" else socket.AF_INET6
    if args.resolver:
        kw["resolver"] = args.resolver
    if args.no_nat64:
        kw["nat64"] = False
    if args.nameserver:
        kw["nameservers"] = args.nameserver
    if args.https_rr:
        kw["https_rr"] = True
    if args.alpn is not None:
        # Each entry is the package's to check (an empty one is a ValueError: usage).
        kw["alpn"] = args.alpn.split(",")
    if args.ech:
        kw["ech"] = True
    files = {k: v for k, v in (("svg", args.svg), ("qlog", args.qlog), ("chrome", args.chrome_trace)) if v}
    if files:
        kw["trace_files"] = files
    if args.static:
        hosts: dict[str, list[str]] = {}
        for entry in args.static:
            name, sep, addrs = entry.partition(":")
            if not sep or not name or not addrs:
                raise UsageError(f"--static wants NAME:ADDR[,ADDR...], got {entry!r}")
            hosts.setdefault(name, []).extend(a.strip("[]") for a in addrs.split(","))
        kw["hosts"] = hosts
    return kw


def connect_blocking(host: str, port: str, kw: dict[str, Any]) -> socket.socket:
    # timeout=None: the contract's explicit timeouts are the only bounds.
    return hev2.create_connection((host, port), None, **kw)


def connect_asyncio(host: str, port: str, kw: dict[str, Any]) -> tuple[tuple[Any, ...], float, hev2.HTTPSOutcome | None]:
    """(peer, seconds, HTTPS outcome): only open_connection is timed, not
    the loop's set-up."""

    async def run() -> tuple[tuple[Any, ...], float, hev2.HTTPSOutcome | None]:
        start = time.monotonic()
        try:
            reader, writer = await hev2.aio.open_connection(host, port, **kw)
        except BaseException as e:
            e.elapsed = time.monotonic() - start  # type: ignore[attr-defined]
            raise
        elapsed = time.monotonic() - start
        peer = writer.get_extra_info("peername")
        service = hev2.service_of(writer)
        writer.close()  # through the transport: the loop owns the fd
        await writer.wait_closed()
        return peer, elapsed, service

    return asyncio.run(run())


def svcb(outcome: hev2.HTTPSOutcome | None) -> dict[str, Any] | None:
    """The contract's "svcb": hev2-connect's words for the HTTPS outcome (a
    race that ended before the answer, "pending", is its "timeout")."""
    if outcome is None:
        return None
    svc = outcome.service
    return {
        "state": "timeout" if outcome.state == "pending" else outcome.state,
        "service": None
        if svc is None
        else {"priority": svc.priority, "target": svc.target, "port": svc.port, "alpn": list(svc.alpn), "ech": svc.ech is not None},
    }


def success(peer: tuple[Any, ...], elapsed: float, service: hev2.HTTPSOutcome | None) -> dict[str, Any]:
    address = peer[0]
    return {
        "ok": True,
        "address": address,
        "family": "ipv6" if ":" in address else "ipv4",
        "port": peer[1],
        "elapsed_ms": round(elapsed * 1000, 3),
        "svcb": svcb(service),
    }


def failure(exc: BaseException, elapsed: float) -> dict[str, Any]:
    f: Failure | None = getattr(exc, "hev2_failure", None)
    error = (
        {"errno": f.errno_name, "eai": f.eai_name, "timeout": f.timeout_kind, "message": f.message}
        if f is not None
        else {"errno": "", "eai": "", "timeout": "", "message": f"{type(exc).__name__}: {exc}"}
    )
    return {"ok": False, "elapsed_ms": round(elapsed * 1000, 3), "error": error, "svcb": svcb(getattr(exc, "hev2_service", None))}


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
        kw = options(args)
    except UsageError as e:
        print(f"hev2-client: {e}", file=sys.stderr)
        return 2
    try:
        # Load the library and start its runtime first: elapsed_ms is the
        # connection's time, not the process's start-up.
        hev2.init()
        first, status = connect_once(args, kw)
        if args.repeat > 1:
            runs = [first]
            # The trace files are the first connect's.
            later = {k: v for k, v in kw.items() if k != "trace_files"}
            for _ in range(args.repeat - 1):
                run, st = connect_once(args, later)
                runs.append(run)
                status = status or st
            first = dict(first, runs=runs)
    except (ValueError, TypeError, OverflowError) as e:
        # Bad input the package refused before connecting.
        print(f"hev2-client: {e}", file=sys.stderr)
        return 2
    except (hev2.LibraryError, hev2.ForkedError) as e:
        # Not a connection failure: the library cannot be used at all.
        print(f"hev2-client: {e}", file=sys.stderr)
        return 2
    print(json.dumps(first))
    return status


def connect_once(args: argparse.Namespace, kw: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """One connect: its contract fields and its exit status."""
    start = time.monotonic()
    try:
        if args.asyncio:
            peer, elapsed, service = connect_asyncio(args.host, args.port, kw)
        else:
            with connect_blocking(args.host, args.port, kw) as sock:
                elapsed = time.monotonic() - start
                peer = sock.getpeername()
                service = hev2.service_of(sock)
    except (OSError, ExceptionGroup) as e:
        return failure(e, getattr(e, "elapsed", time.monotonic() - start)), 1
    return success(peer, elapsed, service), 0


if __name__ == "__main__":
    sys.exit(main())
