"""Token passthrough: a remote-agent session and a gateway forward the caller's token.

A protected remote agent (JWT from the test IdP) records the principal of
every call. With passthrough the end user's token reaches it (the principal
is the user), never the forwarder's own client credentials; without a caller
token a passthrough call is refused before anything is sent; without
passthrough a caller's token is never forwarded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from a2a_core.client import (
    A2AClient,
    ClientCredentials,
    Credential,
    MissingCredentialError,
    RemoteAgentExecutor,
    RemoteAgentSession,
)
from a2a_core.compose.serve import running_server
from a2a_core.errors import AuthenticationRequiredError, TaskNotFoundError
from a2a_core.server import RequestContext
from a2a_core.testing.idp import IdentityProvider, ProtectedAgent, protected_whoami
from a2a_core.types import TaskState

REMOTE = "remote-agent"
GATEWAY = "gateway-agent"


@dataclass
class Seen:
    """The principals the remote agent served, in order."""

    principals: list[str] = field(default_factory=list[str])


@pytest.fixture
async def protected() -> AsyncIterator[ProtectedAgent]:
    async with protected_whoami(REMOTE, "svc-own", "own-s3cret", echo=True) as agent:
        yield agent


@pytest.fixture
def idp(protected: ProtectedAgent) -> IdentityProvider:
    return protected.idp


@pytest.fixture
def remote(protected: ProtectedAgent) -> tuple[Any, Seen]:
    return protected.server, Seen(protected.callers)


def own_auth(idp: IdentityProvider) -> ClientCredentials:
    return ClientCredentials("svc-own", "own-s3cret", token_url=idp.token_url, scopes=["a2a.send"])


# -- the session (what the LangChain and CrewAI tools use) --------------------------------


async def test_a_passthrough_session_forwards_the_callers_token(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, seen = remote
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    session = RemoteAgentSession(srv.url, passthrough=True, auth=own_auth(idp))
    try:
        reply = await session.ask("hi", credential=alice)
        assert reply.text == "hello alice: hi"
        bob = Credential.bearer(idp.issue("bob", scopes=["a2a.send"]))
        assert (await session.ask("yo", credential=bob)).text == "hello bob: yo"
    finally:
        await session.aclose()
    assert seen.principals == ["alice", "bob"]  # never the session's own svc-own


async def test_without_passthrough_a_callers_token_is_never_forwarded(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, seen = remote
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    session = RemoteAgentSession(srv.url, auth=own_auth(idp))
    try:
        reply = await session.ask("hi", credential=alice)
    finally:
        await session.aclose()
    assert reply.text == "hello svc-own: hi"
    assert seen.principals == ["svc-own"]


async def test_passthrough_without_a_caller_token_is_refused_not_sent(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, seen = remote
    session = RemoteAgentSession(srv.url, passthrough=True, auth=own_auth(idp))
    try:
        with pytest.raises(MissingCredentialError, match="passthrough"):
            await session.ask("hi")
        reply = await session.ask("hi", errors="reply")
    finally:
        await session.aclose()
    assert reply.error == "MissingCredentialError"
    assert "MissingCredentialError" in reply.describe()
    assert seen.principals == []  # nothing reached the agent, not even with our own token


async def test_a_refused_forwarded_token_is_not_retried_with_our_own(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, seen = remote
    auth = own_auth(idp)
    expired = Credential.bearer(idp.issue("alice", scopes=["a2a.send"], expires_in=-600))
    session = RemoteAgentSession(srv.url, passthrough=True, auth=auth)
    try:
        with pytest.raises(AuthenticationRequiredError):
            await session.ask("hi", credential=expired)
    finally:
        await session.aclose()
    assert seen.principals == []
    assert auth.fetches <= 1  # at most the card fetch's token; no 401 retry with it


async def test_without_any_credential_the_protected_agent_refuses(
    remote: tuple[Any, Seen],
) -> None:
    srv, seen = remote
    session = RemoteAgentSession(srv.url)
    try:
        with pytest.raises(AuthenticationRequiredError):
            await session.ask("hi")
        reply = await session.ask("hi", errors="reply")
    finally:
        await session.aclose()
    assert reply.error == "AuthenticationRequiredError"
    assert seen.principals == []


async def test_conversations_are_kept_per_caller(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, _ = remote
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    bob = Credential.bearer(idp.issue("bob", scopes=["a2a.send"]))
    session = RemoteAgentSession(srv.url, passthrough=True)
    try:
        first = await session.ask("hi", conversation="thread-1", credential=alice)
        assert session.context_id("thread-1", alice) == first.context_id
        assert session.context_id("thread-1", bob) is None  # bob's thread-1 is his own
        second = await session.ask("hi", conversation="thread-1", credential=bob)
        assert second.context_id != first.context_id
    finally:
        await session.aclose()


async def test_a_client_view_acting_for_a_caller(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> None:
    srv, seen = remote
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send", "a2a.read"]))
    async with await A2AClient.connect(srv.url, auth=own_auth(idp)) as client:
        acting = client.with_credential(alice)
        assert acting.credential is alice
        assert client.credential is None
        for binding in ("JSONRPC", "HTTP+JSON"):
            async with await A2AClient.connect(
                srv.url, auth=own_auth(idp), preferred_bindings=[binding]
            ) as bound:
                reply = await bound.with_credential(alice).send("x", blocking=False)
                assert reply.task_id is not None
                # the task is alice's: her view reads it, the service's own credential does not
                assert (await bound.with_credential(alice).get_task(reply.task_id)).id
                with pytest.raises(TaskNotFoundError):
                    await bound.get_task(reply.task_id)
        await acting.aclose()  # closes nothing: the client still works
        assert (await client.send("own")).text == "hello svc-own: own"
    assert seen.principals[-1] == "svc-own"
    assert "alice" in seen.principals
    assert alice.token not in repr(alice)
    assert alice.token not in str(alice)


# -- the gateway ----------------------------------------------------------------------------


@pytest.fixture
async def gateways(
    idp: IdentityProvider, remote: tuple[Any, Seen]
) -> AsyncIterator[tuple[Any, Any]]:
    """Two gateways to the remote agent, both authenticating their callers: one forwards
    the caller's token, one calls with its own client credentials."""
    srv, _ = remote
    async with AsyncExitStack() as stack:
        forwarding = RemoteAgentExecutor(srv.url, passthrough=True)
        stack.push_async_callback(forwarding.aclose)
        own = RemoteAgentExecutor(srv.url, auth=own_auth(idp))
        stack.push_async_callback(own.aclose)
        passing = await stack.enter_async_context(
            running_server(forwarding, oidc_issuer=idp.issuer, oidc_audience=GATEWAY)
        )
        fronting = await stack.enter_async_context(
            running_server(own, oidc_issuer=idp.issuer, oidc_audience=GATEWAY)
        )
        yield passing, fronting


