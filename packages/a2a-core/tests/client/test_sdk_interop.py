"""Our client against the official a2a-sdk 1.x server over real sockets, 1.0 and 0.3 compat.

One SDK server (JSON-RPC at /, HTTP+JSON at /rest, ``enable_v0_3_compat=True``)
runs on 127.0.0.1 for the module; each test connects through discovery with
a forced version and binding, and runs one scenario within a few seconds.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import scenarios
from a2a_core import MethodNotFoundError
from a2a_core.client import A2AClient
from servers import free_port, running, sdk_app

pytest.importorskip("a2a.server.routes")

COMBOS = [("1.0", "JSONRPC"), ("1.0", "HTTP+JSON"), ("0.3", "JSONRPC"), ("0.3", "HTTP+JSON")]
CASES = [
    pytest.param(version, binding, name, id=f"{version}-{binding}-{name}")
    for version, binding in COMBOS
    for name in scenarios.ALL
    if version == "1.0" or name not in scenarios.V10_ONLY
]


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    with running(sdk_app(port, v03=True), port) as url:
        yield url


@pytest.mark.parametrize(("version", "binding", "name"), CASES)
async def test_against_sdk_server(sdk_url: str, version: str, binding: str, name: str) -> None:
    async with await A2AClient.connect(
        sdk_url, preferred_versions=[version], preferred_bindings=[binding], timeout=10
    ) as client:
        assert (client.version, client.binding) == (version, binding)
        await scenarios.run(name, client)


async def test_discovers_sdk_card_and_prefers_1_0(sdk_url: str) -> None:
    async with await A2AClient.connect(sdk_url) as client:
        assert client.version == "1.0"
        assert client.binding == "JSONRPC"  # the card lists JSON-RPC first
        assert client.card is not None
        assert client.card.name == "SDK scripted agent"
        assert client.supports_streaming


async def test_sdk_server_without_compat_refuses_0_3_names() -> None:
    """A 1.0-only SDK server does not know ``message/send``: a typed MethodNotFoundError."""
    port = free_port()
    with running(sdk_app(port, v03=False), port) as url:
        async with A2AClient.for_endpoint(url + "/", version="0.3", timeout=10) as client:
            with pytest.raises(MethodNotFoundError) as caught:
                await client.send("hello")
            assert caught.value.code == -32601
