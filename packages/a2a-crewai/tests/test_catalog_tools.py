"""CrewAI tools from an AI Catalog: one tool per agent a service lists (real sockets)."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core import running_server
from a2a_core.server import RequestContext
from a2a_crewai import catalog_tools

pytestmark = pytest.mark.timeout(60)


async def shout(context: RequestContext) -> str:
    """Says it louder."""
    return context.text.upper()


async def whisper(context: RequestContext) -> str:
    """Says it softer."""
    return context.text.lower()


async def test_one_tool_per_agent_of_a_hosts_catalog() -> None:
    async with running_server({"shout": shout, "whisper": whisper}) as server:
        tools = await asyncio.to_thread(catalog_tools, server.url)
        try:
            assert [t.name for t in tools] == ["shout", "whisper"]
            assert "Says it softer" in tools[1].description
            answer = await asyncio.to_thread(tools[0].run, message="hey")
            assert answer == "HEY"
        finally:
            for tool in tools:
                tool.close()
