"""The webhook URL policy: syntax, address classes, allowlists, resolution."""

from __future__ import annotations

import asyncio
import ipaddress
import time

import pytest
from _push_support import PUBLIC_IP, FakeResolver, fake_policy
from a2a_core.server.push import ResolutionError, TargetRefusedError, UrlPolicy, address_class

# -- syntax ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example/x",
        "file:///etc/passwd",
        "gopher://hooks.example:70/_x",
        "javascript:alert(1)",
        "http:///no-host",
        "hooks.example/no-scheme",
        "http://user:secret@hooks.example/",
        "http://0177.0.0.1/",  # octal IPv4: not a valid URL host
        "http://hooks.example/" + "a" * 2100,
        "",
    ],
)
async def test_malformed_or_foreign_urls_are_refused(url: str) -> None:
    policy = fake_policy()
    with pytest.raises(TargetRefusedError):
        await policy.check_new(url)


async def test_userinfo_refusal_explains_where_credentials_go() -> None:
    with pytest.raises(TargetRefusedError, match="authentication"):
        fake_policy().parse("https://u:p@hooks.example/")


def test_parse_keeps_the_url_and_finds_the_port() -> None:
    target = fake_policy().parse("HTTPS://Hooks.Example/a?b=c")
    assert (target.host, target.port) == ("hooks.example", 443)
    assert str(target.url) == "https://hooks.example/a?b=c"
    assert target.safe_origin == "https://hooks.example:443"
    v6 = fake_policy().parse("http://[2606:4700:4700::1111]:8080/x")
    assert v6.safe_origin == "http://[2606:4700:4700::1111]:8080"


# -- address classes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.9.8.7", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.0.10", "private"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("169.254.0.1", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("255.255.255.255", "multicast"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("100.64.0.1", "reserved"),  # carrier-grade NAT
        ("198.18.0.1", "private"),  # benchmarking: "not globally reachable" per IANA
        ("240.0.0.1", "private"),
        ("192.0.2.1", "private"),  # documentation
        ("2001:db8::1", "private"),
        ("8.8.8.8", None),
        ("172.32.0.1", None),  # just outside 172.16/12
        (PUBLIC_IP, None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_address_classes(address: str, kind: str | None) -> None:
    assert address_class(ipaddress.ip_address(address)) == kind


REFUSED_BY_DEFAULT = [
    "http://127.0.0.1:8080/hook",
    "http://[::1]/hook",
    "http://localhost/hook",
    "http://LOCALHOST./hook",
    "http://api.localhost/hook",
    "http://10.0.0.5/hook",
    "http://172.20.1.1/hook",
    "http://192.168.1.1/hook",
    "http://[fd00::5]/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/hook",
    "http://0.0.0.0:9000/",
    "http://[::]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://2130706433/",  # decimal form of 127.0.0.1 (resolved locally, no DNS)
    "http://0x7f000001/",  # hex form of 127.0.0.1
    "http://127.1/",
]


@pytest.mark.parametrize("url", REFUSED_BY_DEFAULT)
async def test_non_public_targets_are_refused_by_default(url: str) -> None:
    policy = UrlPolicy.build()
    with pytest.raises(TargetRefusedError, match="resolves to a"):
        await policy.check_new(url)
    with pytest.raises(TargetRefusedError):
        await policy.check_dispatch(url)


@pytest.mark.parametrize(
    "url",
    ["http://8.8.8.8/hook", "https://[2606:4700:4700::1111]:8443/x", "https://hooks.example/a"],
)
async def test_public_targets_are_accepted(url: str) -> None:
    policy = fake_policy()
    target = await policy.check_dispatch(url)
    assert str(target.url) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://10.0.0.5/",
        "http://[fd00::5]/",
        "http://169.254.10.10/",
        "http://100.64.0.1/",
    ],
)
async def test_allow_private_targets_opens_private_classes(url: str) -> None:
    await UrlPolicy.build(allow_private_targets=True).check_dispatch(url)


@pytest.mark.parametrize(
    "url", ["http://0.0.0.0/", "http://[::]/", "http://224.0.0.1/", "http://[ff02::1]/"]
)
async def test_unspecified_and_multicast_stay_refused_with_private_targets(url: str) -> None:
    with pytest.raises(TargetRefusedError):
        await UrlPolicy.build(allow_private_targets=True).check_dispatch(url)


async def test_allowlisted_hosts_skip_the_address_check_and_nothing_else() -> None:
    policy = UrlPolicy.build(allowed_hosts=["LocalHost.", "[::1]", "10.9.9.9"])
    for url in ("http://localhost:8888/webhook", "http://[::1]/", "http://10.9.9.9/"):
        await policy.check_dispatch(url)
    for url in ("http://127.0.0.1/", "http://10.9.9.8/", "http://api.localhost/"):
        with pytest.raises(TargetRefusedError):
            await policy.check_dispatch(url)
    with pytest.raises(TargetRefusedError):  # the scheme rule still applies
        await policy.check_dispatch("ftp://localhost/")


# -- resolution ------------------------------------------------------------------------------


async def test_a_name_with_any_private_address_is_refused() -> None:
    resolver = FakeResolver({"mixed.example": [PUBLIC_IP, "10.0.0.7"]})
    with pytest.raises(TargetRefusedError, match="private"):
        await fake_policy(resolver).check_new("https://mixed.example/")


async def test_unresolvable_names_pass_creation_but_not_dispatch() -> None:
    resolver = FakeResolver()
    policy = fake_policy(resolver)
    target = await policy.check_new("https://nowhere.example/hook")
    assert target.host == "nowhere.example"
    with pytest.raises(ResolutionError):
        await policy.check_dispatch("https://nowhere.example/hook")
    assert resolver.calls == ["nowhere.example", "nowhere.example"]


