"""A small, real DNS server on loopback UDP for the resolver tests.

It answers A and AAAA queries from a zone given as a dict, says NXDOMAIN
for names it does not know, and can stay silent for chosen (name, type)
pairs, the way a broken middlebox drops AAAA queries. It can also hold an
answer back until another query has arrived (``held={("a.test", "AAAA"):
("a.test", "A")}``): an order of events fixed without any timing.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
from typing import Iterable

TYPE_A, TYPE_AAAA = 1, 28
TYPE_NAMES = {TYPE_A: "A", TYPE_AAAA: "AAAA"}
RCODE_NXDOMAIN = 3


def parse_question(msg: bytes) -> tuple[int, int, str, int, int]:
    """(id, flags, name, qtype, end of question) of a query."""
    qid, flags, qdcount = struct.unpack("!HHH", msg[:6])
    if qdcount != 1:
        raise ValueError("want exactly one question")
    labels, i = [], 12
    while msg[i]:
        n = msg[i]
        labels.append(msg[i + 1 : i + 1 + n].decode("ascii").lower())
        i += 1 + n
    qtype, _qclass = struct.unpack("!HH", msg[i + 1 : i + 5])
    return qid, flags, ".".join(labels), qtype, i + 5


class DNSServer:
    def __init__(
        self,
        zone: dict[str, dict[str, Iterable[str]]],
        silent: Iterable[tuple[str, str]] = (),
        held: dict[tuple[str, str], tuple[str, str]] | None = None,
        bind: tuple[str, int] = ("127.0.0.1", 0),
    ) -> None:
        self.zone = {name.lower().rstrip("."): recs for name, recs in zone.items()}
        self.silent = {(n.lower(), t) for n, t in silent}
        self.queries: list[tuple[str, str]] = []
        self.held = dict(held or {})
        self.waiting: list[tuple[tuple[str, str], bytes, object]] = []  # (trigger, reply, peer)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(bind)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.stopping = False

    def __enter__(self) -> "DNSServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # Closing the socket does not wake a thread blocked in recvfrom on
        # it: a datagram to itself does, and the flag makes it stop.
        self.stopping = True
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as poke:
            poke.sendto(b"", self.sock.getsockname())
        self.thread.join(timeout=5)
        self.sock.close()

    def serve(self) -> None:
        while True:
            try:
                msg, peer = self.sock.recvfrom(1500)
            except OSError:
                return  # closed
            if self.stopping:
                return
            try:
                reply = self.answer(msg)
            except (ValueError, IndexError, struct.error):
                continue
            out = []
            if reply is not None:
                trigger = self.held.get(self.queries[-1])
                if trigger is not None and trigger not in self.queries:
                    self.waiting.append((trigger, reply, peer))
                else:
                    out.append((reply, peer))
            ready = [w for w in self.waiting if w[0] in self.queries]
            self.waiting = [w for w in self.waiting if w[0] not in self.queries]
            out += [(r, p) for _, r, p in ready]
            try:
                for r, p in out:
                    self.sock.sendto(r, p)
            except OSError:
                return

    def answer(self, msg: bytes) -> bytes | None:
        qid, flags, name, qtype, end = parse_question(msg)
        kind = TYPE_NAMES.get(qtype, str(qtype))
        self.queries.append((name, kind))
        if (name, kind) in self.silent:
            return None
        records = self.zone.get(name)
        rcode = RCODE_NXDOMAIN if records is None else 0
        answers = b""
        count = 0
        for addr in (records or {}).get(kind, ()):
            rdata = ipaddress.ip_address(addr).packed
            answers += struct.pack("!HHHIH", 0xC00C, qtype, 1, 60, len(rdata)) + rdata
            count += 1
        # QR, the query's opcode and RD, RA, rcode.
        out_flags = 0x8000 | (flags & 0x7900) | 0x0080 | rcode
        return struct.pack("!HHHHHH", qid, out_flags, 1, count, 0, 0) + msg[12:end] + answers
