"""trace_files: the race written by the library (hev2_write_trace) as a
picture, qlog and a Chrome trace, for a won and a failed race; bad values
refused before anything starts. The files' content is checked in core's
tests; here, that the binding reaches the one renderer and its errors."""

from __future__ import annotations

import json
import socket

import pytest

import hev2
from loopback import fd_count, listener, refusing


def test_won_race_written_in_every_format(tmp_path):
    files = {"svg": tmp_path / "race.svg", "qlog": tmp_path / "race.qlog", "chrome": tmp_path / "race.json"}
    with listener("127.0.0.1") as port:
        with hev2.create_connection(("127.0.0.1", port), trace_files=files) as s:
            assert s.getpeername()[:2] == ("127.0.0.1", port)
    svg = files["svg"].read_text()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert 'data-outcome="won"' in svg
    records = [json.loads(r) for r in files["qlog"].read_text().split("\x1e") if r]
    assert records[0]["file_schema"] == "urn:ietf:params:qlog:file:sequential"
    names = [r["name"] for r in records[1:]]
    assert "hev3:connection_selected" in names and names[-1] == "hev3:metrics"
    chrome = json.loads(files["chrome"].read_text())
    phases = [e["ph"] for e in chrome["traceEvents"] if e["name"] == "attempt"]
    assert phases == ["B", "E"]


def test_asyncio_writes_them_too(tmp_path):
    import asyncio

    import hev2.aio

    path = tmp_path / "aio.svg"

    async def run(port: int) -> None:
        reader, writer = await hev2.aio.open_connection("127.0.0.1", port, trace_files={"svg": path})
        writer.close()
        await writer.wait_closed()

    with listener("127.0.0.1") as port:
        asyncio.run(run(port))
    assert 'data-outcome="won"' in path.read_text()


def test_failed_race_written_too(tmp_path):
    path = tmp_path / "refused.qlog"
    with refusing("127.0.0.1") as port:
        with pytest.raises(ConnectionRefusedError):
            hev2.create_connection(("127.0.0.1", port), trace_files={"qlog": str(path)})
    names = [json.loads(r)["name"] for r in path.read_text().split("\x1e")[2:]]
    assert "hev3:connection_aborted" in names


def test_unwritable_file_raises_and_leaks_nothing(tmp_path):
    before = fd_count()
    with listener("127.0.0.1") as port:
        with pytest.raises(OSError) as e:
            hev2.create_connection(("127.0.0.1", port), trace_files={"svg": tmp_path / "no-dir" / "race.svg"})
    assert "hev2_write_trace: open" in str(e.value)
    assert fd_count() == before  # the won socket was closed, the handle released


@pytest.mark.parametrize(
    "value, exc",
    [({"png": "x.png"}, ValueError), ({"svg": ""}, ValueError), (["svg"], TypeError), ({"qlog": 5}, TypeError)],
)
def test_bad_trace_files_refused(value, exc):
    with pytest.raises(exc):
        hev2.create_connection(("127.0.0.1", 9), trace_files=value)
