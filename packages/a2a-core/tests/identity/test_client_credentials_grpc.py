"""OAuth 2.0 client credentials over the gRPC binding and through the ``a2a serve URL`` gateway.

gRPC: the same ``ClientCredentials`` given to ``A2AClient.connect`` puts
``authorization: Bearer`` in every call's metadata, cached (one token for many
calls, unary and streaming), and a call refused UNAUTHENTICATED is retried once
with a fresh token. Gateway: ``a2a serve URL --remote-client-id`` (secret from
the environment) calls its JWT-protected upstream with a token of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a_core.client import A2AClient, ClientCredentials
from a2a_core.errors import AuthenticationRequiredError
from a2a_core.testing.idp import IdentityProvider, ProtectedAgent, protected_whoami

pytest.importorskip("grpc")
pytestmark = pytest.mark.timeout(60)

AUD = "grpc-agent"


@pytest.fixture
async def protected() -> AsyncIterator[ProtectedAgent]:
    async with protected_whoami(
        AUD, "svc-g", "s3cret-g", echo=True, publish_token_url=True, grpc_port=0
    ) as agent:
        yield agent


@pytest.fixture
def idp(protected: ProtectedAgent) -> IdentityProvider:
    return protected.idp


@pytest.fixture
def server(protected: ProtectedAgent) -> Any:
    return protected.server


async def _grpc_client(srv: Any, auth: ClientCredentials | None) -> A2AClient:
    client = await A2AClient.connect(srv.url, auth=auth, preferred_bindings=["GRPC"])
    assert client.interface is not None
    assert client.interface.protocol_binding == "GRPC"
    return client


async def test_grpc_calls_carry_a_cached_token(idp: IdentityProvider, server: Any) -> None:
    auth = ClientCredentials("svc-g", "s3cret-g", scopes=["a2a.send"])
    async with await _grpc_client(server, auth) as client:
        assert (await client.send("one")).text == "hello svc-g: one"
        assert (await client.send("two")).text == "hello svc-g: two"
        stream = client.stream("three")
        async with stream:
            events = [event async for event in stream]
        assert events
        assert stream.text == "hello svc-g: three"
    assert idp.counters.token == 1  # the card's token endpoint; one token for every call
    async with await _grpc_client(server, None) as anonymous:
        with pytest.raises(AuthenticationRequiredError):
            await anonymous.send("x")


async def test_unauthenticated_is_retried_once_with_a_fresh_token(
    idp: IdentityProvider, server: Any
) -> None:
    auth = ClientCredentials("svc-g", "s3cret-g", scopes=["a2a.send"])
    async with await _grpc_client(server, auth) as client:
        assert (await client.send("a")).text == "hello svc-g: a"
        auth._token = "revoked.by.server"  # pyright: ignore[reportPrivateUsage]
        assert (await client.send("b")).text == "hello svc-g: b"
        assert idp.counters.token == 2
        auth._token = "revoked.again.x"  # pyright: ignore[reportPrivateUsage]
        stream = client.stream("c")
        async with stream:
            events = [event async for event in stream]
        assert events
        assert stream.text == "hello svc-g: c"
        assert idp.counters.token == 3
        # a token that stays refused: one retry, then UNAUTHENTICATED reaches the caller
        idp.clients["svc-g"].subject = ""  # tokens without a subject are refused
        auth._token = "revoked.for.good"  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(AuthenticationRequiredError):
            await client.send("d")
        assert idp.counters.token == 4
        auth._token = "revoked.for.good"  # pyright: ignore[reportPrivateUsage]
        with pytest.raises(AuthenticationRequiredError):
            async with client.stream("e") as stream:
                _ = [event async for event in stream]
        assert idp.counters.token == 5
