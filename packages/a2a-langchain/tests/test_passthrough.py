"""A LangChain agent calling a protected remote agent: own credentials, passthrough, none.

The remote agent is protected by JWTBearerAuth with the test identity
provider and records the principal of every call. The agent is a LangGraph
tool loop with a fake model: it calls the remote agent's tool once and
answers with what the tool returned. The end user's token reaches the remote
agent only with ``passthrough=True``: from the run's config
(``configurable["a2a_credential"]``), or from the A2A request a served agent
answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a_core.client import A2AClient, ClientCredentials, Credential
from a2a_core.testing.idp import IdentityProvider, ProtectedAgent, protected_whoami
from a2a_langchain import CREDENTIAL_KEY, RemoteA2ARunnable, aremote_agent_tool
from a2a_langchain import running_server as lc_server
from lc_fakes import ToolLoopModel, agent_graph

pytestmark = pytest.mark.timeout(60)

REMOTE = "remote-agent"
FRONT = "langchain-agent"


@pytest.fixture
async def protected() -> AsyncIterator[ProtectedAgent]:
    async with protected_whoami(REMOTE, "lc-svc", "lc-s3cret") as agent:
        yield agent


@pytest.fixture
def idp(protected: ProtectedAgent) -> IdentityProvider:
    return protected.idp


@pytest.fixture
def remote(protected: ProtectedAgent) -> tuple[Any, list[str]]:
    return protected.server, protected.callers


def own(idp: IdentityProvider) -> ClientCredentials:
    return ClientCredentials("lc-svc", "lc-s3cret", token_url=idp.token_url)


async def run_agent(
    tool: Any, config: dict[str, Any] | None = None, checkpointer: Any = None
) -> str:
    graph = agent_graph(
        ToolLoopModel(tool_name=tool.name, arg_name="message"), [tool], checkpointer=checkpointer
    )
    state = await graph.ainvoke({"messages": [("user", "who am I?")]}, config=config)
    return str(state["messages"][-1].content)


async def test_the_agent_with_its_own_client_credentials(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    tool = await aremote_agent_tool(srv.url, auth=own(idp))
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    try:
        # a credential in the config is not forwarded by a tool without passthrough
        answer = await run_agent(tool, {"configurable": {CREDENTIAL_KEY: alice}})
    finally:
        await tool.aclose()
    assert answer == "hello lc-svc"
    assert seen == ["lc-svc"]


async def test_passthrough_forwards_the_credential_of_the_runs_config(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    srv, seen = remote
    tool = await aremote_agent_tool(srv.url, auth=own(idp), passthrough=True)
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    bob = Credential.bearer(idp.issue("bob", scopes=["a2a.send"]))
    saver = InMemorySaver()
    try:
        config: dict[str, Any] = {"configurable": {CREDENTIAL_KEY: alice, "thread_id": "t1"}}
        assert await run_agent(tool, config, saver) == "hello alice"
        assert await run_agent(tool, {"configurable": {CREDENTIAL_KEY: bob}}) == "hello bob"
    finally:
        await tool.aclose()
    assert seen == ["alice", "bob"]
    # the token never lands in the checkpoints (a Credential is not copied into metadata)
    for saved in saver.list({"configurable": {"thread_id": "t1"}}):
        assert alice.token not in repr(saved.metadata)
        assert alice.token not in repr(saved.config)


async def test_passthrough_without_a_credential_is_refused_not_sent(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    tool = await aremote_agent_tool(srv.url, auth=own(idp), passthrough=True)
    try:
        answer = await run_agent(tool)
        as_text = await run_agent(tool, {"configurable": {CREDENTIAL_KEY: "raw-token-string"}})
    finally:
        await tool.aclose()
    assert "MissingCredentialError" in answer
    assert "passthrough" in answer
    assert "must be an a2a_core Credential" in as_text
    assert seen == []  # never sent with the tool's own credentials


async def test_without_any_credential_the_remote_agent_refuses(
    remote: tuple[Any, list[str]],
) -> None:
    srv, seen = remote
    tool = await aremote_agent_tool(srv.url)
    try:
        answer = await run_agent(tool)
    finally:
        await tool.aclose()
    assert "answered with an error (AuthenticationRequiredError" in answer
    assert seen == []


async def test_a_served_langchain_agent_forwards_its_callers_token(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    tool = await aremote_agent_tool(srv.url, auth=own(idp), passthrough=True)
    graph = agent_graph(ToolLoopModel(tool_name=tool.name, arg_name="message"), [tool])
    token = idp.issue("alice", audience=[FRONT, REMOTE], scopes=["a2a.send"])
    try:
        async with (
            lc_server(graph, oidc_issuer=idp.issuer, oidc_audience=FRONT) as served,
            await A2AClient.connect(
                served.url, headers={"Authorization": f"Bearer {token}"}
            ) as client,
        ):
            answer = (await client.send("who am I?")).text
    finally:
        await tool.aclose()
    assert answer == "hello alice"
    assert seen == ["alice"]


async def test_the_remote_runnable_forwards_with_passthrough(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    runnable = RemoteA2ARunnable(srv.url, auth=own(idp), passthrough=True)
    alice = Credential.bearer(idp.issue("alice", scopes=["a2a.send"]))
    try:
        answer = await runnable.ainvoke("hi", {"configurable": {CREDENTIAL_KEY: alice}})
        streamed = [
            c async for c in runnable.astream("hi", {"configurable": {CREDENTIAL_KEY: alice}})
        ]
    finally:
        await runnable.aclose()
    assert answer == "hello alice"
    assert "".join(streamed) == "hello alice"
    assert seen == ["alice", "alice"]
