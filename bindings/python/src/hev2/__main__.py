"""``python -m hev2 HOST PORT``: connect, and print the race as a timeline
and the establishment report's summary, as ``hev2-connect -v`` does.

The timeline is read from the race's report (``create_connection(...,
report=True)``, ``hev2.Report``): each lookup and attempt with its start
and its end, in time order. Exit status: 0 connected, 1 could not connect
(one line on stderr says why), 2 usage error.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from typing import Any

import hev2

from ._lib import LibraryError
from ._report import Report

PROG = "python -m hev2"
EXIT_CONNECTED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# Event names as the library's trace names them (hev2_event_name).
ATTEMPT_END = {"connected": "attempt-won", "lost": "attempt-closed"}
RECORD_NAMES = {"ipv6": "AAAA", "ipv4": "A"}


def port_number(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: a number from 1 to 65535")
    return int(text)


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid timeout {text!r}: seconds, a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"invalid timeout {text!r}: more than 0 seconds")
    return value


def static_entry(text: str) -> tuple[str, list[str]]:
    name, sep, addresses = text.partition(":")
    if not name or not sep or not addresses:
        raise argparse.ArgumentTypeError(f"invalid --resolve {text!r}: NAME:ADDR[,ADDR]")
    return name, addresses.split(",")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Connect to HOST:PORT with Happy Eyeballs v2 (RFC 8305) and print the race "
        "(lookups and attempts in time order) and its report, like hev2-connect -v.",
        epilog="Exit status: 0 connected, 1 could not connect, 2 usage error.",
    )
    p.add_argument("host", metavar="HOST", help="a name or an IP address")
    p.add_argument("port", metavar="PORT", type=port_number, help="a TCP port (1-65535)")
    p.add_argument("--connect-timeout", type=seconds, metavar="SECONDS", help="bound the connection phase")
    p.add_argument(
        "--resolve",
        type=static_entry,
        metavar="NAME:ADDR[,ADDR]",
        help="use these addresses for NAME, no lookup (as hev2-connect --resolve)",
    )
    p.add_argument(
        "--nameserver",
        metavar="ADDR[:PORT]",
        help="ask this DNS server with the built-in resolver instead of the system's getaddrinfo",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {hev2.__version__}")
    return p


def errno_name(code: int) -> str:
    return errno.errorcode.get(code, str(code))


def eai_name(code: int) -> str:
    for name in dir(socket):
        if name.startswith("EAI_") and getattr(socket, name) == code:
            return name
    return str(code)


def timeline(rep: Report) -> list[tuple[float, str, str]]:
    """(seconds since the start, event, detail) of each lookup's and
    attempt's start and end, in time order (a start before its end)."""
    events = []
    for lookup in rep.lookups:
        if lookup.state == "not-asked":
            continue
        record = RECORD_NAMES.get(lookup.family, lookup.family)
        events.append((lookup.start, "lookup-started", record))
        detail = record
        if lookup.state == "answered":
            detail += f": {lookup.addresses} address{'es' if lookup.addresses != 1 else ''}"
        if lookup.eai:
            detail += f" ({eai_name(lookup.eai)})"
        if lookup.errno:
            detail += f" ({errno_name(lookup.errno)})"
        events.append((lookup.end, f"lookup-{lookup.state}", detail))
    for i, a in enumerate(rep.attempts):
        where = f"#{i} {'[' + a.address + ']' if a.family == 'ipv6' else a.address} port {a.port}"
        if a.synthesized_from:
            where += f" (from {a.synthesized_from})"
        events.append((a.start, "attempt-started", where))
        end = where + (f" ({errno_name(a.errno)})" if a.errno else "")
        events.append((a.end, ATTEMPT_END.get(a.outcome, "attempt-" + a.outcome), end))
    events.append((rep.elapsed, "done", rep.timeout))
    # sorted() is stable: events at the same time keep the order above.
    return sorted(events, key=lambda e: e[0])


def milliseconds(value: float) -> str:
    return f"{value * 1000:.3f}"


def summary(rep: Report) -> str:
    """The report's one line, as hev2-connect -v ends its timeline."""
    if rep.connected:
        line = f"report: {rep.family} won ({rep.reason}) in {milliseconds(rep.elapsed)} ms; "
    else:
        line = f"report: nothing connected in {milliseconds(rep.elapsed)} ms; "
    phases = []
    for name, phase in (
        ("resolving", rep.resolving),
        ("resolution delay", rep.resolution_delay),
        ("connecting", rep.connecting),
    ):
        if phase is None:
            phases.append(f"{name} -")
        else:
            text = f"{name} {milliseconds(phase.duration)} ms ({milliseconds(phase.start)}-{milliseconds(phase.end)})"
            if name == "resolution delay" and rep.resolution_delay_expired:
                text += " expired"
            phases.append(text)
    line += ", ".join(phases)
    attempts = []
    for i, a in enumerate(rep.attempts):
        text = f"#{i} {a.outcome}" + (f" {errno_name(a.errno)}" if a.errno else "")
        text += f" {milliseconds(a.duration)} ms"
        if a.service:
            text += f" (service {a.service}, {a.origin})"
        attempts.append(text)
    if attempts:
        line += "; attempts " + ", ".join(attempts)
    if rep.https is not None:
        line += f"; HTTPS {rep.https.state}: services {len(rep.https.services)}"
    return line


def print_race(host: str, port: int, rep: Report | None) -> None:
    """The race: nothing when it never started (its report is None)."""
    if rep is None:
        return
    print(f"hev2 {host} port {port}")
    for at, event, detail in timeline(rep):
        print(f"{milliseconds(at):>9} ms  {event:<17} {detail}".rstrip())
    print(summary(rep))


def reason(e: BaseException) -> str:
    """The library's one-line account of a failure (its note), else the exception's text."""
    for note in getattr(e, "__notes__", ()):
        if note.startswith("hev2: "):
            return str(note[len("hev2: ") :])
    return str(e)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)  # a usage error exits with 2, --help with 0
    options: dict[str, Any] = {"connect_timeout": args.connect_timeout}
    if args.resolve:
        options["hosts"] = dict([args.resolve])
    if args.nameserver:
        options.update(resolver="builtin", nameservers=[args.nameserver])
    try:
        sock = hev2.create_connection((args.host, args.port), report=True, **options)
    except (ValueError, TypeError) as e:  # refused before any connection was tried
        print(f"{PROG}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, LibraryError) as e:
        print_race(args.host, args.port, getattr(e, "hev2_report", None))
        print(f"{PROG}: cannot connect to {args.host} port {args.port}: {reason(e)}", file=sys.stderr)
        return EXIT_FAILED
    with sock:
        rep = hev2.report_of(sock)
        print_race(args.host, args.port, rep)
        peer = sock.getpeername()
        family = "ipv6" if sock.family == socket.AF_INET6 else "ipv4"
        elapsed = f" in {milliseconds(rep.elapsed)} ms" if rep is not None else ""
        print(f"connected to {peer[0]} port {peer[1]} ({family}){elapsed}")
    return EXIT_CONNECTED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
