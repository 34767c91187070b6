"""The lifecycle is enforced: terminal is final, illegal moves fail the task, errors stay hidden."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

import pytest
from a2a_core.server import (
    A2AService,
    AgentExecutor,
    ManagerConfig,
    RequestContext,
    TaskUpdater,
)
from a2a_core.server.manager import SAFE_FAILURE_TEXT
from a2a_core.server.task_state import IllegalTransitionError, check_transition
from a2a_core.stores import TaskQuery
from a2a_core.types import GetTaskRequest, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from hypothesis import given
from hypothesis import strategies as st
from server_core_support import CALL, ServiceFactory, make_card, send

TERMINAL = [s for s in TaskState if s.is_terminal]
LIVE = [TaskState.SUBMITTED, TaskState.WORKING, TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED]


@pytest.mark.parametrize("old", TERMINAL)
@pytest.mark.parametrize("new", list(TaskState))
def test_terminal_states_are_final(old: TaskState, new: TaskState) -> None:
    with pytest.raises(IllegalTransitionError):
        check_transition(old, new)


@pytest.mark.parametrize("old", LIVE)
def test_nothing_goes_back_to_unspecified_or_to_submitted(old: TaskState) -> None:
    with pytest.raises(IllegalTransitionError):
        check_transition(old, TaskState.UNSPECIFIED)
    if old is not TaskState.SUBMITTED:
        with pytest.raises(IllegalTransitionError):
            check_transition(old, TaskState.SUBMITTED)
    for new in (TaskState.WORKING, TaskState.INPUT_REQUIRED, *TERMINAL):
        check_transition(old, new)


@pytest.mark.parametrize("bad", [TaskState.SUBMITTED, TaskState.UNSPECIFIED])
async def test_an_illegal_move_fails_the_task_safely(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture, bad: TaskState
) -> None:
    seen: list[Exception] = []

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        try:
            await updater.update_status(bad)
        except IllegalTransitionError as exc:
            seen.append(exc)
        await updater.complete("all good")  # too late: the task already failed

    service = make_service(agent)
    with caplog.at_level(logging.WARNING, logger="a2a_core"):
        task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert len(seen) == 1
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text == SAFE_FAILURE_TEXT
    assert any(bad.value in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_events_after_a_terminal_state_are_rejected_and_logged(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    rejected: list[Exception] = []

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.complete("done")
        for late in (updater.start_work(), updater.add_artifact("x"), updater.fail("oops")):
            try:
                await late
            except IllegalTransitionError as exc:
                rejected.append(exc)

    service = make_service(agent)
    with caplog.at_level(logging.WARNING, logger="a2a_core"):
        task = await service.send_message(send(), CALL)
        assert isinstance(task, Task)
        await asyncio.sleep(0)
    assert len(rejected) == 3
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.COMPLETED
    assert stored.artifacts == []
    assert len([r for r in caplog.records if "rejected" in r.getMessage()]) == 3


async def test_agents_may_not_emit_tasks(make_service: ServiceFactory) -> None:
    class Impostor(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater._sink.emit(  # pyright: ignore[reportPrivateUsage]
                Task(id=context.task_id, status=TaskStatus.now(TaskState.COMPLETED))
            )

    service = make_service(Impostor())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED


SECRET = "password=hunter2 at /srv/internal/db.py"


async def _failing_agent(context: RequestContext, updater: TaskUpdater) -> None:
    await updater.start_work("working on it")
    raise RuntimeError(SECRET)


async def test_an_agent_exception_fails_the_task_without_leaking_it(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    service = make_service(_failing_agent)
    with caplog.at_level(logging.ERROR, logger="a2a_core"):
        sent = await service.send_message(send(), CALL)
        events = [e async for e in await service.stream_message(send(), CALL)]
    assert isinstance(sent, Task)
    assert sent.status.state is TaskState.FAILED
    fetched = await service.get_task(GetTaskRequest(id=sent.id), CALL)
    visible = [sent, fetched, *events]
    for item in visible:
        assert "hunter2" not in json.dumps(item.model_dump(mode="json"))
    assert fetched.status.message is not None
    assert fetched.status.message.text == SAFE_FAILURE_TEXT
    assert any("hunter2" in (r.exc_text or "") for r in caplog.records)  # the operator sees it


async def test_agent_errors_can_be_exposed_on_purpose(make_service: ServiceFactory) -> None:
    service = make_service(_failing_agent, config=ManagerConfig(expose_agent_errors=True))
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "RuntimeError" in task.status.message.text
    assert "hunter2" in task.status.message.text


# -- a model of the lifecycle, checked against the manager ----------------------------------

_LEGAL_FROM_LIVE = set(TaskState) - {TaskState.UNSPECIFIED, TaskState.SUBMITTED}


def _expected_final(states: list[TaskState]) -> TaskState:
    state = TaskState.SUBMITTED
    for new in states:
        if state.is_terminal:
            continue  # rejected, nothing changes
        legal = (
            new is not TaskState.UNSPECIFIED
            if state is TaskState.SUBMITTED
            else new in _LEGAL_FROM_LIVE
        )
        state = new if legal else TaskState.FAILED
    if not (state.is_terminal or state.is_interrupted):
        state = TaskState.COMPLETED  # returning completes a task left working
    return state


@given(st.lists(st.sampled_from(list(TaskState)), max_size=6))
def test_any_sequence_of_agent_states_ends_as_the_model_says(states: list[TaskState]) -> None:
    async def scenario() -> tuple[TaskState, list[TaskState]]:
        async def agent(context: RequestContext, updater: TaskUpdater) -> None:
            for state in states:
                with contextlib.suppress(IllegalTransitionError):
                    await updater.update_status(state)

        service = A2AService(agent, make_card())
        stream = await service.stream_message(send(), CALL)
        seen = [e.status.state async for e in stream if isinstance(e, TaskStatusUpdateEvent)]
        for run in list(service.manager._active.values()):  # pyright: ignore[reportPrivateUsage]
            await run.done.wait()  # the agent may go on after the stream ends
        stored = await service.store.list(TaskQuery(), None)
        await service.aclose()
        [task] = stored.tasks
        return task.status.state, seen

    final, seen = asyncio.run(scenario())
    assert final is _expected_final(states)
    # Streams never show anything after a terminal state.
    terminal_at = [i for i, s in enumerate(seen) if s.is_terminal]
    assert not terminal_at or terminal_at[0] == len(seen) - 1
