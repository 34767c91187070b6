"""A LangGraph agent whose tools come from an MCP server, served as an A2A agent.

The tools are loaded with ``langchain-mcp-adapters`` from ``mcp_weather_server.py``
(a real MCP server, started as a subprocess over stdio); the graph is the classic
agent loop (model -> tools -> model); a2a-langchain serves it over A2A. Offline:
the model is a scripted stand-in that calls the ``forecast`` tool, then answers
with its result.

    python examples/mcp_langgraph.py                      # serves on http://localhost:8000
    python examples/mcp_langgraph.py --ask "Weather in Oslo?"   # serve, ask once, stop

Then ``a2a send http://localhost:8000 "Weather in Paris?"``, or put it in an MCP
host with ``a2a mcp http://localhost:8000`` (a2a-adapters-mcp).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a_core import A2AClient
from a2a_langchain import running_server, serve
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

SERVER = Path(__file__).with_name("mcp_weather_server.py")


async def load_tools() -> list[BaseTool]:
    """The MCP server's tools as LangChain tools (each call opens its own MCP session)."""
    client = MultiServerMCPClient(
        {"weather": {"command": sys.executable, "args": [str(SERVER)], "transport": "stdio"}}
    )
    return await client.get_tools()


class ScriptedModel(BaseChatModel):
    """Offline stand-in for a tool-calling chat model: forecast(city), then the answer."""

    @property
    def _llm_type(self) -> str:
        return "scripted-weather"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"Tomorrow in {last.text}.")
        else:
            question = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
            words = re.findall(r"[A-Za-z]+", question)
            city = words[-1] if words else "Paris"
            call = {"name": "forecast", "args": {"city": city}, "id": "call-1", "type": "tool_call"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build_graph(tools: list[BaseTool]) -> Any:
    """The agent loop, as LangGraph's docs write it."""
    model = ScriptedModel().bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


async def ask_once(question: str) -> str:
    graph = build_graph(await load_tools())
    async with (
        running_server(graph, name="Weather", description="Forecasts, from MCP tools") as server,
        await A2AClient.connect(server.url) as client,
    ):
        return (await client.send(question)).text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--ask", help="serve, ask this once, print the answer, stop")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.ask:
        print(asyncio.run(ask_once(args.ask)))
        return
    graph = build_graph(asyncio.run(load_tools()))
    serve(graph, name="Weather", description="Forecasts, from MCP tools", port=args.port)


if __name__ == "__main__":
    main()
