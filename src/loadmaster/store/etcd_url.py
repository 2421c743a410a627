"""``etcd://`` URLs: a comma-separated list of client endpoints, turned into one gRPC target.

``etcd://127.0.0.1:2379,127.0.0.1:22379`` names the members of one cluster. gRPC takes several
addresses in one target (``ipv4:10.0.0.1:2379,10.0.0.2:2379``) and fails over between them by itself,
but only for IP literals, so a list of several endpoints must use IP addresses; one endpoint may be a
host name. Credentials, paths and query strings are refused rather than silently ignored: the key
prefix is the ``prefix`` argument of ``EtcdStore.connect``, and TLS/auth are not supported (aetcd
always opens an insecure channel).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

DEFAULT_CLIENT_PORT = 2379
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")


@dataclass(frozen=True, slots=True)
class EtcdEndpoint:
    host: str  # an IPv4 literal, a bare IPv6 literal (no brackets) or a host name
    port: int

    @property
    def ip_version(self) -> int | None:
        try:
            return ipaddress.ip_address(self.host).version
        except ValueError:
            return None

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if self.ip_version == 6 else f"{self.host}:{self.port}"


def _parse_port(text: str, endpoint: str, url: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(
            f"etcd URL {url!r}: endpoint {endpoint!r} has port {text!r}; expected a number in 1-65535"
        )
    return int(text)


def _parse_endpoint(text: str, url: str) -> EtcdEndpoint:
    if text.startswith("["):  # [IPv6]:port
        host, bracket, rest = text[1:].partition("]")
        if not bracket:
            raise ValueError(f"etcd URL {url!r}: endpoint {text!r} has '[' without a closing ']'")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"etcd URL {url!r}: endpoint {text!r}: {host!r} is not IPv6") from None
        if not rest:
            return EtcdEndpoint(host, DEFAULT_CLIENT_PORT)
        if not rest.startswith(":"):
            raise ValueError(f"etcd URL {url!r}: endpoint {text!r}: expected ':port' after ']', got {rest!r}")
        return EtcdEndpoint(host, _parse_port(rest[1:], text, url))
    host, colon, port_text = text.partition(":")
    if ":" in port_text:
        raise ValueError(f"etcd URL {url!r}: endpoint {text!r}: write IPv6 addresses as [addr]:port")
    if not host:
        raise ValueError(f"etcd URL {url!r}: endpoint {text!r} has no host")
    is_ipv4 = re.fullmatch(r"[0-9.]+", host) is not None
    if is_ipv4:
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"etcd URL {url!r}: endpoint {text!r}: {host!r} is not IPv4") from None
    elif _HOST_NAME.match(host) is None:
        raise ValueError(f"etcd URL {url!r}: endpoint {text!r}: {host!r} is not a valid host name")
    port = _parse_port(port_text, text, url) if colon else DEFAULT_CLIENT_PORT
    return EtcdEndpoint(host, port)


def parse_etcd_url(url: str) -> tuple[EtcdEndpoint, ...]:
    """The endpoints of ``etcd://host[:port][,host[:port]...]``; ValueError naming the bad part."""
    if not isinstance(url, str):
        raise TypeError(f"etcd URL: must be a str, got {type(url).__name__}")
    scheme, separator, rest = url.partition("://")
    if not separator:
        raise ValueError(f"etcd URL {url!r}: missing scheme; write etcd://host:port[,host:port...]")
    if scheme != "etcd":
        raise ValueError(f"etcd URL {url!r}: scheme {scheme!r} is not supported; use 'etcd'")
    for mark, what in (("@", "credentials"), ("/", "a path"), ("?", "a query"), ("#", "a fragment")):
        if mark in rest:
            where = rest[rest.index(mark) :]
            raise ValueError(
                f"etcd URL {url!r}: {what} ({where!r}) is not supported; set the key prefix with prefix=..."
            )
    if not rest:
        raise ValueError(f"etcd URL {url!r}: no endpoints after 'etcd://'")
    endpoints: list[EtcdEndpoint] = []
    for position, text in enumerate(rest.split(","), start=1):
        if not text:
            raise ValueError(f"etcd URL {url!r}: endpoint {position} is empty")
        endpoint = _parse_endpoint(text, url)
        if endpoint in endpoints:
            raise ValueError(f"etcd URL {url!r}: endpoint {text!r} is listed twice")
        endpoints.append(endpoint)
    if len(endpoints) > 1:
        versions = {endpoint.ip_version for endpoint in endpoints}
        if None in versions or len(versions) > 1:
            names = ", ".join(str(e) for e in endpoints if e.ip_version is None) or "IPv4 and IPv6 mixed"
            raise ValueError(
                f"etcd URL {url!r}: several endpoints must all be IPv4 or all IPv6 addresses "
                f"(gRPC fails over only between IP literals); offending: {names}"
            )
    return tuple(endpoints)


def grpc_target(endpoints: tuple[EtcdEndpoint, ...]) -> tuple[str, int]:
    """``(host, port)`` for ``aetcd.Client``, which joins them as ``f"{host}:{port}"`` into a gRPC target.

    Several endpoints become ``ipv4:a:p,b:q`` (or ``ipv6:[a]:p,[b]:q``): gRPC's pick-first policy
    connects to the first member that answers and moves to the next one when that member goes away.
    """
    if not endpoints:
        raise ValueError("endpoints: at least one etcd endpoint is needed")
    last = endpoints[-1]
    if len(endpoints) == 1:
        host = f"[{last.host}]" if last.ip_version == 6 else last.host
        return host, last.port
    scheme = "ipv6" if last.ip_version == 6 else "ipv4"
    joined = ",".join(str(endpoint) for endpoint in endpoints)
    # aetcd appends ":{port}", so hand it everything except the last endpoint's port.
    return f"{scheme}:{joined.rsplit(':', 1)[0]}", last.port
