"""``a2a_task_transition``: plugins observe real state changes of tasks run by the service."""

from __future__ import annotations

import logging

import pytest
from a2a_core.compose.builder import configure_service
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import (
    A2APluginManager,
    create_plugin_manager,
    transition_observer,
)
from a2a_core.server import RequestContext, ServerCallContext, TaskUpdater
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


class Tokens:
    """Streams 50 chunks into one artifact, then completes."""

    async def __call__(self, context: RequestContext, updater: TaskUpdater) -> None:
        for i in range(50):
            await updater.add_artifact(f"{i} ", artifact_id="answer", append=i > 0)
        await updater.complete()


class TransitionsOnly:
    """An observer that says it watches state changes only (as the plugins' one does)."""

    transitions_only = True

    def __init__(self) -> None:
        self.seen: list[tuple[TaskState | None, TaskState]] = []

    def __call__(self, task: Task, event: object, previous: TaskState | None) -> None:
        self.seen.append((previous, task.status.state))


def test_the_plugins_observer_watches_transitions_only(pm: A2APluginManager) -> None:
    pm.register(Recorder(), name="recorder")
    assert getattr(transition_observer(pm), "transitions_only", False) is True


async def test_an_observer_of_transitions_is_not_told_of_chunks_and_the_others_are(
    core_pm: A2APluginManager,
) -> None:
    watching = TransitionsOnly()
    every: list[str] = []

    def observe_every_event(task: Task, event: object, previous: TaskState | None) -> None:
        if isinstance(event, TaskArtifactUpdateEvent):
            # the task as it stands, this chunk included
            every.append("".join(part.text or "" for part in task.artifacts[0].parts))

    service = configure_service(
        Tokens().__call__, plugin_manager=core_pm, observers=[watching, observe_every_event]
    )
    try:
        task = await send(service, "go")
    finally:
        await service.aclose()
    assert task.status.state is S.COMPLETED
    assert every == ["".join(f"{i} " for i in range(n + 1)) for n in range(50)]
    assert watching.seen == [(S.SUBMITTED, S.COMPLETED)]


async def test_with_only_observers_of_transitions_chunks_do_not_build_the_task(
    core_pm: A2APluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held chunks are applied to the task only when someone needs it: building it for
    every chunk would cost a copy of the growing artifact each time."""
    from a2a_core.server.manager import TaskRun

    built = 0
    task_property = TaskRun.task

    def counting(run: TaskRun) -> Task:
        nonlocal built
        built += 1
        assert task_property.fget is not None
        return task_property.fget(run)

    monkeypatch.setattr(TaskRun, "task", property(counting, task_property.fset))
    watching = TransitionsOnly()
    service = configure_service(Tokens().__call__, plugin_manager=core_pm, observers=[watching])
    try:
        task = await send(service, "go")
    finally:
        await service.aclose()
    assert task.status.state is S.COMPLETED
    assert watching.seen == [(S.SUBMITTED, S.COMPLETED)]
    assert built < 10, built  # a few at the run's start and end; not one per chunk (50)
