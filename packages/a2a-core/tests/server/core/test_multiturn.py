"""Multi-turn: continuing input-required tasks, context rules, history and artifacts."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.server import Principal, RequestContext, ServerCallContext, TaskUpdater
from a2a_core.types import GetTaskRequest, Role, Task, TaskArtifactUpdateEvent, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send


class Conversation:
    """Asks for a name, then greets; records what each turn saw."""

    def __init__(self) -> None:
        self.turns: list[RequestContext] = []
        self.second_turn_gate: asyncio.Event | None = None

    async def __call__(self, context: RequestContext, updater: TaskUpdater) -> str | None:
        self.turns.append(context)
        if not context.is_continuation:
            await updater.require_input("What is your name?")
            return None
        if self.second_turn_gate is not None:
            await self.second_turn_gate.wait()
        return f"Hello, {context.text}"


async def test_a_reply_with_the_task_id_continues_the_task(make_service: ServiceFactory) -> None:
    agent = Conversation()
    service = make_service(agent)
    first = await service.send_message(send("hi", context_id="ctx-9"), CALL)
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED

    done = await service.send_message(send("Ada", task_id=first.id), CALL)  # no contextId
    assert isinstance(done, Task)
    assert done.id == first.id
    assert done.context_id == "ctx-9"
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts[0].parts[0].text == "Hello, Ada"
    assert [(m.role, m.text) for m in done.history] == [
        (Role.USER, "hi"),
        (Role.AGENT, "What is your name?"),
        (Role.USER, "Ada"),
    ]
    second = agent.turns[1]
    assert second.is_continuation
    assert second.context_id == "ctx-9"
    assert second.message.context_id == "ctx-9"
    assert second.message.task_id == first.id
    assert [m.text for m in second.task.history] == ["hi", "What is your name?", "Ada"]


async def test_continuing_clears_the_question(make_service: ServiceFactory) -> None:
    agent = Conversation()
    agent.second_turn_gate = asyncio.Event()
    service = make_service(agent)
    first = await service.send_message(send("hi"), CALL)
    assert isinstance(first, Task)
    assert first.status.message is not None
    working = await service.send_message(send("Ada", task_id=first.id, immediate=True), CALL)
    assert isinstance(working, Task)
    assert working.status.state is TaskState.WORKING
    assert working.status.message is None
    stored = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert stored.status.state is TaskState.WORKING
    assert stored.status.message is None
    assert stored.history[-1].text == "Ada"
    agent.second_turn_gate.set()
    await eventually(lambda: service.manager.active_count == 0)


async def test_a_contradicting_context_id_is_invalid(make_service: ServiceFactory) -> None:
    service = make_service(Conversation())
    first = await service.send_message(send("hi", context_id="ctx-9"), CALL)
    assert isinstance(first, Task)
    with pytest.raises(InvalidParamsError):
        await service.send_message(send("Ada", task_id=first.id, context_id="other"), CALL)
    stored = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert stored.status.state is TaskState.INPUT_REQUIRED
    assert len(stored.history) == 2
    ok = await service.send_message(send("Ada", task_id=first.id, context_id="ctx-9"), CALL)
    assert isinstance(ok, Task)
    assert ok.status.state is TaskState.COMPLETED


async def test_unknown_and_foreign_task_ids_are_not_found(make_service: ServiceFactory) -> None:
    service = make_service(Conversation())
    with pytest.raises(TaskNotFoundError):
        await service.send_message(send("x", task_id="made-up"), CALL)
    alice = ServerCallContext(principal=Principal("alice"))
    theirs = await service.send_message(send("hi"), alice)
    assert isinstance(theirs, Task)
    with pytest.raises(TaskNotFoundError):
        await service.send_message(send("x", task_id=theirs.id), CALL)
    assert service.manager.active_count == 0


async def test_a_message_to_a_terminal_task_is_unsupported(make_service: ServiceFactory) -> None:
    service = make_service(Conversation())
    first = await service.send_message(send("hi"), CALL)
    assert isinstance(first, Task)
    done = await service.send_message(send("Ada", task_id=first.id), CALL)
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    with pytest.raises(UnsupportedOperationError):
        await service.send_message(send("again", task_id=first.id), CALL)
    with pytest.raises(UnsupportedOperationError):
        await service.stream_message(send("again", task_id=first.id), CALL)
    stored = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert len(stored.history) == 3


async def test_a_message_to_a_running_task_is_refused(make_service: ServiceFactory) -> None:
    agent = Conversation()
    agent.second_turn_gate = asyncio.Event()
    service = make_service(agent)
    first = await service.send_message(send("hi"), CALL)
    assert isinstance(first, Task)
    await service.send_message(send("Ada", task_id=first.id, immediate=True), CALL)
    with pytest.raises(UnsupportedOperationError, match="still running"):
        await service.send_message(send("Bob", task_id=first.id), CALL)
    agent.second_turn_gate.set()
    await eventually(lambda: service.manager.active_count == 0)


async def test_concurrent_answers_continue_the_task_once(make_service: ServiceFactory) -> None:
    agent = Conversation()
    agent.second_turn_gate = asyncio.Event()
    service = make_service(agent)
    first = await service.send_message(send("hi"), CALL)
    assert isinstance(first, Task)
    results = await asyncio.gather(
        *(
            service.send_message(send(name, task_id=first.id, immediate=True), CALL)
            for name in ("Ada", "Bob", "Cy")
        ),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Task) for r in results) == 1
    assert sum(isinstance(r, UnsupportedOperationError) for r in results) == 2
    agent.second_turn_gate.set()
    await eventually(lambda: service.manager.active_count == 0)
    stored = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert len(stored.history) == 3
    assert len(agent.turns) == 2


async def test_artifacts_are_replaced_by_id_and_built_from_chunks(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        if not context.is_continuation:
            await updater.add_artifact("draft v1", artifact_id="draft")
            await updater.add_artifact("a", artifact_id="doc", name="Doc")
            await updater.require_input("ok?")
            return
        await updater.add_artifact("draft v2", artifact_id="draft")
        await updater.add_artifact("b", artifact_id="doc", append=True)
        await updater.add_artifact("c", artifact_id="doc", append=True, last_chunk=True)
        await updater.complete()

    service = make_service(agent)
    first = await service.send_message(send("go"), CALL)
    assert isinstance(first, Task)
    assert [(a.artifact_id, [p.text for p in a.parts]) for a in first.artifacts] == [
        ("draft", ["draft v1"]),
        ("doc", ["a"]),
    ]
    stream = await service.stream_message(send("yes", task_id=first.id), CALL)
    events = [e async for e in stream]
    assert isinstance(events[0], Task)
    assert events[0].status.state is TaskState.WORKING
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [(c.artifact.artifact_id, c.append, c.last_chunk) for c in chunks] == [
        ("draft", False, True),  # a whole artifact says so
        ("doc", True, False),
        ("doc", True, True),
    ]
    final = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert final.status.state is TaskState.COMPLETED
    assert [(a.artifact_id, a.name, [p.text for p in a.parts]) for a in final.artifacts] == [
        ("draft", None, ["draft v2"]),
        ("doc", "Doc", ["abc"]),  # appended text chunks join into one text
    ]
