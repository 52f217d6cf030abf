# Types of the hev2ext extension (src/*.c), for type checkers.
import asyncio
import socket
from collections.abc import Callable, Generator
from typing import Any

LIBRARY_VERSION: int

class Error(OSError): ...
class CancelledError(Error): ...

class Connect:
    @property
    def status(self) -> int | None: ...
    @property
    def finished_ns(self) -> int: ...
    @property
    def delivered_ns(self) -> int: ...
    @property
    def route(self) -> str: ...
    @property
    def future(self) -> asyncio.Future[socket.socket] | None: ...
    def wait(self, timeout: float | None = None) -> socket.socket: ...
    def done(self) -> bool: ...
    def cancel(self) -> None: ...
    def add_done_callback(self, fn: Callable[[Connect], object], /) -> None: ...
    def __await__(self) -> Generator[Any, None, socket.socket]: ...

def connect(
    host: str,
    port: int | str,
    *,
    static_hosts: str | None = None,
    connection_attempt_delay: float | None = None,
    connect_timeout: float | None = None,
    open_timeout: float | None = None,
) -> Connect: ...
def connect_async(
    host: str,
    port: int | str,
    *,
    static_hosts: str | None = None,
    connection_attempt_delay: float | None = None,
    connect_timeout: float | None = None,
    open_timeout: float | None = None,
    route: str = "fd",
) -> Connect: ...
def stats() -> dict[str, int]: ...
def _shutdown() -> None: ...
def _testing_fill_pending_calls(
    host: str,
    port: int | str,
    *,
    static_hosts: str | None = None,
    connection_attempt_delay: float | None = None,
    connect_timeout: float | None = None,
    open_timeout: float | None = None,
) -> tuple[int, Connect]: ...
