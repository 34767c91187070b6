"""Card discovery: where the card is looked for, bounds on it, HTTP caching, interface choice."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from a2a_core import (
    AgentCard,
    AgentInterface,
    InternalError,
    InvalidAgentResponseError,
)
from a2a_core.client import (
    A2AClient,
    CardCache,
    CardLimits,
    CardNotFoundError,
    CardResolver,
    NoCompatibleInterfaceError,
    card_urls,
    select_interface,
)
from servers import free_port, our_app, running, scripted_service, wait_for

CARD_JSON: dict[str, Any] = {
    "name": "Weather",
    "description": "Forecasts",
    "version": "1.2.0",
    "supportedInterfaces": [
        {"url": "http://agent.test/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "f", "name": "Forecast", "description": "Forecast", "tags": ["w"]}],
}

V03_CARD_JSON: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Old",
    "description": "A 0.3 agent",
    "url": "http://agent.test/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [{"url": "http://agent.test/rest", "transport": "HTTP+JSON"}],
    "version": "0.1",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


Handler = Callable[[httpx.Request], httpx.Response]


def mock(handler: Handler) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(record)), seen


def card_response(
    body: dict[str, Any] = CARD_JSON, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(200, json=body, headers=headers or {})


# --- where -------------------------------------------------------------------------------


def test_card_url_is_derived_from_the_origin() -> None:
    assert card_urls("https://agent.test:8443/?x=1#f") == [
        "https://agent.test:8443/.well-known/agent-card.json",
        "https://agent.test:8443/.well-known/agent.json",
    ]


def test_a_url_with_a_path_is_looked_up_below_it_then_at_the_origin() -> None:
    """A mounted agent keeps its card below its path (issue 10: mounting)."""
    assert card_urls("https://agent.test:8443/api/a2a/v1/?x=1#f") == [
        "https://agent.test:8443/api/a2a/v1/.well-known/agent-card.json",
        "https://agent.test:8443/api/a2a/v1/.well-known/agent.json",
        "https://agent.test:8443/.well-known/agent-card.json",
        "https://agent.test:8443/.well-known/agent.json",
    ]


def test_a_well_known_url_is_used_as_is() -> None:
    url = "http://agent.test/.well-known/agent.json"
    assert card_urls(url) == [url]


@pytest.mark.parametrize("url", ["ftp://agent.test/", "agent.test", "/relative", ""])
def test_non_http_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="http"):
        card_urls(url)


async def test_resolve_fetches_the_derived_url() -> None:
    http, seen = mock(lambda r: card_response())
    async with http:
        card = await CardResolver(http).resolve("http://agent.test/some/endpoint")
    assert card.name == "Weather"
    assert [str(r.url) for r in seen] == [
        "http://agent.test/some/endpoint/.well-known/agent-card.json"
    ]


async def test_legacy_path_is_tried_after_404() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent.json"):
            return card_response()
        return httpx.Response(404)

    http, seen = mock(handler)
    async with http:
        resolver = CardResolver(http)
        card = await resolver.resolve("http://agent.test/")
    assert card.name == "Weather"
    assert [r.url.path for r in seen] == [
        "/.well-known/agent-card.json",
        "/.well-known/agent.json",
    ]
    assert resolver.last_url == "http://agent.test/.well-known/agent.json"


async def test_no_card_anywhere() -> None:
    http, _ = mock(lambda r: httpx.Response(404))
    async with http:
        with pytest.raises(CardNotFoundError) as caught:
            await CardResolver(http).resolve("http://agent.test/")
    assert "agent.json" in caught.value.message
    assert isinstance(caught.value, InvalidAgentResponseError)


async def test_no_card_says_the_status_and_where_it_looked() -> None:
    http, _ = mock(lambda r: httpx.Response(410))
    async with http:
        with pytest.raises(CardNotFoundError) as caught:
            await CardResolver(http).resolve("http://agent.test/")
    assert caught.value.data == {
        "cardUrls": [
            "http://agent.test/.well-known/agent-card.json",
            "http://agent.test/.well-known/agent.json",
        ],
        "httpStatus": 410,
    }
    assert caught.value.message.endswith("(HTTP 410)")


async def test_a_web_page_where_the_card_should_be_is_no_card() -> None:
    page = httpx.Response(200, text="<html>app</html>", headers={"content-type": "text/html"})
    http, _ = mock(lambda r: page)
    async with http:
        with pytest.raises(CardNotFoundError) as caught:
            await CardResolver(http).resolve("http://agent.test/")
    assert caught.value.data == {
        "cardUrls": ["http://agent.test/.well-known/agent-card.json"],
        "httpStatus": 200,
        "contentType": "text/html",
    }


async def test_server_error_is_typed_and_says_where() -> None:
    http, _ = mock(lambda r: httpx.Response(500, text="boom"))
    async with http:
        with pytest.raises(InternalError) as caught:
            await CardResolver(http).resolve("http://agent.test/")
    assert "http://agent.test/.well-known/agent-card.json" in caught.value.message


async def test_a_0_3_card_becomes_0_3_interfaces() -> None:
    http, _ = mock(lambda r: card_response(V03_CARD_JSON))
    async with http:
        card = await CardResolver(http).resolve("http://agent.test/")
    assert {(i.url, i.protocol_binding, i.protocol_version) for i in card.supported_interfaces} == {
        ("http://agent.test/a2a", "JSONRPC", "0.3"),
        ("http://agent.test/rest", "HTTP+JSON", "0.3"),
    }


# --- bounds ------------------------------------------------------------------------------


def oversized(**changes: Any) -> dict[str, Any]:
    return {**CARD_JSON, **changes}


@pytest.mark.parametrize(
    "body",
    [
        oversized(description="x" * 20_000),
        oversized(skills=[CARD_JSON["skills"][0]] * 300),
        oversized(supportedInterfaces=CARD_JSON["supportedInterfaces"] * 40),
        oversized(defaultInputModes=["text/plain"] * 2000),
        oversized(extra={"a" * 20_000: 1}),
        oversized(name=None),
        oversized(version={"not": "a string"}),
    ],
    ids=["long-string", "skills", "interfaces", "long-list", "long-key", "invalid", "bad-type"],
)
async def test_cards_beyond_bounds_or_malformed_are_refused(body: dict[str, Any]) -> None:
    http, _ = mock(lambda r: card_response(body))
    async with http:
        with pytest.raises(InvalidAgentResponseError):
            await CardResolver(http).resolve("http://agent.test/")


async def test_deep_nesting_is_refused() -> None:
    deep: Any = "leaf"
    for _ in range(100):
        deep = {"d": deep}
    body = oversized(capabilities={"extensions": [{"uri": "u", "params": deep}]})
    http, _ = mock(lambda r: card_response(body))
    async with http:
        with pytest.raises(InvalidAgentResponseError):
            await CardResolver(http).resolve("http://agent.test/")


async def test_declared_size_over_the_bound_is_refused_unread() -> None:
    pulled: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        for i in range(4):
            pulled.append(i)
            yield b" " * 1024

    http, _ = mock(
        lambda r: httpx.Response(200, headers={"content-length": "99999999"}, content=body())
    )
    async with http:
        with pytest.raises(InvalidAgentResponseError, match="99999999"):
            await CardResolver(http, limits=CardLimits(max_bytes=1024)).resolve("http://a.test/")
    assert pulled == []


async def test_streamed_body_reading_stops_at_the_bound() -> None:
    pulled: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        for i in range(10_000):
            pulled.append(i)
            yield b" " * 1024

    http, _ = mock(lambda r: httpx.Response(200, content=body()))
    async with http:
        with pytest.raises(InvalidAgentResponseError, match="limit of 8192"):
            await CardResolver(http, limits=CardLimits(max_bytes=8192)).resolve("http://a.test/")
    assert len(pulled) <= 10


async def test_endless_card_over_a_real_socket_is_cut_off() -> None:
    """A server streaming a card forever: the client stops after ~1 MiB and hangs up."""
    sent: list[int] = []
    gone = threading.Event()

    async def endless(scope: Any, receive: Any, send: Any) -> None:
        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.get_running_loop().create_task(watch())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for i in range(2048):  # 128 MiB at most, so the test always ends
            if gone.is_set():
                break
            sent.append(i)
            await send({"type": "http.response.body", "body": b" " * 65536, "more_body": True})
            # After a hang-up the server's send returns without yielding: let the watcher run.
            await asyncio.sleep(0)
        await send({"type": "http.response.body", "body": b""})
        with contextlib.suppress(TimeoutError):  # a client that never hangs up: gone stays unset
            await asyncio.wait_for(watcher, 5)

    with running(endless) as url:
        started = time.monotonic()
        async with httpx.AsyncClient() as http:
            with pytest.raises(InvalidAgentResponseError, match="limit"):
                await CardResolver(http).resolve(url)
        sent_when_refused = len(sent)
        assert time.monotonic() - started < 10
        assert wait_for(gone.is_set)
    assert sent_when_refused < 256  # flow control: far less than the 128 MiB offered


# --- caching -----------------------------------------------------------------------------


async def test_etag_revalidation_reuses_the_cached_card_on_304() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"etag": '"v1"'})
        return card_response(headers={"etag": '"v1"', "cache-control": "max-age=0"})

    http, seen = mock(handler)
    async with http:
        resolver = CardResolver(http)
        first = await resolver.resolve("http://agent.test/")
        second = await resolver.resolve("http://agent.test/")
    assert second is first
    assert len(seen) == 2
    assert "if-none-match" not in seen[0].headers
    assert seen[1].headers["if-none-match"] == '"v1"'


async def test_max_age_keeps_the_card_fresh_without_requests() -> None:
    clock = Clock()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"cache-control": "max-age=60"})
        return card_response(headers={"etag": '"v1"', "cache-control": "public, max-age=60"})

    http, seen = mock(handler)
    async with http:
        resolver = CardResolver(http, cache=CardCache(clock=clock))
        first = await resolver.resolve("http://agent.test/")
        clock.now += 59
        assert await resolver.resolve("http://agent.test/") is first
        assert len(seen) == 1
        clock.now += 2
        assert await resolver.resolve("http://agent.test/") is first
        assert len(seen) == 2  # stale: one conditional request, answered 304
        clock.now += 30
        assert await resolver.resolve("http://agent.test/") is first
        assert len(seen) == 2  # the 304's max-age renewed the freshness


async def test_age_header_shortens_freshness() -> None:
    clock = Clock()
    http, seen = mock(lambda r: card_response(headers={"cache-control": "max-age=60", "age": "50"}))
    async with http:
        resolver = CardResolver(http, cache=CardCache(clock=clock))
        await resolver.resolve("http://agent.test/")
        clock.now += 11
        await resolver.resolve("http://agent.test/")
    assert len(seen) == 2


async def test_changed_card_replaces_the_cached_one() -> None:
    versions = iter(["1", "2"])

    def handler(request: httpx.Request) -> httpx.Response:
        version = next(versions)
        body = {**CARD_JSON, "version": version}
        return card_response(body, headers={"etag": f'"{version}"'})

    http, seen = mock(handler)
    async with http:
        resolver = CardResolver(http)
        assert (await resolver.resolve("http://agent.test/")).version == "1"
        assert (await resolver.resolve("http://agent.test/")).version == "2"
    assert seen[1].headers["if-none-match"] == '"1"'


async def test_no_store_is_never_cached() -> None:
    http, seen = mock(lambda r: card_response(headers={"cache-control": "no-store", "etag": "x"}))
    async with http:
        resolver = CardResolver(http)
        await resolver.resolve("http://agent.test/")
        await resolver.resolve("http://agent.test/")
    assert len(seen) == 2
    assert "if-none-match" not in seen[1].headers
    assert len(resolver.cache) == 0


async def test_refresh_revalidates_a_fresh_card_and_last_modified_is_used() -> None:
    stamp = "Wed, 21 Oct 2015 07:28:00 GMT"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-modified-since") == stamp:
            return httpx.Response(304)
        return card_response(headers={"last-modified": stamp, "cache-control": "max-age=600"})

    http, seen = mock(handler)
    async with http:
        resolver = CardResolver(http)
        first = await resolver.resolve("http://agent.test/")
        assert await resolver.resolve("http://agent.test/", refresh=True) is first
    assert len(seen) == 2


def test_cache_is_bounded_lru() -> None:
    from a2a_core.client import CachedCard

    card = AgentCard.model_validate(CARD_JSON)
    cache = CardCache(max_entries=2)
    for url in ("a", "b"):
        cache.put(CachedCard(card, url, None, None, 0.0))
    assert cache.get("a") is not None  # a is now the most recent
    cache.put(CachedCard(card, "c", None, None, 0.0))
    assert cache.get("b") is None
    assert cache.get("a") is not None
    assert cache.get("c") is not None


async def test_our_server_card_is_revalidated_with_its_etag() -> None:
    """Against our real server: max-age honoured, then If-None-Match answered 304."""
    port = free_port()
    service = scripted_service()
    requests: list[tuple[str, int]] = []
    app = our_app(service, port)

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                requests.append((scope["path"], message["status"]))
            await send(message)

        await app(scope, receive, capture)

    clock = Clock()
    cache = CardCache(clock=clock)
    with running(counting, port) as url:
        first = await A2AClient.connect(url, card_cache=cache)
        second = await A2AClient.connect(url, card_cache=cache)
        clock.now += 10_000
        third = await A2AClient.connect(url, card_cache=cache)
        for client in (first, second, third):
            await client.aclose()
    assert first.card is second.card is third.card
    assert requests == [
        ("/.well-known/agent-card.json", 200),
        ("/.well-known/agent-card.json", 304),
    ]
    await service.aclose()


async def test_relative_interface_urls_resolve_against_the_card_url() -> None:
    body = {
        **CARD_JSON,
        "supportedInterfaces": [
            {"url": "/a2a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
    }
    http, _ = mock(lambda r: card_response(body))
    async with http:
        client = await A2AClient.connect("http://agent.test:9000/x", http_client=http)
    assert client.interface is not None
    assert client.interface.url == "http://agent.test:9000/a2a/rpc"


async def test_connect_sends_headers_with_the_card_request() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return card_response()

    transport = httpx.MockTransport(handler)
    async with httpx.AsyncClient(transport=transport) as http:
        await A2AClient.connect("http://agent.test/", http_client=http, headers={"X-Key": "k"})
    assert seen[0].headers["x-key"] == "k"


# --- interface selection -----------------------------------------------------------------


def iface(binding: str, version: str, url: str = "", tenant: str | None = None) -> AgentInterface:
    return AgentInterface(
        url=url or f"http://agent.test/{binding.lower()}-{version}",
        protocol_binding=binding,
        protocol_version=version,
        tenant=tenant,
    )


def card_with(*interfaces: AgentInterface) -> AgentCard:
    return AgentCard.model_validate({**CARD_JSON, "supportedInterfaces": []}).model_copy(
        update={"supported_interfaces": list(interfaces)}
    )


MIXED = (iface("JSONRPC", "0.3"), iface("HTTP+JSON", "1.0"), iface("JSONRPC", "1.0"))


@pytest.mark.parametrize(
    ("interfaces", "versions", "bindings", "expected"),
    [
        (MIXED, ("1.0", "0.3"), None, ("HTTP+JSON", "1.0")),  # 1.0 first, card order
        (MIXED, ("1.0", "0.3"), ("JSONRPC", "HTTP+JSON"), ("JSONRPC", "1.0")),
        (MIXED, ("0.3",), None, ("JSONRPC", "0.3")),
        (MIXED, ("0.3", "1.0"), ("HTTP+JSON",), ("HTTP+JSON", "1.0")),
        (MIXED, ("1.0",), ("rest",), ("HTTP+JSON", "1.0")),
        # gRPC (the grpc extra is installed in the test environment) speaks 1.0 only.
        ((iface("GRPC", "1.0"), iface("JSONRPC", "0.3")), ("1.0", "0.3"), None, ("GRPC", "1.0")),
        ((iface("GRPC", "0.3"), iface("JSONRPC", "0.3")), ("1.0", "0.3"), None, ("JSONRPC", "0.3")),
        ((iface("jsonrpc", "1.0.0"),), ("1.0",), None, ("JSONRPC", "1.0")),
        ((iface("HTTP+JSON", "0.3.0"),), ("1.0", "0.3"), None, ("HTTP+JSON", "0.3")),
        (
            (iface("JSONRPC", "0.3"), iface("JSONRPC", "1.0")),
            ("1.0", "0.3"),
            None,
            ("JSONRPC", "1.0"),
        ),
    ],
)
def test_interface_selection(
    interfaces: tuple[AgentInterface, ...],
    versions: tuple[str, ...],
    bindings: tuple[str, ...] | None,
    expected: tuple[str, str],
) -> None:
    chosen = select_interface(
        card_with(*interfaces), preferred_versions=versions, preferred_bindings=bindings
    )
    assert (chosen.protocol_binding, chosen.protocol_version) == expected


@pytest.mark.parametrize(
    ("interfaces", "versions", "bindings"),
    [
        ((iface("GRPC", "0.3"),), ("1.0", "0.3"), None),
        ((iface("JSONRPC", "0.2"),), ("1.0", "0.3"), None),
        (MIXED, ("1.0",), ("GRPC",)),
        ((), ("1.0", "0.3"), None),
    ],
)
def test_no_compatible_interface(
    interfaces: tuple[AgentInterface, ...],
    versions: tuple[str, ...],
    bindings: tuple[str, ...] | None,
) -> None:
    with pytest.raises(NoCompatibleInterfaceError) as caught:
        select_interface(
            card_with(*interfaces), preferred_versions=versions, preferred_bindings=bindings
        )
    assert caught.value.code == -32004


def test_selection_keeps_the_tenant_and_resolves_urls() -> None:
    chosen = select_interface(
        card_with(iface("JSONRPC", "1.0", url="rpc", tenant="acme")),
        base_url="http://agent.test/.well-known/agent-card.json",
    )
    assert chosen.tenant == "acme"
    assert chosen.url == "http://agent.test/.well-known/rpc"
