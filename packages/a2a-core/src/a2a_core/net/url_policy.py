"""Which URLs named by a peer may be contacted (SSRF defence).

A push config names a webhook URL chosen by the client, and an agent's answer
may name a file URL to download; without a policy a peer could make us send
requests into our own network (loopback admin ports, RFC 1918 services, the
cloud metadata endpoint). The policy accepts only ``http``/``https`` URLs
whose host resolves exclusively to public unicast addresses, unless the
operator opens private targets or allowlists hosts.

Push delivery applies it when a config is created (early feedback), again
before every delivery, and a third time on the address actually connected to
(``vetted_transport.VettedTransport``), so a DNS answer that changes after the
check (rebinding) cannot redirect a delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import httpx

__all__ = [
    "ALWAYS_REFUSED",
    "PRIVATE_CLASSES",
    "IPAddress",
    "ResolutionError",
    "Resolver",
    "TargetRefusedError",
    "UrlPolicy",
    "WebhookTarget",
    "address_class",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``(host, port) -> addresses``: how names are resolved (tests inject fakes)."""

PRIVATE_CLASSES = frozenset({"loopback", "private", "link-local", "reserved"})
"""Address classes opened by ``allow_private_targets``."""

ALWAYS_REFUSED = frozenset({"unspecified", "multicast"})
"""Never a webhook, whatever the flags (only an explicit host allowlist overrides)."""