async def send_as(url: str, token: str | None, text: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with await A2AClient.connect(url, headers=headers) as client:
        return await client.send(text)


async def test_the_gateway_forwards_the_callers_token(
    idp: IdentityProvider, remote: tuple[Any, Seen], gateways: tuple[Any, Any]
) -> None:
    _, seen = remote
    passing, fronting = gateways
    # a token for both the gateway and the remote agent (the audience risk: see the docs)
    token = idp.issue("alice", audience=[GATEWAY, REMOTE], scopes=["a2a.send"])
    reply = await send_as(passing.url, token, "via gateway")
    assert reply.text == "hello alice: via gateway"
    assert seen.principals == ["alice"]
    reply = await send_as(fronting.url, token, "via the other")
    assert reply.text == "hello svc-own: via the other"  # not forwarded without passthrough
    assert seen.principals == ["alice", "svc-own"]


async def test_the_gateway_without_a_token_refuses_with_401(
    remote: tuple[Any, Seen], gateways: tuple[Any, Any]
) -> None:
    _, seen = remote
    passing, _ = gateways
    with pytest.raises(AuthenticationRequiredError):
        await send_as(passing.url, None, "anonymous")
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(
            passing.url + "/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
                },
            },
            headers={"A2A-Version": "1.0"},
        )
    assert answer.status_code == 401
    assert seen.principals == []


async def test_a_token_for_the_gateway_only_is_refused_by_the_remote(
    idp: IdentityProvider, remote: tuple[Any, Seen], gateways: tuple[Any, Any]
) -> None:
    _, seen = remote
    passing, _ = gateways
    token = idp.issue("alice", audience=GATEWAY, scopes=["a2a.send"])
    reply = await send_as(passing.url, token, "hi")
    assert reply.state is TaskState.FAILED
    assert (
        reply.text == "The remote agent refused the caller's forwarded credential (UNAUTHENTICATED)"
    )
    assert seen.principals == []  # the remote agent checked the audience and refused it


async def test_grpc_forwards_the_callers_token_as_metadata(idp: IdentityProvider) -> None:
    seen: list[str] = []

    async def whoami(context: RequestContext) -> str:
        """Names the caller."""
        seen.append(context.principal.id if context.principal is not None else "-")
        return f"hello {seen[-1]}"

    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    static = Credential.bearer(idp.issue("svc-static", scopes=["a2a.send"]))
    expired = Credential.bearer(idp.issue("alice", scopes=["a2a.send"], expires_in=-600))
    async with running_server(
        whoami, oidc_issuer=idp.issuer, oidc_audience=REMOTE, grpc_port=0
    ) as srv:
        assert srv.grpc_address is not None
        async with A2AClient.for_endpoint(
            srv.grpc_address,
            binding="GRPC",
            timeout=10,
            headers={"Authorization": static.authorization},
        ) as client:
            assert (await client.send("x")).text == "hello svc-static"
            assert (await client.with_credential(alice).send("x")).text == "hello alice"
        auth = own_auth(idp)
        async with A2AClient.for_endpoint(
            srv.grpc_address, binding="GRPC", timeout=10, auth=auth
        ) as client:
            assert (await client.send("x")).text == "hello svc-own"
            assert (await client.with_credential(alice).send("x")).text == "hello alice"
            async with client.with_credential(alice).stream("x") as events:
                assert (await events.result()).text == "hello alice"
            with pytest.raises(AuthenticationRequiredError):  # not retried with our own token
                await client.with_credential(expired).send("x")
        assert auth.fetches == 1
    assert seen == ["svc-static", "alice", "svc-own", "alice", "alice"]
