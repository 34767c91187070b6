"""One trace across agents, both ways, over real sockets (OpenTelemetry SDK in memory).

1. The main demo's flow (examples/demo.py's own chain and crew): a CrewAI crew calls
   a served LangChain chain over A2A. Its spans form one trace in which each of
   crew -> task -> tool -> A2A client -> A2A server -> chain -> model is an ancestor
   of the next.
2. The reverse: a LangGraph agent (LangChain callbacks traced by
   ``a2a_langchain.OpenTelemetryCallbackHandler``) calls a served crew:
   graph -> tool -> A2A client -> A2A server -> crew -> task -> agent -> model.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a_core.testing.otel import InMemoryTelemetry
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def otel() -> Iterator[InMemoryTelemetry]:
    with InMemoryTelemetry() as captured:
        yield captured


def _demo() -> Any:
    spec = importlib.util.spec_from_file_location(
        "a2a_demo_for_traces", ROOT / "examples" / "demo.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _find(spans: list[ReadableSpan], prefix: str, kind: SpanKind | None = None) -> ReadableSpan:
    found = [s for s in spans if s.name.startswith(prefix) and (kind is None or s.kind is kind)]
    assert len(found) == 1, (prefix, sorted((s.name, str(s.kind)) for s in spans))
    return found[0]


def _ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[int]:
    chain: list[int] = []
    current = span
    while current.parent is not None and current.parent.span_id in by_id:
        chain.append(current.parent.span_id)
        current = by_id[current.parent.span_id]
    return chain


def _assert_lineage(spans: list[ReadableSpan], lineage: list[ReadableSpan]) -> None:
    """One trace; each span of ``lineage`` is an ancestor of the next."""
    traces: dict[int, list[str]] = {}
    for s in spans:
        assert s.context is not None
        traces.setdefault(s.context.trace_id, []).append(s.name)
    assert len({s.context.trace_id for s in lineage if s.context}) == 1, repr(traces)[:3000]
    by_id = {s.context.span_id: s for s in spans if s.context}
    for upper, lower in itertools.pairwise(lineage):
        assert upper.context is not None
        assert upper.context.span_id in _ancestors(lower, by_id), (
            upper.name,
            lower.name,
            [by_id[a].name for a in _ancestors(lower, by_id)],
        )


async def test_crew_calling_a_served_langchain_chain_is_one_trace(otel: InMemoryTelemetry) -> None:
    from a2a_crewai import remote_agent_tool
    from a2a_langchain import running_server

    demo = _demo()
    async with running_server(demo.weather_chain(), name="Weather desk") as desk:
        tool = await asyncio.to_thread(remote_agent_tool, desk.url)
        try:
            output = await asyncio.to_thread(
                demo.trip_crew(tool).kickoff, inputs={"city": "Lisbon"}
            )
        finally:
            tool.close()
    assert "Sunny" in str(output)
    from crewai.events import crewai_event_bus

    crewai_event_bus.flush(timeout=10)
    spans = otel.spans()
    crew = _find(spans, "crewai.crew")
    task = _find(spans, "crewai.task")
    crew_tool = _find(spans, f"execute_tool {tool.name}")
    client = _find(spans, "lf.a2a.v1.A2AService/Send", SpanKind.CLIENT)
    server = _find(spans, "lf.a2a.v1.A2AService/Send", SpanKind.SERVER)
    run = _find(spans, "a2a.agent.run")
    chain = _find(spans, "Weather desk")
    model = _find(spans, "chat FakeListChatModel")
    agent = _find(spans, "crewai.agent")
    _assert_lineage(spans, [crew, task, agent, crew_tool, client, server, run, chain, model])
    crew_models = [s for s in spans if s.name == "chat scripted"]
    assert len(crew_models) == 2  # the tool call, then the plan
    for crew_model in crew_models:
        _assert_lineage(spans, [crew, task, agent, crew_model])
    assert crew.parent is None  # the crew is the root: nothing before it in this process
    assert dict(model.attributes or {})["gen_ai.operation.name"] == "chat"
    assert dict(chain.attributes or {})["langchain.run.type"] == "chain"


async def test_langchain_agent_calling_a_served_crew_is_one_trace(
    otel: InMemoryTelemetry,
) -> None:
    from a2a_crewai import running_server as serve_crew
    from a2a_crewai.testing import ScriptedLLM
    from a2a_langchain import OpenTelemetryCallbackHandler, aremote_agent_tool
    from crewai import Agent, Crew, Task
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    planner = Agent(
        role="Trip planner",
        goal="Plan a day out",
        backstory="Plans days.",
        llm=ScriptedLLM(model="scripted-planner", script=["Walk, lunch, sunset."]),
    )
    crew = Crew(
        agents=[planner],
        tasks=[Task(description="{request}", expected_output="A plan", agent=planner)],
    )
    async with serve_crew(crew, name="Trip planner") as planner_server:
        tool = await aremote_agent_tool(planner_server.url, name="trip_planner")

        class ToolModel(FakeMessagesListChatModel):
            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                return self

        model = ToolModel(
            responses=[
                AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "trip_planner", "args": {"message": "Plan Lisbon"}, "id": "c1"}
                    ],
                ),
                AIMessage(content="Here is your plan."),
            ]
        )

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", call_model)
        graph.add_node("tools", ToolNode([tool]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        app = graph.compile().with_config(run_name="Assistant")
        result = await app.ainvoke(
            {"messages": [HumanMessage("Plan my day in Lisbon")]},
            {"callbacks": [OpenTelemetryCallbackHandler()]},
        )
        assert result["messages"][-1].content == "Here is your plan."
        from crewai.events import crewai_event_bus

        await asyncio.to_thread(crewai_event_bus.flush, 10)
    spans = otel.spans()
    root = _find(spans, "Assistant")
    lc_tool = _find(spans, "execute_tool trip_planner")
    client = _find(spans, "lf.a2a.v1.A2AService/Send", SpanKind.CLIENT)
    server = _find(spans, "lf.a2a.v1.A2AService/Send", SpanKind.SERVER)
    run = _find(spans, "a2a.agent.run")
    crew_span = _find(spans, "crewai.crew")
    task = _find(spans, "crewai.task")
    agent = _find(spans, "crewai.agent Trip planner")
    llm = _find(spans, "chat scripted-planner")
    _assert_lineage(spans, [root, lc_tool, client, server, run, crew_span, task, agent, llm])
    assert root.parent is None
