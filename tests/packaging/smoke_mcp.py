"""Run inside a fresh environment that holds only the a2a-adapters-mcp wheel and its dependencies.

It serves the core's echo agent on 127.0.0.1, then runs the installed ``a2a
mcp URL`` command (the subcommand the wheel's plugin registers) and talks to
it over stdio with the MCP SDK's client: the tool list, and a call with a
progress token. It prints one JSON line for ``tests/packaging/test_install.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import a2a_core
import a2a_mcp
from a2a_core import AgentCapabilities, AgentCard, AgentSkill, EchoAgent, running_server
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main() -> None:
    card = AgentCard(
        name="Wheel smoke",
        description="The echo agent",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    a2a = str(Path(sys.executable).with_name("a2a"))
    updates: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(message or "")

    async with running_server(EchoAgent(chunk_size=4), card=card, port=0) as server:
        params = StdioServerParameters(command=a2a, args=["mcp", server.url, "--refresh", "0"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            answer = await session.call_tool(tools[0], {"text": "Hi"})
            streamed = await session.call_tool(
                tools[0], {"text": "Stream, please"}, progress_callback=on_progress
            )
        http = [cls.__name__ for cls in server.server.config.http_protocol_class.__mro__]

    def text(result: types.CallToolResult) -> str:
        return "".join(c.text for c in result.content if isinstance(c, types.TextContent))

    print(
        json.dumps(
            {
                "url": server.url,
                "card": card.name if tools == ["Wheel_smoke_echo"] else tools,
                "answer": text(answer),
                "streamed": text(streamed) if len(updates) > 1 else updates,
                "http": http,
                "modules": [a2a_core.__file__, a2a_mcp.__file__],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
