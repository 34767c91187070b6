"""TaskUpdater: how an agent reports progress, artifacts, questions and outcomes."""

from __future__ import annotations

from typing import Any, Protocol, cast

from ..types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from ..types._base import built

__all__ = ["EventSink", "MessageLike", "PartsLike", "TaskUpdater", "to_parts"]

MessageLike = str | Message | Part | list[Part]
PartsLike = str | Part | list[Part]


class EventSink(Protocol):
    """Where an updater's events go (the task manager's run of this task)."""

    @property
    def state(self) -> TaskState: ...

    async def emit(self, event: StreamEvent) -> None: ...


def _parts(content: PartsLike) -> list[Part]:
    if isinstance(content, str):
        return [Part(text=content)]
    if isinstance(content, Part):
        return [content]
    return list(content)


def _plain_parts(content: PartsLike) -> list[Part] | None:
    """The parts of ``content`` when they need no validation (else None): a ``str``,
    a ``Part``, or a non-empty list of them."""
    kind = type(content)
    if kind is str:
        return [built(Part, {**_NO_PART, "text": content})]
    if kind is Part:
        return [cast(Part, content)]
    if kind is list and content and all(type(part) is Part for part in cast(list[Any], content)):
        return list(cast(list[Part], content))
    return None


_NO_PART: dict[str, Any] = {
    "text": None,
    "raw": None,
    "url": None,
    "data": None,
    "metadata": None,
    "filename": None,
    "media_type": None,
}


