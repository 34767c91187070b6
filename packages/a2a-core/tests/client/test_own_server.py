"""Our client against our own server (both bindings, both versions) and in process.

The same scenarios as against the official SDK: the client cannot tell the
servers apart, and the in-process transport behaves like the HTTP ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import scenarios
from a2a_core.client import A2AClient
from servers import free_port, our_app, running, scripted_service

COMBOS = [("1.0", "JSONRPC"), ("1.0", "HTTP+JSON"), ("0.3", "JSONRPC"), ("0.3", "HTTP+JSON")]
HTTP_CASES = [
    pytest.param(version, binding, name, id=f"{version}-{binding}-{name}")
    for version, binding in COMBOS
    for name in scenarios.ALL
    if version == "1.0" or name not in scenarios.V10_ONLY
]
INPROCESS_CASES = [
    pytest.param(version, name, id=f"{version}-{name}")
    for version in ("1.0", "0.3")
    for name in scenarios.ALL
    if version == "1.0" or name not in scenarios.V10_ONLY
]


@pytest.fixture(scope="module")
def our_url() -> Iterator[str]:
    port = free_port()
    service = scripted_service()
    with running(our_app(service, port), port) as url:
        yield url


@pytest.mark.parametrize(("version", "binding", "name"), HTTP_CASES)
async def test_against_our_server(our_url: str, version: str, binding: str, name: str) -> None:
    async with await A2AClient.connect(
        our_url, preferred_versions=[version], preferred_bindings=[binding], timeout=10
    ) as client:
        assert (client.version, client.binding) == (version, binding)
        await scenarios.run(name, client)


@pytest.mark.parametrize(("version", "name"), INPROCESS_CASES)
async def test_in_process(version: str, name: str) -> None:
    service: Any = scripted_service()
    try:
        async with A2AClient.in_process(service, version=version) as client:
            assert client.binding == "INPROCESS"
            assert client.version == version
            assert client.card is service.card
            await scenarios.run(name, client)
    finally:
        await service.aclose()


async def test_discovery_of_our_card_prefers_1_0_jsonrpc(our_url: str) -> None:
    async with await A2AClient.connect(our_url) as client:
        assert (client.version, client.binding) == ("1.0", "JSONRPC")
        assert client.card is not None
        assert client.card.name == "Scripted agent"


async def test_0_3_only_client_reads_the_hybrid_card(our_url: str) -> None:
    async with await A2AClient.connect(our_url, preferred_versions=["0.3"]) as client:
        assert client.version == "0.3"
        assert (await client.send("hello hybrid")).text == "Echo: hello hybrid"
