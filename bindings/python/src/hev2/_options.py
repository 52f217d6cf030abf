"""Checking and normalising the arguments of a connection.

The arguments' Python types are checked and converted here, before the
library is called, so that a wrong type raises the TypeError a Python user
expects (with the argument's name), and a value Python must turn into the
library's form (a host to IDNA, a port or service name to a number, seconds,
address literals) raises ValueError naming it. The library checks the values
again (core's rules are the reference): a value it refuses comes back as a
status (HEV2_EINVAL, EHOST, EPORT, EOPTIONS) that ``_handle`` raises as
ValueError. The result is a plain ``ConnectRequest`` that
``_handle.options_for`` turns into the C options struct (or into none at
all: NULL when every option is the default).

Runs on every connection and is imported by ``import hev2``: nothing heavy
at import time (ipaddress is imported by the checks that need it), and a
call with default options does no work for the options it was not given.
"""

from __future__ import annotations

import math
import socket

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# socket.create_connection's sentinel: "use socket.getdefaulttimeout()".
DEFAULT_TIMEOUT: Any = socket._GLOBAL_DEFAULT_TIMEOUT  # type: ignore[attr-defined]

# Beyond a day a duration is a unit mistake, not a wish (the core agrees).
MAX_SECONDS = 24 * 60 * 60.0

RESOLVERS = ("system", "builtin")

# The keyword arguments accepted through **more, with what they mean.
MORE_OPTIONS = {
    "resolution_delay": "seconds to wait for AAAA once A answered first (RFC 8305 default 0.05)",
    "connection_attempt_delay": "seconds between staggered attempts (default 0.25, clamped to [0.01, 2])",
    "first_address_family_count": "addresses of the preferred family tried before interleaving (default 1)",
    "family": "socket.AF_INET or socket.AF_INET6 to restrict the destinations (default: both)",
    "resolver": "'system' (getaddrinfo, one thread per family) or 'builtin' (cancellable DNS client)",
    "nameservers": "name servers for the builtin resolver: 'IP' or 'IP:port' / '[IPv6]:port' strings",
    "hosts": "static addresses: a mapping of host name to IP address strings, consulted before resolving",
    "nodelay": "set TCP_NODELAY on the returned socket",
    "keepalive": "turn TCP keep-alive on with this idle time in seconds",
}


class ConnectRequest:
    """One connection's destination and options, checked and normalised.
    Read-only by convention (a plain class: cheaper to make than a frozen
    dataclass, and dataclasses would cost ``import hev2`` ~10 ms)."""

    __slots__ = (
        "host",
        "port",
        "resolv_timeout",
        "connect_timeout",
        "open_timeout",
        "fast_fallback",
        "resolution_delay",
        "connection_attempt_delay",
        "first_address_family_count",
        "family",
        "local_address",
        "local_port",
        "resolver",
        "nameservers",
        "hosts",
        "nodelay",
        "keepalive",
        "socket_timeout",
    )

    def __init__(
        self,
        host: str,
        port: int,
        # Seconds; None means "no such timeout" (the core's zero).
        resolv_timeout: float | None = None,
        connect_timeout: float | None = None,
        open_timeout: float | None = None,
        fast_fallback: bool = True,
        resolution_delay: float | None = None,
        connection_attempt_delay: float | None = None,
        first_address_family_count: int | None = None,
        family: int = socket.AF_UNSPEC,
        local_address: str | None = None,
        local_port: int = 0,
        resolver: str | None = None,
        nameservers: tuple[str, ...] = (),
        hosts: tuple[tuple[str, tuple[str, ...]], ...] = (),
        nodelay: bool = False,
        keepalive: float | None = None,
        # The timeout the returned socket gets (socket.settimeout's argument).
        socket_timeout: float | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.resolv_timeout = resolv_timeout
        self.connect_timeout = connect_timeout
        self.open_timeout = open_timeout
        self.fast_fallback = fast_fallback
        self.resolution_delay = resolution_delay
        self.connection_attempt_delay = connection_attempt_delay
        self.first_address_family_count = first_address_family_count
        self.family = family
        self.local_address = local_address
        self.local_port = local_port
        self.resolver = resolver
        self.nameservers = nameservers
        self.hosts = hosts
        self.nodelay = nodelay
        self.keepalive = keepalive
        self.socket_timeout = socket_timeout

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConnectRequest):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"ConnectRequest({fields})"

    def default_options(self) -> bool:
        """True when every option the library takes is its default, so that
        hev2_connect can be given NULL options (host, port and the socket's
        own timeout are not options of the library)."""
        return (
            self.connect_timeout is None
            and self.resolv_timeout is None
            and self.open_timeout is None
            and self.fast_fallback is True
            and self.family == socket.AF_UNSPEC
            and self.local_address is None
            and self.local_port == 0
            and self.resolver is None
            and self.resolution_delay is None
            and self.connection_attempt_delay is None
            and self.first_address_family_count is None
            and not self.nameservers
            and not self.hosts
            and self.nodelay is False
            and self.keepalive is None
        )


