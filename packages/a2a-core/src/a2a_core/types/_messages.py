"""Messages, parts, tasks, artifacts and the stream events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Self

from pydantic import Field, model_validator

from ._base import (
    A2AModel,
    Base64Bytes,
    Struct,
    Timestamp,
    built,
    falsy,
    is_empty,
    not_none,
    opt,
)
from ._enums import Role, TaskState
from ._ids import new_id

INTERMEDIATE_KEY = "intermediate"
"""The artifact metadata entry that marks a step's output (``true``), not the answer."""

__all__ = [
    "Artifact",
    "Message",
    "Part",
    "StreamEvent",
    "StreamResponse",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "new_id",
]


class Part(A2AModel):
    """One piece of content: exactly one of ``text``, ``raw`` (bytes), ``url`` or ``data``."""

    text: str | None = opt()
    raw: Base64Bytes | None = opt()
    url: str | None = opt()
    data: Any = Field(default=None, exclude_if=not_none)
    metadata: Struct | None = opt()
    filename: str | None = opt()
    media_type: str | None = opt()

    @model_validator(mode="after")
    def _exactly_one_content(self) -> Self:
        present = (
            (self.text is not None)
            + (self.raw is not None)
            + (self.url is not None)
            + (self.data is not None)
        )
        if present != 1:
            raise ValueError("a part needs exactly one of text, raw, url or data")
        return self

    @property
    def kind(self) -> str:
        """Which content member is set: ``text``, ``raw``, ``url`` or ``data``."""
        if self.text is not None:
            return "text"
        if self.raw is not None:
            return "raw"
        if self.url is not None:
            return "url"
        return "data"


class Message(A2AModel):
    """One turn of communication between a client and an agent."""

    message_id: str
    context_id: str | None = opt()
    task_id: str | None = opt()
    role: Role
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = opt()
    extensions: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    reference_task_ids: list[str] = Field(default_factory=list[str], exclude_if=is_empty)

    @classmethod
    def user(cls, text: str, **fields: Any) -> Message:
        """A user message with one text part and a fresh id."""
        return cls(message_id=new_id(), role=Role.USER, parts=[Part(text=text)], **fields)

    @classmethod
    def agent(cls, text: str, **fields: Any) -> Message:
        """An agent message with one text part and a fresh id."""
        return cls(message_id=new_id(), role=Role.AGENT, parts=[Part(text=text)], **fields)

    @property
    def text(self) -> str:
        """The concatenated text parts (empty when there are none)."""
        return "".join(p.text for p in self.parts if p.text is not None)


class TaskStatus(A2AModel):
    """The state of a task, with an optional message and when it was set."""

    state: TaskState
    message: Message | None = opt()
    timestamp: Timestamp | None = opt()

    @classmethod
    def now(cls, state: TaskState, message: Message | None = None) -> TaskStatus:
        """A status stamped with the current time."""
        if (
            cls is TaskStatus
            and type(state) is TaskState
            and (message is None or type(message) is Message)  # callers may pass anything
        ):
            # Values of the right types, and an aware UTC time: nothing to validate.
            return built(cls, {"state": state, "message": message, "timestamp": datetime.now(UTC)})
        return cls(state=state, message=message, timestamp=datetime.now(UTC))


