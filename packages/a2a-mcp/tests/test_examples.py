"""The MCP examples run offline: a LangGraph agent whose tools come from a real MCP server
(through langchain-mcp-adapters), served over A2A with a2a-langchain."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

pytestmark = pytest.mark.timeout(120)


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_a_langgraph_agent_with_mcp_tools_answers_over_a2a() -> None:
    example = load("mcp_langgraph")
    tools = await example.load_tools()
    assert [t.name for t in tools] == ["forecast"]
    assert await example.ask_once("Weather in Oslo?") == "Tomorrow in Oslo: snow, -3 C."
