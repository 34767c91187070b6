"""The task state machine and how events change a task (pure functions).

Tasks are updated copy-on-write: every change builds a new task with new
lists, so a task handed out earlier never changes under a reader that is
still serializing it (and readers can share it without copying).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from ..types._base import changed
from ..types._messages import REPEATS_KEY, repeats_artifact

__all__ = [
    "REPEATS_KEY",
    "IllegalTransitionError",
    "append_message",
    "apply_artifact",
    "apply_artifacts",
    "apply_status",
    "check_transition",
    "continue_task",
    "repeats_artifact",
    "set_status",
    "snapshot",
]


class IllegalTransitionError(Exception):
    """An agent tried a state change the protocol forbids."""


_ALLOWED: dict[TaskState, frozenset[TaskState]] = {
    TaskState.SUBMITTED: frozenset(TaskState) - {TaskState.UNSPECIFIED},
    TaskState.WORKING: frozenset(TaskState) - {TaskState.UNSPECIFIED, TaskState.SUBMITTED},
    TaskState.INPUT_REQUIRED: frozenset(TaskState) - {TaskState.UNSPECIFIED, TaskState.SUBMITTED},
    TaskState.AUTH_REQUIRED: frozenset(TaskState) - {TaskState.UNSPECIFIED, TaskState.SUBMITTED},
}


def check_transition(old: TaskState, new: TaskState) -> None:
    """Raise IllegalTransitionError unless ``old -> new`` is allowed."""
    if old.is_terminal:
        raise IllegalTransitionError(f"task is already {old.value}; terminal states are final")
    allowed = _ALLOWED.get(old)
    if allowed is None or new not in allowed:
        raise IllegalTransitionError(f"illegal transition {old.value} -> {new.value}")


def apply_status(task: Task, event: TaskStatusUpdateEvent, max_history: int) -> Task:
    """A new task with the event's status; its message joins the history (unless it
    repeats an artifact: ``REPEATS_KEY``)."""
    check_transition(task.status.state, event.status.state)
    update: dict[str, object] = {"status": event.status}
    if event.status.message is not None and repeats_artifact(event.status.message) is None:
        update["history"] = _bounded([*task.history, event.status.message], max_history)
    if event.metadata:
        update["metadata"] = {**(task.metadata or {}), **event.metadata}
    return changed(task, update)


def apply_artifact(task: Task, event: TaskArtifactUpdateEvent) -> Task:
    """A new task with the artifact added, replaced (same id) or extended (``append``).

    Appended text joins the artifact's last text part (``Artifact.extended``), so
    the stored task, blocking answers and push payloads hold whole text while
    streams still carry each chunk as it was produced.
    """
    return apply_artifacts(task, (event,))


def apply_artifacts(task: Task, events: Sequence[TaskArtifactUpdateEvent]) -> Task:
    """``apply_artifact`` for each event in order, in one copy of the task.

    The chunks appended to one artifact are joined once (``Artifact.extended_all``):
    a run that saves streamed chunks together never re-copies the growing text per chunk.
    """
    if task.status.state.is_terminal:
        raise IllegalTransitionError(
            f"task is already {task.status.state.value}; no more artifacts"
        )
    artifacts = list(task.artifacts)
    where = {artifact.artifact_id: i for i, artifact in enumerate(artifacts)}
    chunks: dict[int, list[Artifact]] = {}  # artifact index -> chunks still to append
    for event in events:
        incoming = event.artifact
        index = where.get(incoming.artifact_id)
        if index is None:
            where[incoming.artifact_id] = len(artifacts)
            artifacts.append(incoming)
        elif event.append:
            chunks.setdefault(index, []).append(incoming)
        else:
            chunks.pop(index, None)  # replaced: what was appended before is gone
            artifacts[index] = incoming
    for index, pending in chunks.items():
        artifacts[index] = artifacts[index].extended_all(pending)
    return changed(task, {"artifacts": artifacts})


def append_message(task: Task, message: Message, max_history: int) -> Task:
    """A new task with ``message`` appended to the history."""
    return changed(task, {"history": _bounded([*task.history, message], max_history)})


def continue_task(task: Task, message: Message, max_history: int) -> Task:
    """The task a client's follow-up message resumes: message appended, WORKING again.

    The question the agent asked (the previous status message) is cleared.
    """
    check_transition(task.status.state, TaskState.WORKING)
    return changed(
        task,
        {
            "history": _bounded([*task.history, message], max_history),
            "status": TaskStatus.now(TaskState.WORKING),
        },
    )


def _bounded(history: list[Message], max_history: int) -> list[Message]:
    return history[-max_history:] if len(history) > max_history else history


def snapshot(task: Task, history_length: int | None = None, include_artifacts: bool = True) -> Task:
    """The task as a reader asked for it: history trimmed to ``history_length``
    (None = all, 0 = none), artifacts left out unless ``include_artifacts``.

    Tasks are never modified in place, so when nothing is trimmed the task
    itself is returned: treat it as read-only.
    """
    update: dict[str, object] = {}
    if history_length is not None and len(task.history) > history_length:
        update["history"] = task.history[-history_length:] if history_length > 0 else []
    if not include_artifacts and task.artifacts:
        update["artifacts"] = []
    return changed(task, update) if update else task


def set_status(task: Task, status: TaskStatus) -> Task:
    """A new task with ``status`` (no transition check: for the server's own moves)."""
    return changed(task, {"status": status})
