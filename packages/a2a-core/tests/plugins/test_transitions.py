"""``a2a_task_transition``: plugins observe real state changes of tasks run by the service."""

from __future__ import annotations

import logging

import pytest
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import (
    A2APluginManager,
    create_plugin_manager,
    transition_observer,
)
from a2a_core.server import RequestContext, ServerCallContext, TaskUpdater
from a2a_core.server.builder import configure_service
from a2a_core.types import (
    Message,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

pytestmark = pytest.mark.hook("a2a_task_transition")

S = TaskState


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, TaskState | None, TaskState]] = []

    @hookimpl
    def a2a_task_transition(self, task: Task, old: TaskState | None, new: TaskState) -> None:
        assert task.status.state is new
        self.seen.append((task.id, old, new))


class Chatty:
    """Asks a question on the first turn, then works in several same-state steps."""

    async def __call__(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("thinking")
        await updater.start_work("still thinking")  # same state: no transition
        await updater.add_artifact("partial")  # no state change
        if not context.is_continuation:
            await updater.require_input("Which one?")
            return
        await updater.complete("done")


async def send(service: object, text: str, task_id: str | None = None) -> Task:
    from a2a_core.server import A2AService

    assert isinstance(service, A2AService)
    result = await service.send_message(
        SendMessageRequest(message=Message.user(text, task_id=task_id)), ServerCallContext()
    )
    assert isinstance(result, Task)
    return result


async def test_only_real_state_changes_are_reported(core_pm: A2APluginManager) -> None:
    recorder = Recorder()
    core_pm.register(recorder, name="recorder")
    service = configure_service(Chatty().__call__, plugin_manager=core_pm)
    try:
        first = await send(service, "hello")
        assert first.status.state is S.INPUT_REQUIRED
        second = await send(service, "the blue one", task_id=first.id)
        assert second.status.state is S.COMPLETED
    finally:
        await service.aclose()
    assert recorder.seen == [
        (first.id, S.SUBMITTED, S.WORKING),
        (first.id, S.WORKING, S.INPUT_REQUIRED),
        (first.id, S.INPUT_REQUIRED, S.WORKING),
        (first.id, S.WORKING, S.COMPLETED),
    ]


async def test_a_failing_observer_is_logged_and_does_not_stop_others(
    core_pm: A2APluginManager, caplog: pytest.LogCaptureFixture
) -> None:
    pm = core_pm

    class Broken:
        @hookimpl
        def a2a_task_transition(self, new: TaskState) -> None:
            raise RuntimeError("metrics backend down")

    recorder = Recorder()
    pm.register(recorder, name="recorder")
    pm.register(Broken(), name="broken-metrics")  # called first

    async def agent(context: RequestContext) -> str:
        return "ok"

    service = configure_service(agent, plugin_manager=pm)
    try:
        with caplog.at_level(logging.ERROR, logger="a2a_core.plugins"):
            task = await send(service, "hi")
    finally:
        await service.aclose()
    assert task.status.state is S.COMPLETED
    assert [(old, new) for _, old, new in recorder.seen] == [(S.SUBMITTED, S.COMPLETED)]
    failures = [r for r in caplog.records if "broken-metrics" in r.getMessage()]
    assert len(failures) == 1


def test_the_observer_is_composed_once_and_filters_same_state(pm: A2APluginManager) -> None:
    assert transition_observer(pm) is None  # no plugin: nothing on the event path
    recorder = Recorder()
    pm.register(recorder, name="recorder")
    observe = transition_observer(pm)
    assert observe is not None
    late = Recorder()
    pm.register(late, name="late")  # after composition: not called by this observer
    task = Task(id="t1", context_id="c1", status=TaskStatus.now(S.WORKING))
    status = TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=task.status)
    artifact = TaskArtifactUpdateEvent.model_validate(
        {
            "taskId": "t1",
            "contextId": "c1",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
        }
    )
    observe(task, status, S.WORKING)
    observe(task, artifact, S.WORKING)
    observe(task, status, S.SUBMITTED)
    observe(task, status, None)
    assert recorder.seen == [("t1", S.SUBMITTED, S.WORKING), ("t1", None, S.WORKING)]
    assert late.seen == []


async def test_the_test_plugin_observes_through_its_entry_point() -> None:
    from a2a_test_plugin.plugin import TRANSITIONS

    async def agent(context: RequestContext) -> str:
        return "ok"

    service = configure_service(agent, plugin_manager=create_plugin_manager({}))
    try:
        task = await send(service, "hi")
    finally:
        await service.aclose()
    assert [(old, new) for tid, old, new in TRANSITIONS if tid == task.id] == [
        (S.SUBMITTED, S.COMPLETED)
    ]
