"""A served crew calling a protected remote agent: own credentials, passthrough, none.

The remote agent is protected by JWTBearerAuth with the test identity
provider and records the principal of every call. The crew is served by us
(also behind the IdP) and called by the end user, alice. Its agent (a
scripted fake model) calls the remote agent's tool once, then answers with
what the tool returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a_core.client import A2AClient, ClientCredentials
from a2a_core.testing.idp import IdentityProvider, ProtectedAgent, protected_whoami
from a2a_crewai import A2ATool, RemoteA2AAgent, remote_agent_tool
from a2a_crewai import running_server as crew_server
from crewai import Agent, Crew
from crewai import Task as CrewTask
from crewai.crews.crew_output import CrewOutput
from crewai_fakes import ScriptedLLM, tool_call, tool_result_text

pytestmark = pytest.mark.timeout(90)

REMOTE = "remote-agent"
CREW = "crew-agent"


@pytest.fixture
async def protected() -> AsyncIterator[ProtectedAgent]:
    async with protected_whoami(REMOTE, "crew-svc", "crew-s3cret") as agent:
        yield agent


@pytest.fixture
def idp(protected: ProtectedAgent) -> IdentityProvider:
    return protected.idp


@pytest.fixture
def remote(protected: ProtectedAgent) -> tuple[Any, list[str]]:
    return protected.server, protected.callers


def caller_crew(tool: A2ATool) -> Crew:
    llm = ScriptedLLM(
        model="caller",
        script=[tool_call(tool.name, message="who am I?"), lambda m, t: tool_result_text(m)],
    )
    agent = Agent(
        role="Coordinator",
        goal="Ask the remote agent",
        backstory="Delegates.",
        llm=llm,
        tools=[tool],
        max_retry_limit=0,
    )
    task = CrewTask(description="Find out about {input}.", expected_output="An answer", agent=agent)
    return Crew(agents=[agent], tasks=[task], name="Caller crew")


async def ask_served_crew(crew: Crew, idp: IdentityProvider) -> str:
    """Alice calls the crew we serve (behind the IdP) and gets its answer."""
    token = idp.issue("alice", audience=[CREW, REMOTE], scopes=["a2a.send"])
    async with (
        crew_server(crew, oidc_issuer=idp.issuer, oidc_audience=CREW) as served,
        await A2AClient.connect(served.url, headers={"Authorization": f"Bearer {token}"}) as c,
    ):
        return (await c.send("it")).text


async def test_a_served_crew_forwards_the_end_users_token(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    own = ClientCredentials("crew-svc", "crew-s3cret", token_url=idp.token_url)
    tool = await asyncio.to_thread(remote_agent_tool, srv.url, auth=own, passthrough=True)
    try:
        answer = await ask_served_crew(caller_crew(tool), idp)
    finally:
        await tool.aclose()
    assert answer == "hello alice"
    assert seen == ["alice"]  # the end user, not the crew's own crew-svc


async def test_a_served_crew_with_its_own_client_credentials(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    own = ClientCredentials("crew-svc", "crew-s3cret", token_url=idp.token_url)
    tool = await asyncio.to_thread(remote_agent_tool, srv.url, auth=own)
    try:
        answer = await ask_served_crew(caller_crew(tool), idp)
    finally:
        await tool.aclose()
    assert answer == "hello crew-svc"  # without passthrough the user's token stays here
    assert seen == ["crew-svc"]


async def test_a_crew_without_any_credential_is_refused_clearly(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    tool = await asyncio.to_thread(remote_agent_tool, srv.url)
    try:
        answer = await ask_served_crew(caller_crew(tool), idp)
    finally:
        await tool.aclose()
    assert "answered with an error (AuthenticationRequiredError" in answer
    assert seen == []


async def test_passthrough_outside_a_served_crew_is_refused_not_sent(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    own = ClientCredentials("crew-svc", "crew-s3cret", token_url=idp.token_url)
    tool = await asyncio.to_thread(remote_agent_tool, srv.url, auth=own, passthrough=True)
    try:
        crew = caller_crew(tool)
        output = await asyncio.to_thread(crew.kickoff, inputs={"input": "x"})
    finally:
        await tool.aclose()
    assert isinstance(output, CrewOutput)
    assert "MissingCredentialError" in output.raw
    assert "passthrough" in output.raw
    assert seen == []  # never sent with the tool's own credentials


async def test_a_remote_crew_member_forwards_the_end_users_token(
    idp: IdentityProvider, remote: tuple[Any, list[str]]
) -> None:
    srv, seen = remote
    member = await asyncio.to_thread(RemoteA2AAgent.connect, srv.url, passthrough=True)
    task = CrewTask(description="{input}", expected_output="who", agent=member)
    crew = Crew(agents=[member], tasks=[task], name="Front desk")
    try:
        answer = await ask_served_crew(crew, idp)
    finally:
        await member.remote.aclose()
    assert answer == "hello alice"
    assert seen == ["alice"]
