"""The Python API: tool definitions from cards, one tool per agent, and the Streamable HTTP
app mounted into a host application (FastAPI), called by the official MCP client."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from a2a_core import running_server
from a2a_core.client import remote_skills
from a2a_mcp import AgentBridge
from a2a_mcp.tooldefs import MAX_NAME, skill_fields, tool_name, unique_names
from fastapi import FastAPI
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_agents import DataAgent, data_card, echo_agent, echo_card
from mcp_support import text_of

pytestmark = pytest.mark.timeout(60)


def test_tool_names_are_valid_unique_and_bounded() -> None:
    assert tool_name("Travel Agent (EU)", "book.flight/v2") == "Travel_Agent_EU_book_flight_v2"
    assert tool_name("Ünïcode ✈", "") == "n_code"
    assert tool_name("", "") == "agent"
    long = tool_name("a" * 80, "b" * 80)
    assert len(long) == MAX_NAME
    names = unique_names(["echo", "Echo", "echo", "x" * MAX_NAME, "x" * MAX_NAME])
    assert names == ["echo", "Echo_2", "echo_3", "x" * MAX_NAME, "x" * (MAX_NAME - 2) + "_2"]


def test_the_data_fields_a_skill_names_come_from_its_json_examples() -> None:
    [plan, rate] = remote_skills(data_card(), "http://agent")
    assert skill_fields(plan) == {
        "city": {"type": "string", "description": "the 'city' field of the skill's JSON input"},
        "days": {"type": "integer", "description": "the 'days' field of the skill's JSON input"},
        "budget": {"type": "number", "description": "the 'budget' field of the skill's JSON input"},
    }
    assert skill_fields(rate) == {}


@contextlib.asynccontextmanager
async def serve_app(app: Any) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [sock])
        with anyio.fail_after(20):
            while not server.started:  # noqa: ASYNC110 - uvicorn has no started event
                await anyio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


@contextlib.asynccontextmanager
async def mcp_client(url: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx.AsyncClient(timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_the_bridge_mounts_into_a_host_app_and_sends_typed_data() -> None:
    async with running_server(DataAgent(), card=data_card()) as agent:
        bridge = AgentBridge([agent.url], refresh_seconds=None)
        mcp_app = bridge.streamable_http_app(path="/mcp")

        @contextlib.asynccontextmanager
        async def lifespan(_: FastAPI) -> AsyncIterator[None]:
            async with mcp_app.router.lifespan_context(mcp_app):
                yield

        host = FastAPI(lifespan=lifespan)

        @host.get("/health")
        async def health() -> dict[str, str]:
            return {"status": "ok"}

        host.mount("/agents", mcp_app)
        async with serve_app(host) as base:
            async with httpx.AsyncClient() as http:
                assert (await http.get(f"{base}/health")).json() == {"status": "ok"}
            async with mcp_client(f"{base}/agents/mcp") as mcp:
                tools = {t.name: t for t in (await mcp.list_tools()).tools}
                assert sorted(tools) == ["Trips_plan", "Trips_rate"]
                plan = tools["Trips_plan"].inputSchema
                assert plan["required"] == []
                assert {"city", "days", "budget"} <= set(plan["properties"])
                assert "data" not in plan["properties"]  # it names its fields
                assert "data" in tools["Trips_rate"].inputSchema["properties"]
                result = await mcp.call_tool("Trips_plan", {"city": "Lyon", "days": 2})
                assert result.structuredContent == {
                    "got": [{"city": "Lyon", "days": 2}],
                    "skill": "plan",
                    "text": "",
                }
                bad = await mcp.call_tool("Trips_plan", {"days": "two"})
                assert bad.isError
                assert "validation" in text_of(bad).lower()


async def test_one_tool_per_agent() -> None:
    async with (
        running_server(echo_agent(), card=echo_card()) as echo,
        running_server(DataAgent(), card=data_card()) as trips,
    ):
        bridge = AgentBridge([echo.url, trips.url], per_agent=True, refresh_seconds=None)
        async with bridge.running():
            tools = bridge.tools
        assert [t.name for t in tools] == ["Echo", "Trips"]
        assert "Plan a trip" in (tools[1].description or "")
        assert tools[1].inputSchema["required"] == ["text"]
