"""How many bytes a task's JSON takes, estimated without encoding it.

The in-memory stores charge each task against their byte budget on every write.
Encoding the task to learn its size would cost more than the rest of the write, and
the bytes would be thrown away. The estimate adds up what the JSON is made of: the
strings (their UTF-8 length; a check for ASCII is free), base64 for raw bytes, a fixed
allowance for keys and punctuation per object, and the encoded length of free-form
values (data parts and metadata, rare, encoded only when present). It is within a
small margin of the real length for ordinary tasks and never far below it: text
escaped by JSON (control characters, quotes) is counted once, as the memory it holds.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

from ..types import Artifact, Message, Part, Task

__all__ = ["estimated_json_size"]

_to_json = pydantic_core.to_json

_TASK = 110
"""``{"id":"","contextId":"","status":{"state":"TASK_STATE_WORKING","timestamp":"…"}}``"""
_MESSAGE = 80
"""``{"messageId":"","contextId":"","taskId":"","role":"ROLE_AGENT","parts":[]}``, and a comma."""
_ARTIFACT = 45
"""``{"artifactId":"","name":"","parts":[]}``, and a comma."""
_PART = 12
"""``{"text":""}``, and a comma."""
_PART_EXTRAS = 40
"""``"metadata":,"filename":"","mediaType":""`` when any of them is set."""
_LISTS = 40
"""``"extensions":[],"referenceTaskIds":[]`` and their quotes and commas."""


def estimated_json_size(task: Task) -> int:
    """About ``len(dumps(task))``, from the task's parts, without encoding it."""
    size = _TASK + len(task.id) + len(task.context_id) + _free(task.metadata)
    status_message = task.status.message
    if status_message is not None:
        size += _message(status_message)
    for message in task.history:
        size += _message(message)
    for artifact in task.artifacts:
        size += _artifact(artifact)
    return size


def _message(message: Message) -> int:
    size = (
        _MESSAGE
        + len(message.message_id)
        + len(message.context_id or "")
        + len(message.task_id or "")
        + _parts(message.parts)
    )
    if message.metadata is not None:
        size += _free(message.metadata)
    if message.extensions or message.reference_task_ids:
        size += _LISTS + _strings(message.extensions) + _strings(message.reference_task_ids)
    return size


def _artifact(artifact: Artifact) -> int:
    size = (
        _ARTIFACT
        + len(artifact.artifact_id)
        + _text(artifact.name)
        + _text(artifact.description)
        + _parts(artifact.parts)
    )
    if artifact.metadata is not None:
        size += _free(artifact.metadata)
    if artifact.extensions:
        size += _LISTS + _strings(artifact.extensions)
    return size


def _parts(parts: list[Part]) -> int:
    size = 0
    for part in parts:
        size += _PART
        text = part.text
        if text is not None:
            size += len(text) if text.isascii() else len(text.encode())
        elif part.raw is not None:
            size += (len(part.raw) + 2) // 3 * 4  # base64
        elif part.url is not None:
            size += _text(part.url)
        else:
            size += _free(part.data)
        if part.metadata is not None or part.filename is not None or part.media_type is not None:
            size += (
                _PART_EXTRAS + _free(part.metadata) + _text(part.filename) + _text(part.media_type)
            )
    return size


def _text(value: str | None) -> int:
    if value is None:
        return 0
    return len(value) if value.isascii() else len(value.encode())


def _strings(values: list[str]) -> int:
    return sum(_text(value) + 3 for value in values)


def _free(value: Any) -> int:
    """Data parts and metadata: any JSON value, encoded (only when present)."""
    return 0 if value is None else len(_to_json(value))