class Artifact(A2AModel):
    """An output of a task, made of parts."""

    artifact_id: str
    name: str | None = opt()
    description: str | None = opt()
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = opt()
    extensions: list[str] = Field(default_factory=list[str], exclude_if=is_empty)

    @property
    def intermediate(self) -> bool:
        """Whether the agent marked this a step's output rather than the answer.

        The mark is ``"intermediate": true`` in the artifact's metadata (a crew's
        task outputs carry it): clients read the task's answer from the other
        artifacts, and keep these for whoever wants the steps.
        """
        return self.metadata is not None and self.metadata.get(INTERMEDIATE_KEY) is True

    def extended(self, chunk: Artifact) -> Artifact:
        """This artifact with ``chunk`` appended (an ``append`` update applied).

        Text streamed in chunks reads as one text: the chunk's first part joins
        this artifact's last part when both are text of the same kind (media
        type, filename, metadata). Data and file parts always stay separate.
        The chunk's metadata is merged in; its name fills a missing one.
        """
        return self.extended_all((chunk,))

    def extended_all(self, chunks: Sequence[Artifact]) -> Artifact:
        """This artifact with every chunk appended in order, as ``extended`` one by one.

        The text of consecutive joinable chunks is gathered and joined once, so
        appending n chunks costs linear time, not n copies of a growing text.
        """
        parts = list(self.parts)
        pieces: list[str] = []  # text still to add to parts[-1]

        def settle() -> None:
            if pieces:
                last = parts[-1]
                parts[-1] = last.model_copy(update={"text": "".join((last.text or "", *pieces))})
                pieces.clear()

        update: dict[str, Any] = {}
        metadata = self.metadata
        name = self.name
        for chunk in chunks:
            incoming = chunk.parts
            rest = incoming
            if parts and incoming and _joinable(parts[-1], incoming[0]):
                pieces.append(incoming[0].text or "")
                rest = incoming[1:]
            if rest:
                settle()
                parts.extend(rest)
            if chunk.metadata:
                metadata = {**(metadata or {}), **chunk.metadata}
                update["metadata"] = metadata
            if chunk.name and not name:
                name = update["name"] = chunk.name
        settle()
        update["parts"] = parts
        return self.model_copy(update=update)


def _joinable(last: Part, first: Part) -> bool:
    """Whether two text parts are pieces of one text."""
    return (
        last.text is not None
        and first.text is not None
        and last.media_type == first.media_type
        and last.filename == first.filename
        and (first.metadata is None or first.metadata == last.metadata)
    )


class Task(A2AModel):
    """A unit of work, with its status, outputs and conversation."""

    id: str
    context_id: str = ""
    status: TaskStatus
    artifacts: list[Artifact] = Field(default_factory=list[Artifact], exclude_if=is_empty)
    history: list[Message] = Field(default_factory=list[Message], exclude_if=is_empty)
    metadata: Struct | None = opt()


class TaskStatusUpdateEvent(A2AModel):
    """A change of a task's status, sent on streams and to push receivers."""

    task_id: str
    context_id: str = ""
    status: TaskStatus
    metadata: Struct | None = opt()


class TaskArtifactUpdateEvent(A2AModel):
    """A new or extended artifact. ``append`` adds parts to an artifact already sent."""

    task_id: str
    context_id: str = ""
    artifact: Artifact
    append: bool = Field(default=False, exclude_if=falsy)
    last_chunk: bool = Field(default=False, exclude_if=falsy)
    metadata: Struct | None = opt()


StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""What a stream carries, as one Python union (the wire wraps it in StreamResponse)."""


class StreamResponse(A2AModel):
    """The 1.0 wire wrapper of a stream event: exactly one member is set."""

    task: Task | None = opt()
    message: Message | None = opt()
    status_update: TaskStatusUpdateEvent | None = opt()
    artifact_update: TaskArtifactUpdateEvent | None = opt()

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        present = sum(
            x is not None
            for x in (self.task, self.message, self.status_update, self.artifact_update)
        )
        if present != 1:
            raise ValueError(
                "a stream response needs exactly one of task, message, statusUpdate, artifactUpdate"
            )
        return self

    @property
    def event(self) -> StreamEvent:
        """The wrapped event."""
        for value in (self.task, self.message, self.status_update, self.artifact_update):
            if value is not None:
                return value
        raise AssertionError("unreachable: validated to hold one member")

    @classmethod
    def wrap(cls, event: StreamEvent) -> StreamResponse:
        """Wrap an event in its oneof member."""
        if isinstance(event, Task):
            return cls(task=event)
        if isinstance(event, Message):
            return cls(message=event)
        if isinstance(event, TaskStatusUpdateEvent):
            return cls(status_update=event)
        return cls(artifact_update=event)


REPEATS_KEY = "a2aRepeatsArtifact"
"""Message metadata naming the artifact a status message repeats (the answer the server
copies into a bare COMPLETED status, ``ManagerConfig.whole_answers``): such a message is
the status's only, never added to the history, and readers that show the artifact may
skip it."""


def repeats_artifact(message: Message | None) -> str | None:
    """The id of the artifact ``message`` repeats (``REPEATS_KEY``), else None."""
    metadata: dict[str, Any] | None = getattr(message, "metadata", None)  # CLI's light copies
    if not metadata:
        return None
    found = metadata.get(REPEATS_KEY)
    return found if isinstance(found, str) else None
