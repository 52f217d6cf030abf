"""Converting the arguments of a connection to the library's types.

Only Python's own checks live here: a wrong type raises the TypeError a
Python user expects (with the argument's name), and what Python itself must
convert raises what Python raises for it (a host to IDNA, a str to a C
string without NUL, a port to 16 bits (OverflowError, as socket's
connect/bind), a service name through socket.getservbyname, seconds that
are NaN). The plain options, those of include/hev2.h whose @option note
gives their kind (timeouts, delays, flags, counts), are checked and
converted by _options_gen, generated from the notes with the rule of each
kind in _convert; the rest (source address, family, resolver, name
servers, static hosts, trace files, ALPN list) are checked here. Whether a value makes sense (ranges, empty or overlong hosts,
timeouts that exclude each other, a source address of the wrong family) is
the library's rule, stated once in its core: a value it refuses comes back
as HEV2_EHOST, EPORT or EOPTIONS, which ``_handle.check`` raises as the
exception socket.create_connection would (gaierror for a host no resolver
could answer, ValueError for the rest). The result is a plain
``ConnectRequest`` that ``_handle.options_for`` turns into the C options
struct (or into none at all: NULL when every option is the default).

Runs on every connection and is imported by ``import hev2``: nothing heavy
at import time (ipaddress is imported by the checks that need it), and a
call with default options does no work for the options it was not given.
"""

from __future__ import annotations

import math
import socket

from ._convert import c_int, flag, seconds
from ._options_gen import KEYWORDS, PlainOptions, keywords

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# socket.create_connection's sentinel: "use socket.getdefaulttimeout()".
DEFAULT_TIMEOUT: Any = socket._GLOBAL_DEFAULT_TIMEOUT  # type: ignore[attr-defined]

RESOLVERS = ("system", "builtin")

# The keyword arguments of **more that need more than their kind's check,
# with what they mean (the plain ones are include/hev2.h's, described there).
OWN_OPTIONS = {
    "family": "socket.AF_INET or socket.AF_INET6 to restrict the destinations (default: both)",
    "resolver": "'system' (getaddrinfo, one thread per family) or 'builtin' (cancellable DNS client)",
    "nameservers": "name servers for the builtin resolver: 'IP' or 'IP:port' / '[IPv6]:port' strings",
    "hosts": "static addresses: a mapping of host name to IP address strings, consulted before resolving",
    "trace_files": "write the race to files: a mapping of 'svg', 'qlog' or 'chrome' to a path",
    "alpn": "with https_rr: the protocols your TLS offers, in its order (default ['h2', 'http/1.1'])",
}

# The keyword arguments accepted through **more: the plain options, then
# the package's own.
MORE_OPTIONS = (*KEYWORDS, *OWN_OPTIONS)

# trace_files' keys: the library's trace formats (hev2_write_trace).
TRACE_FORMATS = ("svg", "qlog", "chrome")


class ConnectRequest(PlainOptions):
    """One connection's destination and options, checked and normalised.
    Read-only by convention (a plain class: cheaper to make than a frozen
    dataclass, and dataclasses would cost ``import hev2`` ~10 ms). The
    plain options (timeouts in seconds, None for "none"; delays; flags)
    are PlainOptions', generated from include/hev2.h: keyword arguments
    here."""

    __slots__ = (
        "host",
        "port",
        "family",
        "local_address",
        "local_port",
        "resolver",
        "nameservers",
        "hosts",
        "trace_files",
        "alpn",
        "socket_timeout",
        "connect_timeout_from_socket",
        # Not a field: _handle's C arguments for this request, made on its
        # first connect (a request of the common call serves many).
        "c_args",
    )
    # The fields: what the request is (equality, hash, repr).
    FIELDS = (*__slots__[:2], *PlainOptions.__slots__, *__slots__[2:-1])

    def __init__(
        self,
        host: str,
        port: int,
        family: int = socket.AF_UNSPEC,
        local_address: str | None = None,
        local_port: int = 0,
        resolver: str | None = None,
        nameservers: tuple[str, ...] = (),
        hosts: tuple[tuple[str, tuple[str, ...]], ...] = (),
        # (format, path) pairs: the race is recorded and written to each.
        trace_files: tuple[tuple[str, str], ...] = (),
        # The protocols the caller's TLS offers (None: the library's default).
        alpn: tuple[str, ...] | None = None,
        # The timeout the returned socket gets (socket.settimeout's argument).
        socket_timeout: float | None = None,
        # connect_timeout is socket_timeout (no bound of the library's own):
        # one longer than the library's longest is no bound in practice.
        connect_timeout_from_socket: bool = False,
        **options: Any,
    ) -> None:
        PlainOptions.__init__(self, **options)
        self.host = host
        self.port = port
        self.family = family
        self.local_address = local_address
        self.local_port = local_port
        self.resolver = resolver
        self.nameservers = nameservers
        self.hosts = hosts
        self.trace_files = trace_files
        self.alpn = alpn
        self.socket_timeout = socket_timeout
        self.connect_timeout_from_socket = connect_timeout_from_socket
        self.c_args: Any = None

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConnectRequest):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"ConnectRequest({fields})"

    def fd_blocks(self) -> bool:
        """Whether the winner's fd is asked of the library in blocking mode:
        when its socket is to block (no timeout), so that neither the
        library's fcntl nor a settimeout(None) ioctl is made twice."""
        return self.socket_timeout is None

    def default_options(self) -> bool:
        """True when every option the library takes is its default, so that
        hev2_connect can be given NULL options (host, port and the socket's
        own timeout are not options of the library)."""
        return (
            self.plain_defaults()
            and self.family == socket.AF_UNSPEC
            and self.local_address is None
            and self.local_port == 0
            and self.resolver is None
            and not self.nameservers
            and not self.hosts
            and not self.trace_files
            and self.alpn is None
        )


