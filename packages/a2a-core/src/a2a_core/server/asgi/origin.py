"""Where the client reached this app: the base URL a card's interfaces should start with.

Clients (ADK, contract testers) check that a card's interface URLs match
the origin they fetched it from, so without a configured public URL the
card is published for the origin of each request: its scheme, its ``Host``
header and the app's mount path (``root_path``). ``Forwarded`` and
``X-Forwarded-*`` headers are anyone's to send, so they are read only from
the configured trusted proxies (like uvicorn's ``--forwarded-allow-ips``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ConfigurationError
from ...types import AgentCard, AgentInterface
from ..options import AppOptions
from .routes import published_interfaces

__all__ = ["TrustedProxies", "interfaces_for", "rebase_card", "request_base"]

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[[0-9A-Fa-f:.]{{2,45}}\])(?::[0-9]{{1,5}})?")
"""A ``Host`` header value: a DNS name, IPv4 address or bracketed IPv6 address, optional port."""
_PREFIX = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*")
"""A path prefix that is safe to put into a URL (no query, fragment, spaces or quotes)."""
_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NetworkType = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    """The peers whose ``Forwarded`` / ``X-Forwarded-*`` headers are believed.

    Entries are IP addresses or networks (``"10.0.0.0/8"``); ``"*"`` trusts
    every peer (only behind a proxy that always sets these headers).
    """

    __slots__ = ("_all", "_networks")

    def __init__(self, entries: Sequence[str]) -> None:
        if isinstance(entries, str):
            entries = [part for part in entries.split(",") if part.strip()]
        self._all = False
        networks: list[_NetworkType] = []
        for entry in entries:
            text = entry.strip()
            if text == "*":
                self._all = True
                continue
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                raise ConfigurationError(
                    f"trusted_proxies: {entry!r} is not an IP address, a network or '*'"
                ) from None
        self._networks = tuple(networks)

    def __bool__(self) -> bool:
        return self._all or bool(self._networks)

    def trusts(self, client: Any) -> bool:
        """Whether the ASGI ``client`` (host, port) is a trusted proxy."""
        if self._all:
            return True
        if not self._networks or not client:
            return False
        try:
            address = ipaddress.ip_address(str(client[0]))
        except (ValueError, IndexError, TypeError):
            return False
        return any(address in network for network in self._networks)


def request_base(
    scope: Mapping[str, Any], headers: Mapping[str, str], proxies: TrustedProxies | None
) -> str:
    """``scheme://host[:port]/mount/path`` as this request reached the app (no trailing slash)."""
    scheme = str(scope.get("scheme") or "http").lower()
    host = _valid_host(headers.get("host"))
    prefix = ""
    if proxies is not None and proxies.trusts(scope.get("client")):
        scheme, host, prefix = _forwarded(headers, scheme, host)
    if scheme not in _SCHEMES:
        scheme = "http"
    if host is None:
        host = _server_host(scope, scheme)
    root = str(scope.get("root_path") or "")
    path = (prefix + root).rstrip("/")
    if not _PREFIX.fullmatch(path):
        path = ""
    return f"{scheme}://{host}{path}"


def _valid_host(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    if len(value) > 260 or not _HOST.fullmatch(value):
        return None
    return value.lower()


def _server_host(scope: Mapping[str, Any], scheme: str) -> str:
    """The address the server listens on, when the request named no (valid) host."""
    server = scope.get("server")
    if not server:
        return "localhost"
    host, port = str(server[0]), server[1]
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return host
    return f"{host}:{port}"


def _forwarded(
    headers: Mapping[str, str], scheme: str, host: str | None
) -> tuple[str, str | None, str]:
    """Scheme, host and path prefix from a trusted proxy's headers (RFC 7239 first)."""
    prefix = ""
    forwarded = headers.get("forwarded")
    if forwarded:
        first = forwarded.split(",", 1)[0]
        for pair in first.split(";"):
            key, _, value = pair.strip().partition("=")
            value = value.strip().strip('"')
            key = key.strip().lower()
            if key == "proto" and value.lower() in _SCHEMES:
                scheme = value.lower()
            elif key == "host":
                host = _valid_host(value) or host
    else:
        proto = _first(headers.get("x-forwarded-proto"))
        if proto and proto.lower() in _SCHEMES:
            scheme = proto.lower()
        forwarded_host = _valid_host(_first(headers.get("x-forwarded-host")))
        if forwarded_host is not None:
            host = forwarded_host
            port = _first(headers.get("x-forwarded-port"))
            has_port = ":" in host.rsplit("]", 1)[-1]
            if port and port.isdigit() and not has_port and int(port) != _DEFAULT_PORTS.get(scheme):
                host = f"{host}:{int(port)}"
    raw_prefix = _first(headers.get("x-forwarded-prefix"))
    if raw_prefix:
        candidate = "/" + raw_prefix.strip("/")
        if _PREFIX.fullmatch(candidate):
            prefix = candidate.rstrip("/")
    return scheme, host, prefix


def _first(value: str | None) -> str | None:
    """The first of a comma-joined header's values (the client-most proxy's)."""
    if value is None:
        return None
    return value.split(",", 1)[0].strip() or None


def interfaces_for(
    base_url: str,
    *,
    jsonrpc_path: str | None = "/",
    rest: bool = True,
    rest_prefix: str = "",
    grpc_address: str | None = None,
) -> list[AgentInterface]:
    """The interfaces an ``A2AApp`` at ``base_url`` serves, in the binding table's order
    (JSON-RPC, HTTP+JSON, then any other registered binding; 1.0 before 0.3).

    ``grpc_address`` (``host:port``) adds the gRPC interface (1.0) served beside it.
    ``published_interfaces`` takes the app's whole options.
    """
    options = AppOptions(jsonrpc_path=jsonrpc_path, rest=rest, rest_prefix=rest_prefix)
    listeners = {"GRPC": grpc_address} if grpc_address is not None else None
    return published_interfaces(base_url, options, listeners)


def rebase_card(card: AgentCard, old_base: str, new_base: str) -> AgentCard:
    """The card with each interface URL under ``old_base`` moved under ``new_base``."""
    if old_base == new_base:
        return card
    moved: list[AgentInterface] = []
    for iface in card.supported_interfaces:
        url = iface.url
        if url == old_base or url.startswith(old_base + "/") or not old_base:
            iface = iface.model_copy(update={"url": new_base + url[len(old_base) :]})
        moved.append(iface)
    return card.model_copy(update={"supported_interfaces": moved})
