"""The core's adapter conformance suite, for CrewAI crews run offline by scripted models.

``echo`` and ``stream``: the model calls a tool, then answers with its result
(streamed word by word in ``stream``); ``ask``: a human-input task; ``slow``:
an agent that uses a tool until canceled; ``fail``: a model that raises.
"""

from __future__ import annotations

import uuid

from a2a_core.testing import AdapterConformance, Scenario
from crewai_fakes import ScriptedLLM, echo_crew, ticking_crew, tool_echo_crew, when_crew_fails


def make_crew(scenario: Scenario) -> object:
    match scenario.name:
        case "echo":
            return tool_echo_crew()
        case "stream":
            return tool_echo_crew(stream=True)
        case "ask":
            return echo_crew(human_input=True)
        case "slow":
            name = f"slow-{uuid.uuid4().hex}"
            crew, _ = ticking_crew(name, on_tick=scenario.probe.mark_started)
            when_crew_fails(name, scenario.probe.mark_stopped)
            return crew
        case "fail":
            failing = ScriptedLLM(model="fail-fake", script=[RuntimeError(scenario.secret)])
            return echo_crew(llm=failing)


class TestCrewAIAdapter(AdapterConformance):
    """In process, JSON-RPC 1.0."""

    entry_point_name = "crewai"

    def make_agent(self, scenario: Scenario) -> object | None:
        return make_crew(scenario)


class TestCrewAIAdapterOverHttp(AdapterConformance):
    """On a real socket, HTTP+JSON, A2A 0.3."""

    entry_point_name = "crewai"
    over_socket = True
    binding = "HTTP+JSON"
    protocol_version = "0.3"

    def make_agent(self, scenario: Scenario) -> object | None:
        return make_crew(scenario)