def to_parts(value: Any) -> list[Part]:
    """Parts from what a plain agent produced: text, Part(s), or JSON data.

    None and empty text give no parts; a list is converted item by item.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [Part(text=value)] if value else []
    if isinstance(value, Part):
        return [value]
    if isinstance(value, list):
        return [part for item in cast(list[Any], value) for part in to_parts(item)]
    return [Part(data=value)]


class TaskUpdater:
    """Emits the events of one task. Every method is a coroutine; call from the agent's loop."""

    __slots__ = ("_artifact_seq", "_sink", "context_id", "task_id")

    def __init__(self, sink: EventSink, task_id: str, context_id: str) -> None:
        self._sink = sink
        self.task_id = task_id
        self.context_id = context_id
        self._artifact_seq = 0

    @property
    def state(self) -> TaskState:
        """The task's current state (as the server sees it)."""
        return self._sink.state

    @property
    def whole_answers(self) -> bool:
        """Whether a streamed artifact ends with all of it (``ManagerConfig.whole_answers``;
        True for a sink that does not say)."""
        return getattr(self._sink, "whole_answers", True)

    def _plain_ids(self) -> bool:
        """Whether both ids are exactly ``str`` (the run's own): models built from them
        need no validation."""
        return type(self.task_id) is str and type(self.context_id) is str

    def new_agent_message(self, content: MessageLike, **fields: Any) -> Message:
        """An agent message in this task and context."""
        if isinstance(content, Message):
            return content
        if not fields and self._plain_ids():
            parts = _plain_parts(content)
            if parts is not None:  # our own values, of their fields' types: built as is
                return built(
                    Message,
                    {
                        "message_id": new_id(),
                        "context_id": self.context_id,
                        "task_id": self.task_id,
                        "role": Role.AGENT,
                        "parts": parts,
                        "metadata": None,
                        "extensions": [],
                        "reference_task_ids": [],
                    },
                )
        return Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=_parts(content),
            task_id=self.task_id,
            context_id=self.context_id,
            **fields,
        )

    async def update_status(
        self,
        state: TaskState,
        message: MessageLike | None = None,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move the task to ``state``, optionally with an agent message."""
        msg = self.new_agent_message(message) if message is not None else None
        status = TaskStatus.now(state, msg)
        if metadata is None and self._plain_ids():
            # Our own values, of their fields' types: nothing to validate.
            event = built(
                TaskStatusUpdateEvent,
                {
                    "task_id": self.task_id,
                    "context_id": self.context_id,
                    "status": status,
                    "metadata": None,
                },
            )
        else:
            event = TaskStatusUpdateEvent(
                task_id=self.task_id, context_id=self.context_id, status=status, metadata=metadata
            )
        await self._sink.emit(event)

    async def start_work(self, message: MessageLike | None = None) -> None:
        """Mark the task as working (progress text optional)."""
        await self.update_status(TaskState.WORKING, message)

    async def complete(self, message: MessageLike | None = None) -> None:
        """End the task successfully."""
        await self.update_status(TaskState.COMPLETED, message)

    async def fail(self, message: MessageLike | None = None) -> None:
        """End the task as failed (the message is shown to the client)."""
        await self.update_status(TaskState.FAILED, message)

    async def reject(self, message: MessageLike | None = None) -> None:
        """Refuse the task."""
        await self.update_status(TaskState.REJECTED, message)

    async def cancel(self, message: MessageLike | None = None) -> None:
        """End the task as canceled (normally the server does this on a cancel request)."""
        await self.update_status(TaskState.CANCELED, message)

    async def require_input(self, message: MessageLike) -> None:
        """Pause the task until the client answers ``message`` with the same taskId."""
        await self.update_status(TaskState.INPUT_REQUIRED, message)

    async def require_auth(self, message: MessageLike) -> None:
        """Pause the task until the client has authenticated (out of band)."""
        await self.update_status(TaskState.AUTH_REQUIRED, message)

    async def add_artifact(
        self,
        content: PartsLike,
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool = False,
        last_chunk: bool | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Add (or with ``append`` extend) an artifact; returns its id for later chunks.

        ``last_chunk`` defaults to ``not append``: a new artifact is whole (streaming
        clients such as ADK treat one without ``lastChunk`` as partial), an appended
        chunk is not the last. To stream an artifact, use ``ArtifactStream`` (or pass
        ``last_chunk=False`` on the first chunk and ``True`` on the last).
        """
        if artifact_id is None:
            self._artifact_seq += 1
            artifact_id = f"artifact-{self._artifact_seq}"
        if last_chunk is None:
            last_chunk = not append
        parts = _plain_parts(content)
        if (
            parts is not None
            and metadata is None
            and type(artifact_id) is str
            and (name is None or type(name) is str)
            and (description is None or type(description) is str)
            and type(append) is bool
            and type(last_chunk) is bool
            and self._plain_ids()
        ):
            # Every value is of its field's type already: the models need no validation
            # (this is the path of every streamed chunk).
            artifact = built(
                Artifact,
                {
                    "artifact_id": artifact_id,
                    "name": name,
                    "description": description,
                    "parts": parts,
                    "metadata": None,
                    "extensions": [],
                },
            )
            await self._sink.emit(
                built(
                    TaskArtifactUpdateEvent,
                    {
                        "task_id": self.task_id,
                        "context_id": self.context_id,
                        "artifact": artifact,
                        "append": append,
                        "last_chunk": last_chunk,
                        "metadata": None,
                    },
                )
            )
            return artifact_id
        await self._sink.emit(
            TaskArtifactUpdateEvent(
                task_id=self.task_id,
                context_id=self.context_id,
                artifact=Artifact(
                    artifact_id=artifact_id,
                    name=name,
                    description=description,
                    parts=_parts(content),
                    metadata=metadata,
                ),
                append=append,
                last_chunk=last_chunk,
            )
        )
        return artifact_id

    async def reply(self, message: MessageLike) -> None:
        """Answer with a Message: a direct reply when it is the agent's first event and the
        caller allows one (blocking or streaming send), else it completes the task as its
        status message.
        """
        await self._sink.emit(self.new_agent_message(message))

    async def finish_with(self, result: Any) -> None:
        """Turn a plain function's return value into the task's outcome."""
        state = self.state
        if state.is_terminal or state.is_interrupted:
            return
        if isinstance(result, Message):
            await self.reply(result)
            return
        if isinstance(result, Artifact):
            await self._sink.emit(
                TaskArtifactUpdateEvent(
                    task_id=self.task_id,
                    context_id=self.context_id,
                    artifact=result,
                    last_chunk=True,
                )
            )
        else:
            parts = to_parts(result)
            if parts:
                await self.add_artifact(parts, artifact_id="result", name="result", last_chunk=True)
        await self.complete()