def host_of(value: Any) -> str:
    """The destination host as the library takes it: ASCII (a non-ASCII
    name in IDNA, as socket.getaddrinfo encodes it), no NUL (a C string)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError(f"host {value!r} is not ASCII") from None
    if not isinstance(value, str):
        raise TypeError(f"host must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError("host: embedded null character")
    if not value.isascii():
        # What socket.getaddrinfo does with a non-ASCII name.
        try:
            value = value.encode("idna").decode("ascii")
        except UnicodeError as e:
            raise ValueError(f"host {value!r} cannot be encoded with IDNA: {e}") from None
    return value


def port_of(value: Any, name: str = "port") -> int:
    """A port: an int, a numeric string or a service name, as 16 bits (0 is
    the library's to refuse as a destination)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int or a str, not bool")
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if isinstance(value, str):
        if value.isdigit():
            value = int(value)
        else:
            try:
                # /etc/services, like getaddrinfo's service lookup; no network.
                return socket.getservbyname(value, "tcp")
            except OSError:
                raise socket.gaierror(socket.EAI_SERVICE, f"Servname not supported for ai_socktype: {value!r}") from None
    if not isinstance(value, int):
        raise TypeError(f"{name} must be an int or a str, not {type(value).__name__}")
    if value != value & 0xFFFF:
        # Python's own error for a port that does not fit (socket's connect/bind).
        raise OverflowError(f"{name} must be 0-65535, got {value}")
    return value


def list_item(name: str, value: Any, separators: str) -> str:
    """A str that goes into one of the library's lists ("a,b", "N:A;..."):
    it must not hold their separators, which would change the list."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str, not {type(value).__name__}")
    if any(c in value for c in separators + "\0"):
        raise ValueError(f"{name} {value!r} holds a character of the library's list format ({separators.strip()!r})")
    return value


def alpn_of(value: Any) -> tuple[str, ...] | None:
    """alpn: a sequence of protocol names (``["h2", "http/1.1"]``), as
    ``ssl.SSLContext.set_alpn_protocols`` takes them; None is the library's
    default. Each must be one name of the library's comma-separated list:
    not empty, ASCII, no comma or NUL. How many, and how long, is the
    library's rule (at most 16, 1-255 bytes each)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"alpn must be a sequence of str such as ['h2', 'http/1.1'], not {type(value).__name__}")
    try:
        names = tuple(value)
    except TypeError:
        raise TypeError(f"alpn must be a sequence of str such as ['h2', 'http/1.1'], not {type(value).__name__}") from None
    if not names:
        raise ValueError("alpn is empty: name at least one protocol (or leave it out for h2 and http/1.1)")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"alpn entries must be str, not {type(name).__name__} ({name!r})")
        if not name:
            raise ValueError("alpn holds an empty protocol name")
        if "," in name or "\0" in name:
            raise ValueError(f"alpn entry {name!r} holds a comma or a NUL (one protocol name per entry)")
        if not name.isascii():
            raise ValueError(f"alpn entry {name!r} is not ASCII")
    return names


# The port of https:// URLs without one: where an integration's https_rr=True
# asks the HTTPS record.
HTTPS_PORT = 443