_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")
"""Deprecated IPv4-compatible IPv6 (RFC 4291 §2.5.5.1): never routable today."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""Well-known NAT64 prefix (RFC 6052): the translator reaches the embedded IPv4 address."""
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
"""Local-use NAT64 prefix (RFC 8215): translated inside one network, never public."""
_TEREDO = ipaddress.ip_network("2001::/32")
_NOT_GLOBAL = (ipaddress.ip_network("192.0.0.0/24"), ipaddress.ip_network("3fff::/20"))
"""Non-global ranges some Pythons' ``ipaddress`` tables miss (IETF protocol
assignments, RFC 9637 documentation)."""
_LOOPBACK = (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1"))


class TargetRefusedError(Exception):
    """The webhook URL or one of its addresses is not allowed by the policy."""


class ResolutionError(OSError):
    """The webhook host could not be resolved (possibly transient)."""


@dataclass(frozen=True, slots=True)
class WebhookTarget:
    """A syntactically valid webhook URL, reduced to what the policy checks."""

    url: httpx.URL
    host: str
    """ASCII host as it will be resolved (IDNA-encoded, no brackets)."""
    port: int

    @property
    def safe_origin(self) -> str:
        """``scheme://host:port`` for logs: no path or query, which may hold secrets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.url.scheme}://{host}:{self.port}"


def _low32(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[list[ipaddress.IPv4Address], str | None]:
    """(IPv4 addresses the IPv6 form carries, the class of the form itself when not public).

    Every form that can lead a connection to an IPv4 host is classified by that
    host: v4-mapped, v4-compatible, NAT64 (both prefixes), 6to4 and Teredo
    (server and client). Forms that are never public themselves are named too,
    so a public embedded address does not make them acceptable.
    """
    mapped = ip.ipv4_mapped
    if mapped is not None:
        return [mapped], None
    if ip in _V4_COMPATIBLE:
        return [_low32(ip)], "reserved"
    if ip in _NAT64:
        return [_low32(ip)], None
    if ip in _NAT64_LOCAL:
        # RFC 6052 allows prefixes /48../96, so the IPv4 bits may sit elsewhere:
        # classify the common /96 layout, and refuse the prefix whatever it holds.
        return [_low32(ip)], "reserved"
    sixtofour = ip.sixtofour
    if sixtofour is not None:
        return [sixtofour], None
    if ip in _TEREDO and ip.teredo is not None:
        server, client = ip.teredo
        return [server, client], "reserved"
    return [], None


def address_class(ip: IPAddress) -> str | None:
    """The non-public class of an address ("loopback", "private", ...), None if public.

    Fail closed: an address is public only when nothing says otherwise, IPv6
    forms that embed an IPv4 address take the class of that address, and
    reserved ranges (``is_reserved``, which ``is_global`` ignores) are refused.
    """
    if ip.is_unspecified or ip in _THIS_NETWORK:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    form: str | None = None
    if isinstance(ip, ipaddress.IPv6Address):
        embedded, form = _embedded_ipv4(ip)
        for inner in embedded:
            kind = address_class(inner)
            if kind is not None:
                return kind
        if embedded and form is None:
            return None  # v4-mapped, NAT64, 6to4 of a public address: that address decides
        if form is not None:
            # The prefix decides, whatever this Python's tables say of it (3.13 calls the
            # local-use NAT64 prefix private; 3.11 and 3.12 call it nothing).
            return form
    if ip.is_multicast or ip == ipaddress.IPv4Address("255.255.255.255"):
        return "multicast"
    if ip.is_link_local:
        return "link-local"
    if (
        ip.is_private
        or any(ip in net for net in _NOT_GLOBAL)
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    ):
        return "private"
    if form is not None or ip.is_reserved or not ip.is_global:
        return form or "reserved"
    return None


def _literal_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def _system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _normalize_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """Where webhooks may point. Frozen: share one between the service and its transport."""

    allow_private_targets: bool = False
    """Open loopback, private, link-local and reserved addresses (tests, trusted networks)."""
    allowed_hosts: frozenset[str] = frozenset()
    """Hosts (names or literal IPs) trusted without any address check."""
    resolve_timeout: float = 5.0
    max_url_length: int = 2048
    resolver: Resolver | None = field(default=None, compare=False)
    """Name resolution; ``loop.getaddrinfo`` when None."""

    @classmethod
    def build(
        cls,
        *,
        allow_private_targets: bool = False,
        allowed_hosts: Iterable[str] = (),
        resolve_timeout: float = 5.0,
        resolver: Resolver | None = None,
    ) -> UrlPolicy:
        """A policy with ``allowed_hosts`` normalized (case, brackets, trailing dot)."""
        if resolve_timeout <= 0:
            raise ValueError("resolve_timeout must be > 0")
        return cls(
            allow_private_targets=allow_private_targets,
            allowed_hosts=frozenset(_normalize_host(h) for h in allowed_hosts if h.strip()),
            resolve_timeout=resolve_timeout,
            resolver=resolver,
        )

    # -- syntax ----------------------------------------------------------------------
    def parse(self, url: str) -> WebhookTarget:
        """Check the URL's form; raises TargetRefusedError with a client-safe reason."""
        if len(url) > self.max_url_length:
            raise TargetRefusedError(f"the URL is longer than {self.max_url_length} characters")
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError):
            raise TargetRefusedError("the URL is not valid") from None
        if parsed.scheme not in ("http", "https"):
            raise TargetRefusedError("only http and https URLs are accepted")
        if not parsed.raw_host:
            raise TargetRefusedError("the URL has no host")
        if parsed.userinfo:
            raise TargetRefusedError(
                "the URL may not carry credentials; use the config's authentication instead"
            )
        host = parsed.raw_host.decode("ascii")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        return WebhookTarget(parsed, host, port)

    def is_allowlisted(self, host: str) -> bool:
        """Whether ``host`` is one the operator allowed explicitly (private addresses included)."""
        return bool(self.allowed_hosts) and _normalize_host(host) in self.allowed_hosts

    # -- addresses ---------------------------------------------------------------------
    def refusal(self, ip: IPAddress) -> str | None:
        """Why ``ip`` may not be contacted, or None when it may."""
        kind = address_class(ip)
        if kind is None:
            return None
        if kind in PRIVATE_CLASSES and self.allow_private_targets:
            return None
        return kind

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address of ``host`` (a literal IP is its own answer), bounded in time."""
        literal = _literal_ip(host)
        if literal is not None:
            return [literal]
        name = _normalize_host(host)
        if name == "localhost" or name.endswith(".localhost"):
            return list(_LOOPBACK)  # RFC 6761: always loopback, whatever DNS says
        resolver = self.resolver or _system_resolver
        try:
            async with asyncio.timeout(self.resolve_timeout):
                answers = await resolver(host, port)
        except TimeoutError:
            raise ResolutionError(f"resolving {host} timed out") from None
        except OSError as exc:
            raise ResolutionError(f"could not resolve {host}: {exc.strerror or exc}") from None
        addresses: list[IPAddress] = []
        for answer in answers:
            ip = _literal_ip(answer)
            if ip is None:  # a resolver must answer addresses; anything else fails closed
                raise TargetRefusedError(f"{host} resolved to something that is not an address")
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise ResolutionError(f"{host} has no addresses")
        return addresses

    async def vetted_addresses(self, host: str, port: int) -> list[IPAddress] | None:
        """The addresses a connection to ``host`` may use; None when the host is allowlisted.

        Fails closed: one disallowed address refuses the host.
        """
        if self.is_allowlisted(host):
            return None
        addresses = await self.resolve(host, port)
        for ip in addresses:
            reason = self.refusal(ip)
            if reason is not None:
                raise TargetRefusedError(f"the webhook host resolves to a {reason} address")
        return addresses

    # -- the two checkpoints -------------------------------------------------------------
    async def check_new(self, url: str) -> WebhookTarget:
        """Validate a URL when a config is created.

        A literal or resolvable host must pass the address check. A name that does
        not resolve right now is accepted: deliveries re-check and fail closed.
        """
        target = self.parse(url)
        with contextlib.suppress(ResolutionError):
            await self.vetted_addresses(target.host, target.port)
        return target

    async def check_dispatch(self, url: str) -> WebhookTarget:
        """Validate a URL just before a delivery (ResolutionError is retryable)."""
        target = self.parse(url)
        await self.vetted_addresses(target.host, target.port)
        return target
