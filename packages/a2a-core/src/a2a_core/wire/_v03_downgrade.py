"""What a server answers a 0.3 client when a stored value has no exact 0.3 form.

A task stored by a 1.0 client (or produced by an agent) may hold shapes 0.3
cannot express. Encoding such a value for a 0.3 reader must not fail: a read
never breaks because of what someone else stored. The 0.3 codecs encode
strictly first and, only when that raises ``UnrepresentableError``, encode
``downgrade(value)`` instead, so the common path costs nothing.

The mapping (documented in docs/protocol-model.md), with the 1.0 fields kept
under the ``"a2a.v1"`` key of the nearest 0.3 ``metadata`` wherever 0.3 has
no field for them:

- a data part holding a list, string, number or boolean becomes the object
  ``{"value": <it>}``, marked ``{"a2a.v1": {"dataWrapped": true}}``;
- a text or data part's ``filename`` / ``mediaType`` move to ``"a2a.v1"``;
- a message's ``referenceTaskIds`` (0.3 HTTP+JSON has none) move to ``"a2a.v1"``;
- a message with ``ROLE_UNSPECIFIED`` is sent as an agent message, with
  ``{"role": "ROLE_UNSPECIFIED"}`` under ``"a2a.v1"``;
- a push config's ``tenant`` is left out (0.3 has no tenants; the reader is
  already in that tenant), and a list of push configs loses its next page
  token on 0.3 JSON-RPC (which cannot page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..errors import UnrepresentableError
from ..types import (
    Artifact,
    ListTaskPushNotificationConfigsResponse,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["V1_KEY", "downgrade", "lenient"]

V1_KEY = "a2a.v1"
"""The metadata key holding 1.0 fields a 0.3 form has no place for."""

T = TypeVar("T")
R = TypeVar("R")


def lenient(encode: Callable[[T], R], value: T, *, rest: bool) -> R:
    """``encode(value)``; if 0.3 cannot carry it, ``encode(downgrade(value))``."""
    try:
        return encode(value)
    except UnrepresentableError:
        return encode(cast(T, downgrade(value, rest=rest)))


def _with_v1(metadata: dict[str, Any] | None, moved: dict[str, Any]) -> dict[str, Any] | None:
    if not moved:
        return metadata
    out = dict(metadata or {})
    previous = out.get(V1_KEY)
    out[V1_KEY] = (
        {**cast(dict[str, Any], previous), **moved} if isinstance(previous, dict) else moved
    )
    return out


def _part(part: Part) -> Part:
    if part.raw is not None or part.url is not None:
        return part  # file parts carry filename and media type in 0.3 too
    moved: dict[str, Any] = {}
    update: dict[str, Any] = {}
    implied = "text/plain" if part.text is not None else "application/json"
    if part.filename is not None:
        moved["filename"] = part.filename
        update["filename"] = None
    if part.media_type is not None and part.media_type != implied:
        moved["mediaType"] = part.media_type
        update["media_type"] = None
    if part.text is None and not isinstance(part.data, dict):
        moved["dataWrapped"] = True
        update["data"] = {"value": part.data}
    if not moved:
        return part
    update["metadata"] = _with_v1(part.metadata, moved)
    return part.model_copy(update=update)


def _parts(parts: list[Part]) -> list[Part]:
    return [_part(p) for p in parts]


def _message(message: Message, rest: bool) -> Message:
    moved: dict[str, Any] = {}
    update: dict[str, Any] = {"parts": _parts(message.parts)}
    if message.role is Role.UNSPECIFIED:
        moved["role"] = Role.UNSPECIFIED.value
        update["role"] = Role.AGENT
    if rest and message.reference_task_ids:
        moved["referenceTaskIds"] = list(message.reference_task_ids)
        update["reference_task_ids"] = []
    update["metadata"] = _with_v1(message.metadata, moved)
    return message.model_copy(update=update)


def _status(status: TaskStatus, rest: bool) -> TaskStatus:
    if status.message is None:
        return status
    return status.model_copy(update={"message": _message(status.message, rest)})


def _artifact(artifact: Artifact) -> Artifact:
    return artifact.model_copy(update={"parts": _parts(artifact.parts)})


def _push(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    return config.model_copy(update={"tenant": None}) if config.tenant else config


def downgrade(value: Any, *, rest: bool) -> Any:
    """``value`` with what 0.3 cannot express moved or mapped (see the module docstring)."""
    if isinstance(value, Task):
        return value.model_copy(
            update={
                "status": _status(value.status, rest),
                "artifacts": [_artifact(a) for a in value.artifacts],
                "history": [_message(m, rest) for m in value.history],
            }
        )
    if isinstance(value, Message):
        return _message(value, rest)
    if isinstance(value, TaskStatusUpdateEvent):
        return value.model_copy(update={"status": _status(value.status, rest)})
    if isinstance(value, TaskArtifactUpdateEvent):
        return value.model_copy(update={"artifact": _artifact(value.artifact)})
    if isinstance(value, TaskPushNotificationConfig):
        return _push(value)
    if isinstance(value, ListTaskPushNotificationConfigsResponse):
        configs = [_push(c) for c in value.configs]
        token = value.next_page_token if rest else ""
        return value.model_copy(update={"configs": configs, "next_page_token": token})
    if isinstance(value, list):
        return [downgrade(v, rest=rest) for v in cast(list[Any], value)]
    return value