def https_rr_ports(value: Any) -> frozenset[int]:
    """The https_rr setting of an integration (hev2.install(), hev2.httpx's
    transports, hev2.aiohttp's connector), which sees host and port but not
    the URL's scheme: False or None, off; True, connections to port 443
    (https:// URLs without a port); a collection of ports, connections to
    those (``{443, 8443}``). A connection it applies to gets
    ``https_rr=True``: an HTTPS record may redirect it to another port
    (and target), while the client's TLS still sends the URL's host as its
    server name and checks the certificate against it."""
    if value is None or value is False:
        return frozenset()
    if value is True:
        return frozenset((HTTPS_PORT,))
    if isinstance(value, (str, bytes, int)):
        raise TypeError(f"https_rr must be True, False or a collection of ports, not {type(value).__name__}")
    try:
        ports = tuple(value)
    except TypeError:
        raise TypeError(f"https_rr must be True, False or a collection of ports, not {type(value).__name__}") from None
    if not ports:
        raise ValueError("https_rr: no port (False turns it off)")
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int):
            raise TypeError(f"https_rr ports must be int, not {type(port).__name__}")
        if not 1 <= port <= 65535:
            raise ValueError(f"https_rr port {port} is not 1-65535")
    return frozenset(ports)


def with_https_rr(options: Mapping[str, Any], port: Any, ports: frozenset[int]) -> Mapping[str, Any]:
    """options with https_rr=True when port is one of ports (an integration's
    setting) and the call did not choose https_rr itself."""
    if not ports or "https_rr" in options:
        return options
    try:
        number = port_of(port)
    except (TypeError, ValueError, OverflowError, OSError):
        return options  # create_connection raises its own error for it
    return {**options, "https_rr": True} if number in ports else options


def family_of(value: Any) -> int:
    """socket.AF_INET, AF_INET6 or AF_UNSPEC (None); the library refuses
    other numbers."""
    if value is None:
        return socket.AF_UNSPEC
    return c_int("family", value)


# The separators of the library's static_hosts list ("NAME:ADDR,ADDR;...").
HOSTS_SEPARATORS = ":;, \t\n\r"


def static_hosts(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """hosts: a mapping of name to IP address strings (the library parses
    them and refuses what is not one)."""
    from collections.abc import Iterable, Mapping

    if not isinstance(value, Mapping):
        raise TypeError(f"hosts must be a mapping of name to addresses, not {type(value).__name__}")
    entries = []
    for name, addrs in value.items():
        name = list_item("hosts key", name, HOSTS_SEPARATORS)
        if isinstance(addrs, str):
            addrs = [addrs]
        if not isinstance(addrs, Iterable):
            raise TypeError(f"hosts[{name!r}] must be an address or a list of addresses")
        # An IPv6 address goes in brackets, so ':' is no separator here.
        entries.append((name, tuple(list_item(f"hosts[{name!r}] address", a, ";, \t\n\r") for a in addrs)))
    return tuple(entries)


def trace_files_of(value: Any) -> tuple[tuple[str, str], ...]:
    """trace_files: {"svg": path, "qlog": path, "chrome": path} (any subset)."""
    import os
    from collections.abc import Mapping

    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise TypeError(f"trace_files must be a mapping of format to path, not {type(value).__name__}")
    files = []
    for fmt, path in value.items():
        if fmt not in TRACE_FORMATS:
            raise ValueError(f"trace_files: unknown format {fmt!r}; formats are {', '.join(TRACE_FORMATS)}")
        path = os.fsdecode(os.fspath(path))
        if not path or "\0" in path:
            raise ValueError(f"trace_files[{fmt!r}] must be a non-empty path without NUL")
        files.append((fmt, path))
    return tuple(files)


def source_of(value: Any) -> tuple[str | None, int]:
    """socket.create_connection's source_address: (host, port); '' / 0 = any."""
    if not value:
        return None, 0
    try:
        host, port = value
    except (TypeError, ValueError):
        raise TypeError("source_address must be a (host, port) tuple") from None
    local = None
    if host not in ("", None):
        # hev2 binds each attempt's socket itself, so the host must already be
        # an address (the library refuses a name): resolving it here would go
        # through the system resolver.
        if not isinstance(host, str):
            raise TypeError(f"source_address host must be a str, not {type(host).__name__}")
        local = host
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"source_address port must be an int, not {type(port).__name__}")
    return local, port_of(port, "source_address port")


def socket_timeout_of(timeout: Any) -> float | None:
    """The timeout the returned socket gets, exactly as socket.create_connection
    leaves it: the given timeout, or socket.getdefaulttimeout() by default."""
    if timeout is DEFAULT_TIMEOUT:
        return socket.getdefaulttimeout()
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    if math.isnan(timeout) or timeout < 0:
        raise ValueError("Timeout value out of range")
    return float(timeout)


def only_a_timeout(
    source_address: Any, resolv_timeout: Any, connect_timeout: Any, open_timeout: Any, fast_fallback: Any, more: Mapping[str, Any]
) -> bool:
    """Whether create_connection was given an address and maybe a timeout,
    and no option: the common call."""
    return (
        not more
        and source_address is None
        and resolv_timeout is None
        and connect_timeout is None
        and open_timeout is None
        and fast_fallback is True
    )


