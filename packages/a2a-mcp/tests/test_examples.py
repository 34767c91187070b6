"""The MCP examples run offline: a LangGraph agent whose tools come from a real MCP server
(through langchain-mcp-adapters), served over A2A with a2a-langchain, and a CrewAI crew whose
agent uses the same server through CrewAI's MCP support, served with a2a-crewai."""

from __future__ import annotations

import importlib.util
import warnings
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


@pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai.*")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:pydantic.*")
async def test_a_crewai_crew_with_mcp_tools_answers_over_a2a() -> None:
    with warnings.catch_warnings():  # CrewAI's import warns (deprecations, ImportWarnings)
        warnings.simplefilter("ignore")
        example = load("mcp_crewai")
    [tool] = example.crew.agents[0].tools  # resolved by CrewAI's MCP support
    assert "forecast" in tool.description.lower()
    assert await example.ask_once("Lisbon") == "Tomorrow in Lisbon: clear, 19 C."
