"""A CrewAI crew whose agent takes its tools from an MCP server, served as an A2A agent.

CrewAI's own MCP support (``MCPServerStdio``, ``Agent.get_mcp_tools``) starts
``mcp_weather_server.py`` (a real MCP server) over stdio; a2a-crewai serves the
crew over A2A. Offline: the agent's model is scripted (it calls the MCP tool,
then answers with its result).

    python examples/mcp_crewai.py                    # serves on http://localhost:8000
    python examples/mcp_crewai.py --ask "Lisbon"     # serve, ask once, stop
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from a2a_crewai import offline_crewai

offline_crewai()  # before CrewAI is imported: no telemetry, no prompts, storage in a temp folder

from a2a_core import A2AClient  # noqa: E402
from a2a_crewai import running_server, serve  # noqa: E402
from a2a_crewai.testing import ScriptedLLM, last_user_text, tool_call, tool_result_text  # noqa: E402
from crewai import Agent, Crew, Task  # noqa: E402
from crewai.mcp import MCPServerStdio  # noqa: E402

SERVER = Path(__file__).with_name("mcp_weather_server.py")


def _tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools or []:
        if isinstance(tool, dict):
            spec: Any = tool.get("function", tool)
            names.append(str(spec.get("name")))
        else:
            names.append(str(getattr(tool, "name", "")))
    return names


def scripted_model() -> ScriptedLLM:
    """Calls the MCP forecast tool for the city in the task, then answers with its result."""

    def call_the_tool(messages: Any, tools: Any) -> Any:
        found = re.search(r"weather in (\w+)", last_user_text(messages))
        names = _tool_names(tools)  # CrewAI prefixes the server's name (and may shorten it)
        name = next((n for n in names if "forecast" in n), names[0] if names else "forecast")
        return tool_call(name, city=found.group(1) if found else "Paris")

    def answer(messages: Any, tools: Any) -> str:
        return f"Tomorrow in {tool_result_text(messages)}."

    return ScriptedLLM(model="scripted-weather", script=[call_the_tool, answer])


def build_crew() -> Crew:
    forecaster = Agent(
        role="Forecaster",
        goal="Tell the weather",
        backstory="Reads the forecast tools.",
        llm=scripted_model(),
        max_iter=3,
        max_retry_limit=0,
    )
    # CrewAI's MCP support resolves the server's tools. They are given as `tools=` rather
    # than `mcps=`: a2a-crewai runs each A2A task on a copy of the crew, and CrewAI's
    # Crew.copy() (1.15) leaves `mcps` out.
    forecaster.tools = forecaster.get_mcp_tools(
        [MCPServerStdio(command=sys.executable, args=[str(SERVER)])]
    )
    task = Task(
        description="Give tomorrow's weather in {city}.",
        expected_output="The forecast",
        agent=forecaster,
    )
    return Crew(agents=[forecaster], tasks=[task], name="Weather crew")


crew = build_crew()  # a2a serve examples/mcp_crewai.py:crew


async def ask_once(city: str) -> str:
    async with (
        running_server(build_crew(), name="Weather crew") as server,
        await A2AClient.connect(server.url) as client,
    ):
        return (await client.send(city)).text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--ask", help="serve, ask this once, print the answer, stop")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.ask:
        print(asyncio.run(ask_once(args.ask)))
        return
    serve(crew, port=args.port)


if __name__ == "__main__":
    main()