def seconds(name: str, value: Any, *, allow_none: bool = True) -> float | None:
    """A duration argument in seconds: a finite real number in [0, 1 day]."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
    value = float(value)
    if math.isnan(value) or value < 0 or value > MAX_SECONDS:
        raise ValueError(f"{name} must be between 0 and {MAX_SECONDS:g} seconds, got {value!r}")
    return value


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def host_of(value: Any) -> str:
    """The destination host: a name or an IP literal (brackets tolerated)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            raise ValueError(f"host {value!r} is not ASCII") from None
    if not isinstance(value, str):
        raise TypeError(f"host must be a str, not {type(value).__name__}")
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    if not value:
        raise ValueError("host must not be empty")
    if "\0" in value:
        raise ValueError("host must not contain NUL characters")
    if not value.isascii():
        # What socket.getaddrinfo does with a non-ASCII name.
        try:
            value = value.encode("idna").decode("ascii")
        except UnicodeError as e:
            raise ValueError(f"host {value!r} cannot be encoded with IDNA: {e}") from None
    if len(value) > 253 and not is_ip_literal(value):
        raise ValueError(f"host name is longer than 253 characters ({len(value)})")
    return value


def port_of(value: Any) -> int:
    """The destination port: an int, a numeric string or a service name."""
    if isinstance(value, bool):
        raise TypeError("port must be an int or a str, not bool")
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
        raise TypeError(f"port must be an int or a str, not {type(value).__name__}")
    if not 0 <= value <= 65535:
        raise OverflowError(f"port must be 0-65535, got {value}")
    return value