async def test_literal_ips_and_localhost_never_reach_the_resolver() -> None:
    resolver = FakeResolver()
    policy = fake_policy(resolver, allow_private_targets=True)
    await policy.check_dispatch("http://127.0.0.1/")
    await policy.check_dispatch("http://[::1]/")
    await policy.check_dispatch("http://localhost/")
    assert resolver.calls == []


async def test_resolution_is_bounded_in_time() -> None:
    async def hanging(host: str, port: int) -> list[str]:
        await asyncio.sleep(30)
        return []

    policy = UrlPolicy.build(resolver=hanging, resolve_timeout=0.05)
    started = time.monotonic()
    with pytest.raises(ResolutionError, match="timed out"):
        await policy.check_dispatch("https://slow.example/")
    assert time.monotonic() - started < 2


async def test_a_resolver_answer_that_is_not_an_address_fails_closed() -> None:
    resolver = FakeResolver({"odd.example": ["not-an-ip"]})
    with pytest.raises(TargetRefusedError):
        await fake_policy(resolver).check_new("https://odd.example/")


async def test_dns_changes_are_caught_at_dispatch() -> None:
    resolver = FakeResolver({"rebind.example": [PUBLIC_IP]})
    policy = fake_policy(resolver)
    await policy.check_new("https://rebind.example/hook")
    resolver.answers["rebind.example"] = ["127.0.0.1"]
    with pytest.raises(TargetRefusedError, match="loopback"):
        await policy.check_dispatch("https://rebind.example/hook")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="resolve_timeout"):
        UrlPolicy.build(resolve_timeout=0)


# -- the address table: every literal, at creation and at dispatch, and behind a name --------

ADDRESS_TABLE: list[tuple[str, str | None]] = [
    # IPv4
    ("127.0.0.1", "loopback"),
    ("10.0.0.1", "private"),
    ("169.254.169.254", "link-local"),
    ("100.64.0.1", "reserved"),
    ("192.0.0.8", "private"),
    ("198.51.100.7", "private"),
    ("203.0.113.9", "private"),
    ("240.0.0.1", "private"),
    ("0.0.0.1", "unspecified"),
    ("8.8.8.8", None),
    ("1.1.1.1", None),
    # plain IPv6
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("fec0::1", "private"),  # deprecated site-local
    ("fd00::1", "private"),
    ("100::1", "private"),  # discard-only
    ("2001:db8::1", "private"),
    ("3fff::1", "private"),  # RFC 9637 documentation
    ("2001:10::1", "private"),  # ORCHID
    ("5f00::1", "reserved"),  # SRv6 SIDs (reserved)
    ("ff05::2", "multicast"),
    ("2606:4700:4700::1111", None),
    ("2620:fe::fe", None),
    # v4-mapped
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("::ffff:0.0.0.0", "unspecified"),
    ("::ffff:8.8.8.8", None),
    # v4-compatible (deprecated): the embedded class, else reserved
    ("::127.0.0.1", "loopback"),
    ("::a00:1", "private"),
    ("::a9fe:a9fe", "link-local"),
    ("::8.8.8.8", "reserved"),
    # IPv4-translated (SIIT ::ffff:0:0:0/96): reserved
    ("::ffff:0:7f00:1", "reserved"),
    ("::ffff:0:808:808", "reserved"),
    # NAT64 well-known: the embedded address decides
    ("64:ff9b::7f00:1", "loopback"),
    ("64:ff9b::a00:1", "private"),
    ("64:ff9b::a9fe:a9fe", "link-local"),
    ("64:ff9b::808:808", None),
    # NAT64 local-use (RFC 8215): never public
    ("64:ff9b:1::a00:1", "private"),
    ("64:ff9b:1::7f00:1", "loopback"),
    ("64:ff9b:1::808:808", "reserved"),
    ("64:ff9b:1:ffff::808:808", "reserved"),
    # 6to4
    ("2002:7f00:1::1", "loopback"),
    ("2002:a00:1::", "private"),
    ("2002:a9fe:a9fe::1", "link-local"),
    ("2002:808:808::1", None),
    # Teredo: server 65.54.227.120, client from the obfuscated bits
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "private"),  # client 192.0.2.45
    ("2001:0:4136:e378::80ff:fffe", "loopback"),  # client 127.0.0.1
    ("2001:0:a00:1::", "private"),  # server 10.0.0.1
    ("2001::1", "unspecified"),  # server 0.0.0.0
]


@pytest.mark.parametrize(("address", "kind"), ADDRESS_TABLE)
def test_address_table_classes(address: str, kind: str | None) -> None:
    assert address_class(ipaddress.ip_address(address)) == kind


def _literal_url(address: str) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:8080/hook"


@pytest.mark.parametrize(("address", "kind"), ADDRESS_TABLE)
async def test_address_table_at_creation_and_dispatch(address: str, kind: str | None) -> None:
    """Literal URLs, and a name resolving to the address: refused at both checkpoints."""
    resolver = FakeResolver({"named.example": [address]})
    policy = fake_policy(resolver)
    for url in (_literal_url(address), "https://named.example/hook"):
        if kind is None:
            await policy.check_new(url)
            await policy.check_dispatch(url)
            continue
        with pytest.raises(TargetRefusedError, match=kind):
            await policy.check_new(url)
        with pytest.raises(TargetRefusedError, match=kind):
            await policy.check_dispatch(url)
        assert policy.refusal(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    "address", ["::127.0.0.1", "::a00:1", "::a9fe:a9fe", "64:ff9b:1::a00:1", "2002:a00:1::"]
)
async def test_embedded_private_addresses_open_only_with_private_targets(address: str) -> None:
    await UrlPolicy.build(allow_private_targets=True).check_dispatch(_literal_url(address))
