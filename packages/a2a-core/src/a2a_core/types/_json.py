"""Stream events as 1.0 ProtoJSON bytes, without pydantic's per-field ``exclude_if`` calls.

Serializing a model calls back into Python for every optional field (proto semantics:
unset and empty fields are omitted), which made encoding the largest single cost of a
streamed event. Here each event type is turned into plain dicts and lists in its
fields' declaration order, leaving out what ``exclude_if`` leaves out, and encoded by
one ``to_json`` call with the models' own JSON settings. The bytes are the model's
(``tests/wire/test_event_bytes.py`` compares them, over random events and edge values).

Only the exact model classes are handled: a subclass may serialize differently, so
``event_json`` and ``task_json`` return None for one and the caller uses the model's
serializer. Used for stream frames and send results (``wire.v10``) and for the memory
store's finished tasks.
"""

from __future__ import annotations

import weakref
from typing import Any

import pydantic_core

from ._base import encode_base64, format_timestamp
from ._messages import (
    Artifact,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["event_json", "task_json"]

_to_json = pydantic_core.to_json


def _values_json(value: Any) -> bytes:
    # The models' JSON settings: bytes as base64, inf/nan as null (in data and metadata).
    return _to_json(value, by_alias=True, bytes_mode="base64", inf_nan_mode="null")


def _part(part: Part) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if part.text is not None:
        out["text"] = part.text
    if part.raw is not None:
        out["raw"] = encode_base64(part.raw)
    if part.url is not None:
        out["url"] = part.url
    if part.data is not None:
        out["data"] = part.data
    if part.metadata:
        out["metadata"] = part.metadata
    if part.filename is not None:
        out["filename"] = part.filename
    if part.media_type is not None:
        out["mediaType"] = part.media_type
    return out


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"messageId": message.message_id}
    if message.context_id is not None:
        out["contextId"] = message.context_id
    if message.task_id is not None:
        out["taskId"] = message.task_id
    out["role"] = message.role.value
    out["parts"] = [_part(part) for part in message.parts]
    if message.metadata:
        out["metadata"] = message.metadata
    if message.extensions:
        out["extensions"] = message.extensions
    if message.reference_task_ids:
        out["referenceTaskIds"] = message.reference_task_ids
    return out


def _status(status: TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"state": status.state.value}
    if status.message is not None:
        out["message"] = _message(status.message)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def _artifact(artifact: Artifact) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactId": artifact.artifact_id}
    if artifact.name is not None:
        out["name"] = artifact.name
    if artifact.description is not None:
        out["description"] = artifact.description
    out["parts"] = [_part(part) for part in artifact.parts]
    if artifact.metadata:
        out["metadata"] = artifact.metadata
    if artifact.extensions:
        out["extensions"] = artifact.extensions
    return out


def _task(task: Task) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": task.id,
        "contextId": task.context_id,
        "status": _status(task.status),
    }
    if task.artifacts:
        out["artifacts"] = [_artifact(artifact) for artifact in task.artifacts]
    if task.history:
        out["history"] = [_message(message) for message in task.history]
    if task.metadata:
        out["metadata"] = task.metadata
    return out


def _status_update(event: TaskStatusUpdateEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": _status(event.status),
    }
    if event.metadata:
        out["metadata"] = event.metadata
    return out


_WRAPPED: dict[type, tuple[str, Any]] = {
    Task: ("task", _task),
    Message: ("message", _message),
    TaskStatusUpdateEvent: ("statusUpdate", _status_update),
}

_HEADS: dict[tuple[str, str, str, str | None, str | None], bytes] = {}
"""The bytes an artifact update's JSON starts with, up to its parts, by the values they
hold: a streamed artifact's chunks share them (bounded: cleared when full)."""
_HEADS_MAX = 256


def _artifact_update_json(event: TaskArtifactUpdateEvent) -> bytes:
    """``event_json`` of an artifact update: the same bytes, with the part before the
    parts (its ids and the artifact's name) encoded once per artifact, not per chunk."""
    artifact = event.artifact
    key = (
        event.task_id,
        event.context_id,
        artifact.artifact_id,
        artifact.name,
        artifact.description,
    )
    head = _HEADS.get(key)
    if head is None:
        if len(_HEADS) >= _HEADS_MAX:
            _HEADS.clear()
        pieces = [
            b'{"artifactUpdate":{"taskId":',
            _to_json(event.task_id),
            b',"contextId":',
            _to_json(event.context_id),
            b',"artifact":{"artifactId":',
            _to_json(artifact.artifact_id),
        ]
        if artifact.name is not None:
            pieces += (b',"name":', _to_json(artifact.name))
        if artifact.description is not None:
            pieces += (b',"description":', _to_json(artifact.description))
        pieces.append(b',"parts":')
        head = _HEADS[key] = b"".join(pieces)
    out = [head, _values_json([_part(part) for part in artifact.parts])]
    if artifact.metadata:
        out += (b',"metadata":', _values_json(artifact.metadata))
    if artifact.extensions:
        out += (b',"extensions":', _values_json(artifact.extensions))
    out.append(b"}")
    if event.append:
        out.append(b',"append":true')
    if event.last_chunk:
        out.append(b',"lastChunk":true')
    if event.metadata:
        out += (b',"metadata":', _values_json(event.metadata))
    out.append(b"}}")
    return b"".join(out)


def event_json(event: object) -> bytes | None:
    """The 1.0 ``StreamResponse`` JSON of ``event`` (None: not one of the exact event types)."""
    if type(event) is TaskArtifactUpdateEvent:
        return _artifact_update_json(event)
    if type(event) is Task:
        return b'{"task":' + _task_bytes(event) + b"}"
    entry = _WRAPPED.get(type(event))
    if entry is None:
        return None
    key, convert = entry
    return _values_json({key: convert(event)})


def task_json(task: Task) -> bytes | None:
    """The task's JSON as ``dumps(task)`` gives it (None: not exactly a ``Task``)."""
    if type(task) is not Task:
        return None
    return _task_bytes(task)


_last: tuple[weakref.ref[Task], bytes] | None = None
"""The task last encoded (weakly: this keeps nothing alive) and its JSON: a blocking
send's result is the task the store has just encoded (the memory store keeps finished
tasks as JSON), so it is encoded once. Tasks are never modified in place
(``snapshot``'s rule), so the same object has the same JSON."""


def _task_bytes(task: Task) -> bytes:
    global _last
    last = _last
    if last is not None and last[0]() is task:
        return last[1]
    data = _values_json(_task(task))
    _last = (weakref.ref(task), data)
    return data
