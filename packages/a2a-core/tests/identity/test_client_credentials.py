"""OAuth 2.0 client credentials against the test IdP and a JWT-protected server.

The token endpoint comes from the card (OAuth2 ``tokenUrl`` or OpenID Connect
discovery) or from configuration; the token is cached, refreshed before
expiry, and a 401 is retried once with a fresh token. The async client, the
sync client, ``RemoteAgentSession`` and the ``a2a`` CLI all use it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from a2a_core.client import A2AClient, ClientCredentials, SyncA2AClient, TokenError
from a2a_core.client.loop import BackgroundLoop
from a2a_core.client.session import RemoteAgentSession
from a2a_core.compose.serve import running_server
from a2a_core.errors import AuthenticationRequiredError
from a2a_core.server import RequestContext
from a2a_core.testing.idp import IdentityProvider

AUD = "billing-agent"


async def whoami(context: RequestContext) -> str:
    """Names the caller."""
    principal = context.call.principal if context.call else None
    return f"hello {principal.id if principal else '-'}: {context.text}"


@pytest.fixture
async def idp() -> AsyncIterator[IdentityProvider]:
    async with IdentityProvider(audience=AUD) as provider:
        provider.add_client("svc-a", "s3cret-a", scopes=["a2a.send", "a2a.read"])
        yield provider


@pytest.fixture(params=["oauth2", "openIdConnect"])
async def server(idp: IdentityProvider, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    token_url: dict[str, Any] = (
        {"oidc_token_url": idp.token_url} if request.param == "oauth2" else {}
    )
    async with running_server(
        whoami,
        oidc_issuer=idp.issuer,
        oidc_audience=AUD,
        operation_scopes={"send": "a2a.send"},
        **token_url,
    ) as srv:
        yield srv


async def test_the_token_endpoint_comes_from_the_card(
    idp: IdentityProvider, server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    auth = ClientCredentials("svc-a", "s3cret-a", scopes=["a2a.send"])
    with caplog.at_level(logging.DEBUG):
        async with await A2AClient.connect(server.url, auth=auth) as client:
            assert (await client.send("one")).text == "hello svc-a: one"
            assert (await client.send("two")).text == "hello svc-a: two"
    assert auth.configured
    assert idp.counters.token == 1  # cached: one token for both calls
    assert auth.fetches == 1
    assert "s3cret-a" not in repr(auth)
    assert all("s3cret-a" not in r.getMessage() for r in caplog.records)
    for token in idp.counters.issued:
        assert token not in repr(auth)
        assert all(token not in r.getMessage() for r in caplog.records)


async def test_a_401_is_retried_once_with_a_fresh_token(idp: IdentityProvider) -> None:
    async with running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv:
        auth = ClientCredentials("svc-a", "s3cret-a", token_url=idp.token_url)
        async with await A2AClient.connect(srv.url, auth=auth) as client:
            assert (await client.send("a")).text == "hello svc-a: a"
            auth._token = "revoked.by.server"  # pyright: ignore[reportPrivateUsage]
            assert (await client.send("b")).text == "hello svc-a: b"
            assert idp.counters.token == 2
            # a token that stays refused: one retry, then the 401 reaches the caller
            idp.clients["svc-a"].subject = ""  # tokens without a subject are refused
            auth._token = "revoked.again.x"  # pyright: ignore[reportPrivateUsage]
            with pytest.raises(AuthenticationRequiredError):
                await client.send("c")
            assert idp.counters.token == 3


async def test_a_token_is_refreshed_before_it_expires(idp: IdentityProvider) -> None:
    idp.token_ttl = 20  # below the 30 s refresh margin: every call needs a new token
    async with running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv:
        auth = ClientCredentials("svc-a", "s3cret-a", discovery_url=idp.discovery_url)
        async with await A2AClient.connect(srv.url, auth=auth) as client:
            await client.send("a")
            await client.send("b")
        assert idp.counters.token == 3  # card fetch, send, send: a new token each time
        idp.token_ttl = 3600
        auth2 = ClientCredentials("svc-a", "s3cret-a", discovery_url=idp.discovery_url)
        async with await A2AClient.connect(srv.url, auth=auth2) as client:
            await client.send("a")
            await client.send("b")
        assert idp.counters.token == 4  # one, cached for the card fetch and both sends


async def test_a_wrong_secret_is_a_clear_error(idp: IdentityProvider, server: Any) -> None:
    auth = ClientCredentials("svc-a", "wrong", scopes=["a2a.send"])
    async with await A2AClient.connect(server.url, auth=auth) as client:
        with pytest.raises(TokenError, match="refused client 'svc-a': HTTP 401") as caught:
            await client.send("x")
    assert "wrong" not in str(caught.value)


async def test_the_remote_agent_session_uses_it(idp: IdentityProvider, server: Any) -> None:
    auth = ClientCredentials("svc-a", "s3cret-a")
    session = RemoteAgentSession(server.url, auth=auth)
    try:
        reply = await session.ask("hi")
        assert reply.text == "hello svc-a: hi", reply
    finally:
        await session.aclose()
    anonymous = RemoteAgentSession(server.url)
    try:
        with pytest.raises(AuthenticationRequiredError):
            await anonymous.ask("hi")
    finally:
        await anonymous.aclose()


async def test_concurrent_first_calls_fetch_one_token(idp: IdentityProvider) -> None:
    async with running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv:
        auth = ClientCredentials("svc-a", "s3cret-a", token_url=idp.token_url)
        # the card is given, so the 20 sends are the first calls that need a token
        async with await A2AClient.connect(srv.url) as plain:
            card = plain.card
        async with await A2AClient.connect(srv.url, card=card, auth=auth) as client:
            replies = await asyncio.gather(*(client.send(f"n{i}") for i in range(20)))
    assert sorted(r.text for r in replies) == sorted(f"hello svc-a: n{i}" for i in range(20))
    assert idp.counters.token == 1
    assert auth.fetches == 1


async def test_concurrent_401s_replace_the_token_once(idp: IdentityProvider) -> None:
    async with running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv:
        auth = ClientCredentials("svc-a", "s3cret-a", token_url=idp.token_url)
        async with await A2AClient.connect(srv.url, auth=auth) as client:
            await client.send("first")
            auth._token = "revoked.by.server"  # pyright: ignore[reportPrivateUsage]
            replies = await asyncio.gather(*(client.send(f"n{i}") for i in range(10)))
    assert all(r.text.startswith("hello svc-a: n") for r in replies)
    assert idp.counters.token == 2  # the first token, and one replacement for all ten


@pytest.fixture
def served_in_background() -> Iterator[tuple[IdentityProvider, Any]]:
    """The IdP and the server on a background loop, for sync callers (the sync client, the CLI)."""
    runner = BackgroundLoop()
    stack = AsyncExitStack()
    try:
        idp = runner.run(stack.enter_async_context(IdentityProvider(audience=AUD)))
        idp.add_client("svc-b", "s3cret-b", scopes=["a2a.send"])
        srv = runner.run(
            stack.enter_async_context(
                running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD)
            )
        )
        yield idp, srv
    finally:
        runner.run(stack.aclose())
        runner.stop()


def test_the_sync_client_uses_it(served_in_background: tuple[IdentityProvider, Any]) -> None:
    idp, srv = served_in_background
    auth = ClientCredentials("svc-b", "s3cret-b")
    with SyncA2AClient.connect(srv.url, auth=auth) as client:
        assert client.send("x").text == "hello svc-b: x"
    assert idp.counters.token == 1
    assert threading.active_count() >= 1


def test_the_cli_takes_client_credentials_from_the_environment(
    served_in_background: tuple[IdentityProvider, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from a2a_core.cli.main import main

    idp, srv = served_in_background
    monkeypatch.delenv("A2A_BEARER_TOKEN", raising=False)
    monkeypatch.setenv("A2A_CLIENT_ID", "svc-b")
    monkeypatch.setenv("A2A_CLIENT_SECRET", "s3cret-b")
    assert main(["send", srv.url, "ping"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "hello svc-b: ping"
    assert "s3cret-b" not in out + err
    # --token with a token of the IdP works too; nothing at all is refused (exit 3)
    monkeypatch.delenv("A2A_CLIENT_ID")
    monkeypatch.delenv("A2A_CLIENT_SECRET")
    assert main(["send", srv.url, "pong", "--token", idp.issue("dave", audience=AUD)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "hello dave: pong"
    assert main(["send", srv.url, "pong"]) == 3
    capsys.readouterr()
    # the secret alone is a usage error
    assert main(["send", srv.url, "x", "--client-secret", "s"]) == 2


RESERVED_ID = "svc:r/1"
RESERVED_SECRET = "a+b/c%2F:d e~"
"""``+``, ``/``, ``%``, ``:`` and a space: an issuer decoding per RFC 6749 2.3.1 reads each
differently unless the client form-encodes the id and the secret before HTTP Basic."""


async def test_reserved_characters_in_the_id_and_secret_are_form_encoded(
    idp: IdentityProvider,
) -> None:
    idp.add_client(RESERVED_ID, RESERVED_SECRET, scopes=["a2a.send"])
    auth = ClientCredentials(RESERVED_ID, RESERVED_SECRET, token_url=idp.token_url)
    token = await auth.token()
    assert token is not None
    sync = ClientCredentials(RESERVED_ID, RESERVED_SECRET, discovery_url=idp.discovery_url)
    assert await asyncio.to_thread(sync.sync_token) is not None
    assert idp.counters.token == 2
    async with (
        running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv,
        await A2AClient.connect(srv.url, auth=auth) as client,
    ):
        assert (await client.send("hi")).text == f"hello {RESERVED_ID}: hi"
