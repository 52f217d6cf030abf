"""The project's test DNS server for the tests: Go's tests/testdns, run
as the hev2-testdns command (tests/cmd/hev2-testdns), a child process of
the test.

    with DNSServer({"a.test": {"A": ["127.0.0.1"], "AAAA": {"never": True}}}) as dns:
        dns.address  # "127.0.0.1:40123": UDP and TCP
        dns.queries  # [("a.test", "A"), ("a.test", "AAAA")], as they arrived
        dns.set({"a.test": {"AAAA": ["::1"]}})  # entries added or replaced

A zone maps names to query types to entries: a list of addresses, answered
at once, or an object of addrs, rcode ("NXDOMAIN", "SERVFAIL", ...),
never, delay (seconds), hold_until ({"name": ..., "type": ...}: the
answer is held until that query arrived, the name being the entry's own if
left out) ... (the command's doc comment has them all). A name with no
entry is NXDOMAIN; a type a known name has no entry for is NODATA.

An "HTTPS" entry (RFC 9460) is a list of records, or an object whose
"records" are the list (with delay, never, rcode ... as above); no
records is NODATA. A record is written as its presentation form reads:

    {"priority": 1, "target": ".", "port": 8443, "alpn": ["h2"],
     "no-default-alpn": True, "ipv4hint": ["127.0.0.1"], "ipv6hint": ["::1"],
     "ech": base64.b64encode(ech_config_list).decode(), "mandatory": ["alpn"]}

priority 0 is AliasMode; target "." is the owner (for "_PORT._https.HOST",
the port-prefixed name asked for a port other than 443, HOST); a key of
no name is "keyNNNNN". {"malformed": KIND} (port3, truncated, ...) and
{"rdata": BASE64} make a record that does not decode:

    dns.set({"svc.test": {"A": ["127.0.0.1"]},
             "_8080._https.svc.test": {"HTTPS": [{"priority": 1, "port": 8443}]}})

The server is ready when the constructor returns: it has printed the
address it serves on. It stops when the `with` block ends, and on its own
when this process ends (its stdin closes), so it never outlives a test.

The command is $HEV2_TESTDNS (mk/python.mk sets it), or else the
checkout's build/hev2-testdns (`make testdns`).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

Zone = dict[str, dict[str, Any]]

BINARY = os.environ.get("HEV2_TESTDNS") or str(Path(__file__).resolve().parents[3] / "build" / "hev2-testdns")


class DNSServer:
    def __init__(self, zone: Zone | None = None, listen: str = "127.0.0.1:0") -> None:
        try:
            self.proc = subprocess.Popen(
                [BINARY, "-listen", listen], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        except FileNotFoundError:
            raise RuntimeError(f"no {BINARY}: build it with `make testdns` (or set HEV2_TESTDNS)") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in: IO[str] = self.proc.stdin
        self._out: IO[str] = self.proc.stdout
        self._lock = threading.Lock()
        try:
            ready = self._out.readline()
            if not ready:
                raise RuntimeError(f"{BINARY} -listen {listen} exited ({self.proc.wait()}) before serving")
            self.address = ready.strip()
            if zone:
                self.set(zone)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> DNSServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set(self, zone: Zone) -> None:
        """Adds zone's entries, replacing those of the same (name, type)."""
        self._command({"zone": zone})

    @property
    def queries(self) -> list[tuple[str, str]]:
        """Every query received so far, (name, type), oldest first."""
        return [(q["name"], q["type"]) for q in self._command({"queries": True})["queries"]]

    def _command(self, command: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            try:
                self._in.write(json.dumps(command) + "\n")
                self._in.flush()
                line = self._out.readline()
            except OSError as e:
                line = ""
                cause: BaseException | None = e
            else:
                cause = None
            if not line:
                raise RuntimeError(f"hev2-testdns exited ({self.proc.poll()})") from cause
            reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise ValueError(f"hev2-testdns: {reply['error']} (command {command!r})")
        return reply

    def close(self) -> None:
        """Stops the server: its stdin closes, it exits."""
        if self.proc.returncode is not None:
            return
        try:
            self._in.close()
        except OSError:
            pass  # it is gone already
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._out.close()
