"""SendMessage: blocking and non-blocking, replies, metadata, output modes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a_core.errors import ContentTypeNotSupportedError
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.types import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    Task,
    TaskState,
)
from server_core_support import CALL, ServiceFactory, eventually, make_card, send


async def echo(context: RequestContext) -> str:
    return f"echo: {context.text}"


async def test_blocking_send_returns_the_completed_task(make_service: ServiceFactory) -> None:
    service = make_service(echo)
    task = await service.send_message(send("hi"), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert [a.artifact_id for a in task.artifacts] == ["result"]
    assert task.artifacts[0].parts[0].text == "echo: hi"
    [user] = task.history
    assert user.text == "hi"
    assert user.task_id == task.id
    assert user.context_id == task.context_id
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.COMPLETED


async def test_client_context_id_is_kept(make_service: ServiceFactory) -> None:
    service = make_service(echo)
    task = await service.send_message(send(context_id="ctx-1"), CALL)
    assert isinstance(task, Task)
    assert task.context_id == "ctx-1"


async def test_a_returned_message_is_a_direct_reply_and_creates_no_task(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext) -> Message:
        return Message.agent("direct")

    service = make_service(agent)
    reply = await service.send_message(send("q", context_id="ctx"), CALL)
    assert isinstance(reply, Message)
    assert reply.text == "direct"
    assert reply.role is Role.AGENT
    assert reply.context_id == "ctx"
    assert reply.task_id is None
    listed = await service.list_tasks(ListTasksRequest(), CALL)
    assert listed.tasks == []


async def test_blocking_send_returns_at_input_required(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.require_input("which city?")

    service = make_service(agent)
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert task.status.message is not None
    assert task.status.message.text == "which city?"
    assert [m.role for m in task.history] == [Role.USER, Role.AGENT]


async def test_blocking_send_waits_for_the_agent(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> str:
        await updater.start_work("thinking")
        await gate.wait()
        return "done"

    service = make_service(agent)
    sending = asyncio.ensure_future(service.send_message(send(), CALL))
    await eventually(lambda: service.manager.active_count == 1)
    await asyncio.sleep(0.02)
    assert not sending.done()  # WORKING is neither terminal nor interrupted
    gate.set()
    task = await asyncio.wait_for(sending, 5)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED


async def test_non_blocking_send_returns_submitted_and_runs_in_background(
    make_service: ServiceFactory,
) -> None:
    gate = asyncio.Event()
    started = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> str:
        started.set()
        await updater.start_work()
        await gate.wait()
        return "late answer"

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED
    await asyncio.wait_for(started.wait(), 5)

    async def state() -> TaskState:
        return (await service.get_task(GetTaskRequest(id=task.id), CALL)).status.state

    await eventually(lambda: service.manager.active_run(task.id) is not None)
    assert await state() in (TaskState.SUBMITTED, TaskState.WORKING)
    listed = await service.list_tasks(ListTasksRequest(), CALL)
    assert [t.id for t in listed.tasks] == [task.id]
    gate.set()
    run = service.manager.active_run(task.id)
    assert run is not None
    await asyncio.wait_for(run.done.wait(), 5)
    final = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert final.status.state is TaskState.COMPLETED
    assert final.artifacts[0].parts[0].text == "late answer"


async def test_non_blocking_reply_message_completes_the_task(make_service: ServiceFactory) -> None:
    class Replier(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater.reply("the answer")

    service = make_service(Replier())
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    run = service.manager.active_run(task.id)
    if run is not None:
        await asyncio.wait_for(run.done.wait(), 5)
    final = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert final.status.state is TaskState.COMPLETED
    assert final.status.message is not None
    assert final.status.message.text == "the answer"
    assert final.status.message.task_id == task.id


async def test_an_agent_that_returns_without_finishing_completes_its_task(
    make_service: ServiceFactory,
) -> None:
    class Forgetful(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater.start_work()
            await updater.add_artifact("partial")

    service = make_service(Forgetful())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[0].text == "partial"


async def test_history_length_applies_to_the_send_result(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("one")
        await updater.complete("two")

    service = make_service(agent)
    full = await service.send_message(send(), CALL)
    assert isinstance(full, Task)
    assert len(full.history) == 3
    none = await service.send_message(send(history_length=0), CALL)
    assert isinstance(none, Task)
    assert none.history == []
    last = await service.send_message(send(history_length=1), CALL)
    assert isinstance(last, Task)
    assert [m.text for m in last.history] == ["two"]


# -- metadata ------------------------------------------------------------------------


async def test_request_metadata_overrides_message_metadata(make_service: ServiceFactory) -> None:
    seen: list[dict[str, Any]] = []

    async def agent(context: RequestContext) -> None:
        seen.append(context.metadata)

    service = make_service(agent)
    await service.send_message(
        send(message_metadata={"a": 1, "b": "message"}, metadata={"b": "request", "c": True}),
        CALL,
    )
    assert seen == [{"a": 1, "b": "request", "c": True}]
    await service.send_message(send(), CALL)
    assert seen[1] == {}


# -- output modes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card_modes", "skill_modes", "accepted"),
    [
        (["text/plain"], None, ["text/plain"]),
        (["text/plain"], None, ["application/json", "text/plain"]),
        (["text/plain"], None, ["text/*"]),
        (["text/plain"], None, ["*/*"]),
        (["text/*"], None, ["text/markdown"]),
        (["*/*"], None, ["image/png"]),
        (["text/plain"], ["application/json"], ["application/json"]),
        (["text/plain; charset=utf-8"], None, ["TEXT/PLAIN"]),
        (["text/plain"], None, []),
    ],
)
async def test_output_modes_that_intersect_are_accepted(
    make_service: ServiceFactory,
    card_modes: list[str],
    skill_modes: list[str] | None,
    accepted: list[str],
) -> None:
    card = make_card(output_modes=card_modes, skill_output_modes=skill_modes)
    service = make_service(echo, card=card, strict_output_modes=True)
    task = await service.send_message(send(accepted=accepted), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED


@pytest.mark.parametrize(
    ("card_modes", "skill_modes", "accepted"),
    [
        (["text/plain"], None, ["application/json"]),
        (["text/plain"], None, ["image/*"]),
        (["text/plain"], ["application/json"], ["image/png", "audio/*"]),
    ],
)
async def test_output_modes_without_intersection_are_refused_when_strict(
    make_service: ServiceFactory,
    card_modes: list[str],
    skill_modes: list[str] | None,
    accepted: list[str],
) -> None:
    card = make_card(output_modes=card_modes, skill_output_modes=skill_modes)
    service = make_service(echo, card=card, strict_output_modes=True)
    with pytest.raises(ContentTypeNotSupportedError):
        await service.send_message(send(accepted=accepted), CALL)
    with pytest.raises(ContentTypeNotSupportedError):
        await service.stream_message(send(accepted=accepted), CALL)
    assert service.manager.active_count == 0
    assert (await service.list_tasks(ListTasksRequest(), CALL)).tasks == []


async def test_strict_output_modes_can_be_switched_after_construction(
    make_service: ServiceFactory,
) -> None:
    service = make_service(echo, card=make_card(output_modes=["text/plain"]))
    assert service.strict_output_modes is False
    service.strict_output_modes = True
    with pytest.raises(ContentTypeNotSupportedError):
        await service.send_message(send(accepted=["image/*"]), CALL)
    service.strict_output_modes = False
    task = await service.send_message(send(accepted=["image/*"]), CALL)
    assert isinstance(task, Task)


@pytest.mark.parametrize(
    "accepted", [["application/json"], ["image/*"], ["image/png", "audio/*"], []]
)
async def test_by_default_any_accepted_modes_get_the_agents_answer(
    make_service: ServiceFactory, accepted: list[str]
) -> None:
    seen: list[list[str]] = []

    async def agent(context: RequestContext) -> str:
        seen.append(context.accepted_output_modes)
        return "plain text answer"

    service = make_service(agent, card=make_card(output_modes=["text/plain"]))
    task = await service.send_message(send(accepted=accepted), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[0].text == "plain text answer"
    stream = await service.stream_message(send(accepted=accepted), CALL)
    assert [e async for e in stream][-1].status.state is TaskState.COMPLETED  # type: ignore[union-attr]
    assert seen == [accepted, accepted]


# -- plain functions as agents --------------------------------------------------------------


async def _result_of(service: A2AService) -> Task:
    task = await service.send_message(send(immediate=False), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    return task


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", [Part(text="text")]),
        (Part(text="a part"), [Part(text="a part")]),
        ([Part(text="x"), "y", {"k": 1}], [Part(text="x"), Part(text="y"), Part(data={"k": 1})]),
        ({"answer": 42}, [Part(data={"answer": 42})]),
    ],
)
async def test_plain_function_results_become_the_result_artifact(
    make_service: ServiceFactory, value: Any, expected: list[Part]
) -> None:
    async def agent(context: RequestContext) -> Any:
        return value

    task = await _result_of(make_service(agent))
    [artifact] = task.artifacts
    assert artifact.artifact_id == "result"
    assert artifact.parts == expected


async def test_plain_function_returning_an_artifact_or_none(make_service: ServiceFactory) -> None:
    from a2a_core.types import Artifact

    async def artifact_agent(context: RequestContext) -> Artifact:
        return Artifact(artifact_id="report", name="Report", parts=[Part(text="body")])

    async def silent_agent(context: RequestContext) -> None:
        return None

    task = await _result_of(make_service(artifact_agent))
    assert [(a.artifact_id, a.name) for a in task.artifacts] == [("report", "Report")]
    task = await _result_of(make_service(silent_agent))
    assert task.artifacts == []


async def test_plain_function_returning_a_message_in_a_task_completes_with_it(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> Message:
        await updater.start_work()  # a task exists now, so no direct reply
        return Message.agent("final words")

    task = await _result_of(make_service(agent))
    assert task.status.message is not None
    assert task.status.message.text == "final words"
    assert task.history[-1].text == "final words"


async def test_async_generator_chunks_build_one_artifact(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext) -> Any:
        for word in ("alpha ", "", "beta ", "gamma"):
            yield word

    service = make_service(agent)
    task = await _result_of(service)
    [artifact] = task.artifacts
    assert artifact.artifact_id == "result"
    assert [p.text for p in artifact.parts] == ["alpha beta gamma"]  # stored as whole text

    stream = await service.stream_message(send(), CALL)
    events = [e async for e in stream]
    chunks = [e for e in events if not isinstance(e, Task) and hasattr(e, "artifact")]
    assert [(c.append, c.last_chunk) for c in chunks] == [  # type: ignore[union-attr]
        (False, False),
        (True, False),
        (True, False),
        (False, True),  # the end: the whole artifact (ManagerConfig.whole_answers)
    ]


def test_objects_that_are_not_agents_are_refused() -> None:
    from a2a_core.server import as_executor

    def sync_function(context: RequestContext) -> str:
        return "no"

    with pytest.raises(TypeError, match="AgentExecutor, an async function"):
        as_executor(sync_function)
    with pytest.raises(TypeError):
        as_executor(object())
