"""What a call gives back: the task or message, its text, and a stream's running task.

``SendResult`` wraps the answer to a send so the common questions are one
attribute away (``.text``, ``.state``, ``.needs_input``), and it can be
passed back as ``task=`` / ``reply_to=`` to continue the conversation.
``TaskTracker`` applies stream events to a task the way the server does, so
a stream consumer always has the current task at hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["SendResult", "TaskTracker", "TextDeltas", "settles", "text_of"]


def _parts_text(parts: Iterable[Part]) -> str:
    return "".join(p.text for p in parts if p.text is not None)


class TextDeltas:
    """The new text each artifact update of a stream adds, for readers that print text.

    An appended chunk adds its text. An update that replaces an artifact adds only
    what goes beyond the text already seen, so a stream that ends with the whole
    artifact (``append: false``, ``lastChunk``: how our servers and ADK's end one)
    adds nothing; a replacement that says something else adds all of its text.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def delta(self, event: TaskArtifactUpdateEvent) -> str:
        """The text ``event`` adds to what this stream showed ("" if none)."""
        text = _parts_text(event.artifact.parts)
        key = event.artifact.artifact_id
        seen = self._seen.get(key)
        if event.append or seen is None:
            self._seen[key] = (seen or "") + text
            return text
        self._seen[key] = text
        return text[len(seen) :] if text.startswith(seen) else text


def _task_text(task: Task) -> str:
    status_message = task.status.message
    if task.status.state.is_interrupted and status_message is not None:
        return status_message.text  # the question is what the caller needs
    if task.artifacts:
        answers = [a for a in task.artifacts if not a.intermediate] or task.artifacts
        texts = [_parts_text(a.parts) for a in answers]
        joined = "\n".join(t for t in texts if t)
        if joined:
            return joined
    if status_message is not None and status_message.text:
        return status_message.text
    for message in reversed(task.history):
        if message.role is Role.AGENT and message.text:
            return message.text
    return ""


def text_of(value: SendResult | Task | Message | Artifact | StreamEvent | None) -> str:
    """The readable text of a result, task, message, artifact or event ("" if none).

    For a task: the question when it waits for input, else its artifacts'
    text (those the agent marked ``intermediate``, a step's output, left out
    when others are there), else its status message, else the last agent message.
    """
    if value is None:
        return ""
    if isinstance(value, SendResult):
        value = value.result
    if isinstance(value, Message):
        return value.text
    if isinstance(value, Task):
        return _task_text(value)
    if isinstance(value, Artifact):
        return _parts_text(value.parts)
    if isinstance(value, TaskArtifactUpdateEvent):
        return _parts_text(value.artifact.parts)
    message = value.status.message
    return message.text if message is not None else ""


def settles(event: StreamEvent) -> bool:
    """Whether a stream ends with ``event``: a message, or a terminal / input-required state.

    AUTH_REQUIRED does not end a stream by itself: the agent may resume once
    credentials arrive out of band (the server closes the stream if not).
    """
    if isinstance(event, Message):
        return True
    if isinstance(event, Task | TaskStatusUpdateEvent):
        state = event.status.state
        return state.is_terminal or state is TaskState.INPUT_REQUIRED
    return False


@dataclass(frozen=True, slots=True)
class SendResult:
    """The answer to a send: a Task, or a direct Message reply."""

    result: Task | Message

    @property
    def task(self) -> Task | None:
        """The task, when the agent answered with one."""
        return self.result if isinstance(self.result, Task) else None

    @property
    def message(self) -> Message | None:
        """The direct reply, when the agent answered with a message."""
        return self.result if isinstance(self.result, Message) else None

    @property
    def text(self) -> str:
        """The answer's text (see ``text_of``)."""
        return text_of(self.result)

    @property
    def state(self) -> TaskState | None:
        """The task's state (None for a message reply)."""
        return self.result.status.state if isinstance(self.result, Task) else None

    @property
    def needs_input(self) -> bool:
        """Whether the agent waits for the caller (input or authentication)."""
        state = self.state
        return state is not None and state.is_interrupted

    @property
    def done(self) -> bool:
        """Whether nothing more will happen: a message reply or a terminal task."""
        state = self.state
        return state is None or state.is_terminal

    @property
    def task_id(self) -> str | None:
        """The task's id, or None when the agent replied with a message and made no task."""
        if isinstance(self.result, Task):
            return self.result.id
        return self.result.task_id

    @property
    def context_id(self) -> str | None:
        """The conversation's id, to send follow-up messages in the same context."""
        return self.result.context_id or None

    @property
    def artifacts(self) -> list[Artifact]:
        """The task's artifacts (empty for a message reply)."""
        return list(self.result.artifacts) if isinstance(self.result, Task) else []

    def __str__(self) -> str:
        return self.text


class TaskTracker:
    """Applies stream events to the task they describe."""

    __slots__ = ("message", "task")

    def __init__(self, task: Task | None = None) -> None:
        self.task: Task | None = task
        self.message: Message | None = None

    def apply(self, event: StreamEvent) -> None:
        """Fold one event into the tracked task or message."""
        if isinstance(event, Task):
            self.task = event
        elif isinstance(event, Message):
            self.message = event
        elif isinstance(event, TaskStatusUpdateEvent):
            self._status(event)
        else:
            self._artifact(event)

    def _base(self, task_id: str, context_id: str) -> Task:
        if self.task is not None and self.task.id == task_id:
            return self.task
        return Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(state=TaskState.SUBMITTED),
        )

    def _status(self, event: TaskStatusUpdateEvent) -> None:
        task = self._base(event.task_id, event.context_id)
        update: dict[str, object] = {"status": event.status}
        message = event.status.message
        if message is not None and all(m.message_id != message.message_id for m in task.history):
            update["history"] = [*task.history, message]
        self.task = task.model_copy(update=update)

    def _artifact(self, event: TaskArtifactUpdateEvent) -> None:
        task = self._base(event.task_id, event.context_id)
        incoming = event.artifact
        artifacts = list(task.artifacts)
        for i, existing in enumerate(artifacts):
            if existing.artifact_id == incoming.artifact_id:
                if event.append:
                    artifacts[i] = existing.extended(incoming)
                else:
                    artifacts[i] = incoming
                break
        else:
            artifacts.append(incoming)
        self.task = task.model_copy(update={"artifacts": artifacts})

    def result(self) -> SendResult | None:
        """What the stream amounted to: the message reply, else the task (None if empty)."""
        if self.message is not None and self.task is None:
            return SendResult(self.message)
        if self.task is not None:
            return SendResult(self.task)
        return None
