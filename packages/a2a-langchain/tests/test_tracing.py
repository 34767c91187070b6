"""LangChain runs as spans of the A2A trace (``a2a_langchain.OpenTelemetryCallbackHandler``).

Over real sockets on 127.0.0.1 with the OpenTelemetry SDK's in-memory exporter:

- a served chain's run and its model run are children of the A2A agent run,
  and callbacks the user configured still run beside the handler (never replaced);
- a handler the user already gave is not doubled;
- on the calling side, a sync remote-agent tool's span is the parent of its
  A2A call (the call crosses to the client's background loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from a2a_core.compose.serve import running_server as core_running_server
from a2a_core.testing.otel import InMemoryTelemetry
from a2a_langchain import OpenTelemetryCallbackHandler, remote_agent_tool, running_server
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def otel() -> Iterator[InMemoryTelemetry]:
    with InMemoryTelemetry() as captured:
        yield captured


class Recorder(BaseCallbackHandler):
    """The user's own callback handler (as LangSmith's tracer would be)."""

    def __init__(self) -> None:
        self.chains: list[UUID] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.chains.append(run_id)


def _chain() -> Any:
    prompt = ChatPromptTemplate.from_messages([("human", "{input}")])
    return prompt | FakeListChatModel(responses=["sunny"]) | StrOutputParser()


def _child_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None
    assert parent.context is not None
    return child.parent.span_id == parent.context.span_id


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, sorted(s.name for s in spans)
    return found[0]


async def test_a_served_chain_is_traced_beside_the_users_callbacks(
    otel: InMemoryTelemetry,
) -> None:
    mine = Recorder()
    async with running_server(_chain(), name="Desk", runnable_config={"callbacks": [mine]}) as srv:
        from a2a_core.client import A2AClient

        async with A2AClient.for_endpoint(srv.url) as client:
            assert (await client.send("weather?")).text == "sunny"
    spans = otel.spans()
    run = _one(spans, "a2a.agent.run")
    chain = _one(spans, "Desk")
    model = _one(spans, "chat FakeListChatModel")
    assert _child_of(chain, run)
    assert _child_of(model, chain)
    assert dict(model.attributes or {})["langchain.run.type"] == "llm"
    assert mine.chains  # the user's handler saw the runs too
    assert str(mine.chains[0]) == dict(chain.attributes or {})["langchain.run.id"]


async def test_a_handler_already_given_is_not_doubled(
    otel: InMemoryTelemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[UUID] = []
    original = OpenTelemetryCallbackHandler._start  # pyright: ignore[reportPrivateUsage]

    def counting(self: OpenTelemetryCallbackHandler, run_id: UUID, *args: Any) -> None:
        started.append(run_id)
        original(self, run_id, *args)

    monkeypatch.setattr(OpenTelemetryCallbackHandler, "_start", counting)
    config: RunnableConfig = {"callbacks": [OpenTelemetryCallbackHandler()]}
    async with running_server(_chain(), name="Desk", runnable_config=config) as srv:
        from a2a_core.client import A2AClient

        async with A2AClient.for_endpoint(srv.url) as client:
            await client.send("weather?")
    spans = otel.spans()
    _one(spans, "Desk")
    _one(spans, "chat FakeListChatModel")
    assert started
    assert len(started) == len(set(started))  # one handler saw each run: not two


async def test_a_sync_remote_tool_is_the_parent_of_its_call(otel: InMemoryTelemetry) -> None:
    async def answer(context: Any) -> str:
        return "remote answer"

    async with core_running_server(answer) as remote:
        tool = await asyncio.to_thread(remote_agent_tool, remote.url, name="helper")
        output = await asyncio.to_thread(
            tool.invoke,
            {"message": "hi"},
            {"callbacks": [OpenTelemetryCallbackHandler()]},
        )
    assert "remote answer" in str(output)
    spans = otel.spans()
    tool_span = _one(spans, "execute_tool helper")
    [client] = [s for s in spans if s.kind is SpanKind.CLIENT and "/Send" in s.name]
    [server] = [s for s in spans if s.kind is SpanKind.SERVER and "/Send" in s.name]
    assert _child_of(client, tool_span)
    assert _child_of(server, client)