def is_ip_literal(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True


def ip_literal(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be an IP address string, not {type(value).__name__}")
    import ipaddress

    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError(f"{name} {value!r} is not an IP address") from None


def nameserver(value: Any) -> str:
    """'IP', 'IP:port' or '[IPv6]:port', returned as the library wants it."""
    if not isinstance(value, str):
        raise TypeError(f"nameservers entries must be str, not {type(value).__name__}")
    host, port = value, None
    if value.startswith("["):
        close = value.find("]")
        if close < 0:
            raise ValueError(f"name server {value!r}: missing ']'")
        host, rest = value[1:close], value[close + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"name server {value!r}: expected ':port' after ']'")
            port = rest[1:]
    elif value.count(":") == 1:
        host, port = value.split(":")
    addr = ip_literal("name server", host)
    if port is None:
        return addr
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"name server {value!r}: port must be 1-65535")
    return f"[{addr}]:{int(port)}" if ":" in addr else f"{addr}:{int(port)}"


def family_of(value: Any) -> int:
    if value in (None, 0, socket.AF_UNSPEC):
        return socket.AF_UNSPEC
    if value in (socket.AF_INET, socket.AF_INET6) and not isinstance(value, bool):
        return int(value)
    raise ValueError(f"family must be socket.AF_INET, socket.AF_INET6 or socket.AF_UNSPEC, got {value!r}")


def static_hosts(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from collections.abc import Iterable, Mapping

    if not isinstance(value, Mapping):
        raise TypeError(f"hosts must be a mapping of name to addresses, not {type(value).__name__}")
    entries = []
    for name, addrs in value.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"hosts keys must be non-empty str, got {name!r}")
        if any(c in name for c in ":;, \t\n\0"):
            # They would break the library's "NAME:ADDR,ADDR;..." list.
            raise ValueError(f"hosts key {name!r} is not a host name")
        if isinstance(addrs, str):
            addrs = [addrs]
        if not isinstance(addrs, Iterable):
            raise TypeError(f"hosts[{name!r}] must be an address or a list of addresses")
        literals = tuple(ip_literal(f"hosts[{name!r}]", a) for a in addrs)
        if not literals:
            raise ValueError(f"hosts[{name!r}] has no address")
        entries.append((name, literals))
    return tuple(entries)


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
        # an address: resolving it here would go through the system resolver.
        local = ip_literal("source_address host", host)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"source_address port must be an int 0-65535, got {port!r}")
    return local, port


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
    if (
        not more
        and source_address is None
        and resolv_timeout is None
        and connect_timeout is None
        and open_timeout is None
        and fast_fallback is True
    ):
        # The common call, (host, port) and maybe a timeout: the same checks
        # in the same order as below, without those of absent options.
        sock_timeout = socket_timeout_of(timeout)
        return ConnectRequest(
            host_of(host),
            port_of(port),
            connect_timeout=min(sock_timeout, MAX_SECONDS) if sock_timeout else None,
            socket_timeout=sock_timeout,
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
    if opened is not None and (resolv is not None or connect is not None):
        raise ValueError("open_timeout cannot be combined with resolv_timeout or connect_timeout")
    # socket.create_connection bounds each connect() by `timeout` and never
    # bounds getaddrinfo. Here it becomes connect_timeout (in serial mode a
    # per-attempt bound, as in socket; in a race a bound on the wait after the
    # last address was tried), unless the caller chose connect_timeout or
    # open_timeout explicitly. 0 means a non-blocking socket, not "fail at
    # once", so it bounds nothing.
    if connect is None and opened is None and sock_timeout:
        connect = min(sock_timeout, MAX_SECONDS)

    local_address, local_port = source_of(source_address)
    fam = family_of(more.get("family"))
    if local_address is not None and fam != socket.AF_UNSPEC:
        want = socket.AF_INET6 if ":" in local_address else socket.AF_INET
        if want != fam:
            raise ValueError(f"source_address {local_address} does not match family {socket.AddressFamily(fam).name}")

    resolver = more.get("resolver")
    if resolver is not None and resolver not in RESOLVERS:
        raise ValueError(f"resolver must be one of {RESOLVERS}, got {resolver!r}")
    nameservers_arg = more.get("nameservers") or ()
    if isinstance(nameservers_arg, str):
        nameservers_arg = [nameservers_arg]
    nameservers = tuple(nameserver(n) for n in nameservers_arg)
    if nameservers and resolver != "builtin":
        raise ValueError("nameservers need resolver='builtin'")

    count = more.get("first_address_family_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 64):
        raise ValueError(f"first_address_family_count must be an int 1-64, got {count!r}")

    return ConnectRequest(
        host=host_of(host),
        port=port_of(port),
        resolv_timeout=resolv,
        connect_timeout=connect,
        open_timeout=opened,
        fast_fallback=flag("fast_fallback", fast_fallback),
        resolution_delay=seconds("resolution_delay", more.get("resolution_delay")),
        connection_attempt_delay=seconds("connection_attempt_delay", more.get("connection_attempt_delay")),
        first_address_family_count=count,
        family=fam,
        local_address=local_address,
        local_port=local_port,
        resolver=resolver,
        nameservers=nameservers,
        hosts=static_hosts(more["hosts"]) if more.get("hosts") is not None else (),
        nodelay=flag("nodelay", more.get("nodelay", False)),
        keepalive=seconds("keepalive", more.get("keepalive")),
        socket_timeout=sock_timeout,
    )
