"""``AgentExecutor.starts_task_at_once``: the task is stored and announced before the agent runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.executor import FunctionExecutor, GeneratorExecutor
from a2a_core.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    StreamEvent,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
)
from server_core_support import CALL, ServiceFactory, send


class Gated(AgentExecutor):
    """Says nothing until the test opens its gate; then answers, or replies with a Message."""

    def __init__(self, *, at_once: bool, reply: bool = False) -> None:
        self.starts_task_at_once = at_once
        self.reply = reply
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.entered.set()
        await self.gate.wait()
        if self.reply:
            await updater.reply("a bare reply")
        else:
            await updater.add_artifact("done")


async def _announced(service: A2AService) -> tuple[AsyncIterator[StreamEvent], Task]:
    """A streamed send's stream and its first event, which must be the task."""
    stream = await service.stream_message(send("hi"), CALL)
    first = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(first, Task)
    return stream, first


async def test_a_streamed_send_announces_the_stored_task_before_the_agent_speaks(
    make_service: ServiceFactory,
) -> None:
    agent = Gated(at_once=True)
    service = make_service(agent)
    stream, first = await _announced(service)
    assert first.status.state is TaskState.SUBMITTED
    assert first.history[-1].text == "hi"
    stored = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert stored.status.state is TaskState.SUBMITTED
    assert not agent.gate.is_set()
    agent.gate.set()
    rest = [event async for event in stream]
    assert [type(event).__name__ for event in rest] == [
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.COMPLETED


async def test_without_it_the_first_event_waits_for_the_agent(make_service: ServiceFactory) -> None:
    agent = Gated(at_once=False)
    service = make_service(agent)
    stream = await service.stream_message(send("hi"), CALL)
    first = asyncio.ensure_future(anext(stream))
    await asyncio.wait_for(agent.entered.wait(), 5)
    await asyncio.sleep(0.05)
    assert not first.done()  # the agent could still answer with a bare Message
    agent.gate.set()
    assert isinstance(await asyncio.wait_for(first, 5), Task)
    assert [type(event).__name__ async for event in stream] == [
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]


async def test_the_announced_task_can_be_canceled_before_the_agent_speaks(
    make_service: ServiceFactory,
) -> None:
    agent = Gated(at_once=True)
    service = make_service(agent)
    stream, first = await _announced(service)
    canceled = await service.cancel_task(CancelTaskRequest(id=first.id), CALL)
    assert canceled.status.state is TaskState.CANCELED
    rest = [event async for event in stream]
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.CANCELED


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_reply_becomes_the_final_status_message(
    make_service: ServiceFactory, streamed: bool
) -> None:
    agent = Gated(at_once=True, reply=True)
    agent.gate.set()
    service = make_service(agent)
    if streamed:
        events = [event async for event in await service.stream_message(send(), CALL)]
        assert isinstance(events[0], Task)
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        status = last.status
    else:
        result = await service.send_message(send(), CALL)
        assert isinstance(result, Task)  # never a bare Message from such an agent
        status = result.status
    assert status.state is TaskState.COMPLETED
    assert isinstance(status.message, Message)
    assert status.message.text == "a bare reply"


async def test_an_agent_that_replies_keeps_its_direct_reply_by_default(
    make_service: ServiceFactory,
) -> None:
    agent = Gated(at_once=False, reply=True)
    agent.gate.set()
    service = make_service(agent)
    events = [event async for event in await service.stream_message(send(), CALL)]
    assert len(events) == 1
    assert isinstance(events[0], Message)


def test_generator_agents_start_tasks_at_once_unless_they_hold_the_updater() -> None:
    async def chunks(context: RequestContext) -> AsyncIterator[str]:
        yield context.text

    async def chunks_and_updater(
        context: RequestContext, updater: TaskUpdater
    ) -> AsyncIterator[str]:
        yield context.text

    async def answer(context: RequestContext) -> str:
        return context.text

    assert GeneratorExecutor(chunks).starts_task_at_once
    assert not GeneratorExecutor(chunks_and_updater).starts_task_at_once  # could reply
    assert not FunctionExecutor(answer).starts_task_at_once  # may return a Message