# The common call's requests (an address and maybe a timeout, no option),
# checked once per destination: a connection pool or a crawler connects to
# the same few (host, port) pairs again and again, and checking the
# arguments and building the request was a third of what the package adds
# to a loopback connect. A request is read-only once built, so one can serve
# every call; the cache is bounded (emptied when full). Only a str host and
# an int port are keys: a bool port or a bytes host must meet the checks on
# every call, and True == 1 as a key.
_common: dict[tuple[str, int, float | None], ConnectRequest] = {}
COMMON_REQUESTS_MAX = 256


def common_request(address: Any, timeout: Any) -> ConnectRequest:
    """build_request for a call with no option but the timeout."""
    sock_timeout = socket_timeout_of(timeout)
    if type(address) is tuple and len(address) == 2:
        host, port = address
        if type(host) is str and type(port) is int:
            key = (host, port, sock_timeout)
            req = _common.get(key)
            if req is None:
                req = build_request(address, sock_timeout, None, resolv_timeout=None, connect_timeout=None, open_timeout=None, fast_fallback=True, more={})
                if len(_common) >= COMMON_REQUESTS_MAX:
                    _common.clear()
                _common[key] = req
            return req
    return build_request(address, timeout, None, resolv_timeout=None, connect_timeout=None, open_timeout=None, fast_fallback=True, more={})


def build_request(
    address: Any,
    timeout: Any,
    source_address: Any,
    *,
    resolv_timeout: Any,
    connect_timeout: Any,
    open_timeout: Any,
    fast_fallback: Any,
    more: Mapping[str, Any],
) -> ConnectRequest:
    """Checks every argument of create_connection; see its docstring for the
    meaning of each and for how ``timeout`` maps onto the library's timeouts."""
    try:
        host, port = address
    except (TypeError, ValueError):
        raise TypeError("address must be a (host, port) tuple") from None
    if only_a_timeout(source_address, resolv_timeout, connect_timeout, open_timeout, fast_fallback, more):
        # The common call, (host, port) and maybe a timeout: the same checks
        # in the same order as below, without those of absent options.
        sock_timeout = socket_timeout_of(timeout)
        return ConnectRequest(
            host_of(host),
            port_of(port),
            connect_timeout=sock_timeout or None,
            socket_timeout=sock_timeout,
            connect_timeout_from_socket=bool(sock_timeout),
        )
    unknown = sorted(set(more) - set(MORE_OPTIONS))
    if unknown:
        raise TypeError(
            f"create_connection() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"hev2 options are: {', '.join(MORE_OPTIONS)}"
        )

    sock_timeout = socket_timeout_of(timeout)
    resolv = seconds("resolv_timeout", resolv_timeout)
    connect = seconds("connect_timeout", connect_timeout)
    opened = seconds("open_timeout", open_timeout)
    # socket.create_connection bounds each connect() by `timeout` and never
    # bounds getaddrinfo. Here it becomes connect_timeout (in serial mode a
    # per-attempt bound, as in socket; in a race a bound on the wait after the
    # last address was tried), unless the caller chose connect_timeout or
    # open_timeout explicitly. 0 means a non-blocking socket, not "fail at
    # once", so it bounds nothing.
    from_socket = connect is None and opened is None and bool(sock_timeout)
    if from_socket:
        connect = sock_timeout

    local_address, local_port = source_of(source_address)
    fam = family_of(more.get("family"))

    resolver = more.get("resolver")
    if resolver is not None and resolver not in RESOLVERS:
        # A name to convert to the library's constant: not one of them.
        raise ValueError(f"resolver must be one of {RESOLVERS}, got {resolver!r}")
    nameservers_arg = more.get("nameservers") or ()
    if isinstance(nameservers_arg, str):
        nameservers_arg = [nameservers_arg]
    # 'IP', 'IP:port' or '[IPv6]:port': the library parses each.
    nameservers = tuple(list_item("nameservers entry", n, ",") for n in nameservers_arg)

    # The plain options of **more, each checked as its kind (generated).
    plain = keywords(more)

    return ConnectRequest(
        host=host_of(host),
        port=port_of(port),
        resolv_timeout=resolv,
        connect_timeout=connect,
        open_timeout=opened,
        fast_fallback=flag("fast_fallback", fast_fallback),
        family=fam,
        local_address=local_address,
        local_port=local_port,
        resolver=resolver,
        nameservers=nameservers,
        hosts=static_hosts(more["hosts"]) if more.get("hosts") is not None else (),
        trace_files=trace_files_of(more.get("trace_files")),
        alpn=alpn_of(more.get("alpn")),
        socket_timeout=sock_timeout,
        connect_timeout_from_socket=from_socket,
        **plain,
    )
