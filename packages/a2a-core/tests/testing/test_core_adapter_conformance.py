"""The core runs the adapter suite against its own agents.

- ``TestEchoAdapter``: the built-in ``echo`` plugin (``EchoAgent``, found by its
  entry point) for echo and stream; reference executors for ask, slow and fail.
- ``TestPlainFunctionAgents``: what the core serves without any plugin (an async
  function, an async generator function, executors), over HTTP+JSON on a real
  socket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from a2a_core._builtins.echo import EchoAgent
from a2a_core.server import RequestContext
from a2a_core.testing import (
    AdapterConformance,
    AskingAgent,
    FailingAgent,
    Scenario,
    SlowAgent,
)
from a2a_core.types import AgentCard, AgentSkill


class TestEchoAdapter(AdapterConformance):
    entry_point_name = "echo"

    def make_agent(self, scenario: Scenario) -> object | None:
        match scenario.name:
            case "echo":
                return EchoAgent()
            case "stream":
                return EchoAgent(chunk_size=7)
            case "ask":
                return AskingAgent()
            case "slow":
                return SlowAgent(scenario.probe)
            case "fail":
                return FailingAgent(scenario.secret)


async def echo(context: RequestContext) -> str:
    """Answers with what it was told."""
    return f"echo: {context.text}"


async def echo_in_pieces(context: RequestContext) -> AsyncIterator[str]:
    """Streams the answer a few characters at a time."""
    reply = f"echo: {context.text}"
    for i in range(0, len(reply), 5):
        yield reply[i : i + 5]


FUNCTION_CARD = AgentCard(
    name="Plain functions",
    description="Async functions served by the core without a plugin",
    version="1.0.0",
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
)


class TestPlainFunctionAgents(AdapterConformance):
    opt_out = {
        "test_plugin_is_discovered": "plain functions are served by the core's fallback, "
        "not by a plugin: there is no entry point to discover",
    }
    service_options = {"card": FUNCTION_CARD}
    binding = "HTTP+JSON"
    over_socket = True

    def make_agent(self, scenario: Scenario) -> object | None:
        match scenario.name:
            case "echo":
                return echo
            case "stream":
                return echo_in_pieces
            case "ask":
                return AskingAgent()
            case "slow":
                return SlowAgent(scenario.probe)
            case "fail":
                return FailingAgent(scenario.secret)
