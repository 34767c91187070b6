"""The toolkit from an AI Catalog: one tool per agent a service lists (real sockets)."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core import running_server
from a2a_core.server import RequestContext
from a2a_langchain import A2AToolkit

pytestmark = pytest.mark.timeout(60)


async def shout(context: RequestContext) -> str:
    """Says it louder."""
    return context.text.upper()


async def whisper(context: RequestContext) -> str:
    """Says it softer."""
    return context.text.lower()


async def test_one_tool_per_agent_of_the_catalog_sync_and_async() -> None:
    async with running_server({"shout": shout, "whisper": whisper}) as server:
        toolkit = await A2AToolkit.afrom_catalog(server.url)  # a host: its catalog
        try:
            tools = toolkit.get_tools()
            assert [t.name for t in tools] == ["shout", "whisper"]
            assert await tools[0].ainvoke({"message": "hey"}) == "HEY"
            assert await tools[1].ainvoke({"message": "HEY"}) == "hey"
        finally:
            await toolkit.aclose()
        catalog = server.url + "/.well-known/ai-catalog.json"
        toolkit = await asyncio.to_thread(A2AToolkit.from_catalog, catalog)
        try:
            assert [t.name for t in toolkit.get_tools()] == ["shout", "whisper"]
            assert await asyncio.to_thread(toolkit.get_tools()[1].invoke, {"message": "Ok"}) == "ok"
        finally:
            await asyncio.to_thread(toolkit.close)
