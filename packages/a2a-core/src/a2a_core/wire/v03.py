"""A2A 0.3 over JSON-RPC: the ``types.ts`` shapes, converted to and from the 1.0 model.

What differs from 1.0 and how it maps:

- ``kind`` discriminators on tasks, messages, parts and stream events; enums
  in kebab case (``"input-required"``, ``"canceled"``, ``"unknown"`` for
  UNSPECIFIED) and lowercase roles.
- Parts: ``{kind:"file", file:{name?, mimeType?, bytes|uri}}`` is a 1.0 raw or
  url part with ``filename`` / ``mediaType``; a data part holds an object only.
  A 0.3 text part has no media type: ``text/plain`` on a text part and
  ``application/json`` on a data part are implied and left out; any other
  media type, or a filename, on those parts is unrepresentable.
- ``configuration.blocking`` is the inverse of ``returnImmediately``; an
  absent ``blocking`` means blocking (as 0.3 servers treated it). Encoding
  always writes ``blocking`` explicitly.
- Push configs nest as ``{taskId, pushNotificationConfig:{id?, url, token?,
  authentication?:{schemes[], credentials?}}}``; the first of ``schemes`` is
  the 1.0 ``scheme``.
- ``tasks/pushNotificationConfig/get`` without ``pushNotificationConfigId``
  decodes to ``id=""``: the server answers with the task's only (or first)
  config. ``.../list`` answers a bare list; ``.../delete`` answers ``null``.
- Status events carry ``final``: true when the state is terminal or
  interrupted (input-required, auth-required).
- ListTasks has no 0.3 method (MethodNotFoundError on decode,
  UnsupportedOperationError when a client tries to encode it).
- Request fields 0.3 cannot carry (``tenant``, pagination of push configs,
  ...) raise UnrepresentableError on encode; 0.3 request fields the internal
  model has no place for (``metadata`` of tasks/get and tasks/resubscribe)
  are ignored on decode.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from ..errors import (
    InvalidParamsError,
    MethodNotFoundError,
    UnrepresentableError,
    UnsupportedOperationError,
)
from ..types import (
    Artifact,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    Message,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
    format_timestamp,
)
from ._v03_codec import V03Codec, V03Shapes
from ._v03_convert import (
    ROLE_FROM_V03,
    ROLE_TO_V03,
    STATE_FROM_V03,
    STATE_TO_V03,
    Converter,
    as_obj,
    b64,
    each,
    field_map,
    has,
    is_final,
    map_list,
    nested,
    pick,
    push_in,
    push_out,
    put,
    remap,
    task_shapes,
)
from .operations import Operation

__all__ = ["V03JsonRpcCodec"]

_LIST_TASKS_MESSAGE = "ListTasks has no A2A 0.3 JSON-RPC method"

# --- internal -> 0.3 -------------------------------------------------------


def _check_hint(part: Part, implied: str) -> None:
    if part.filename is not None:
        raise UnrepresentableError(f"A2A 0.3 {part.kind} parts have no filename")
    if part.media_type is not None and part.media_type != implied:
        raise UnrepresentableError(
            f"A2A 0.3 {part.kind} parts have no media type (only {implied} is implied)"
        )


def part_out(part: Part) -> dict[str, Any]:
    out: dict[str, Any]
    if part.text is not None:
        _check_hint(part, "text/plain")
        out = {"kind": "text", "text": part.text}
    elif part.raw is not None or part.url is not None:
        file: dict[str, Any] = (
            {"bytes": b64(part.raw)} if part.raw is not None else {"uri": part.url}
        )
        put(file, "mimeType", part.media_type)
        put(file, "name", part.filename)
        out = {"kind": "file", "file": file}
    else:
        data = as_obj(part.data)
        if data is None:
            raise UnrepresentableError(
                f"A2A 0.3 data parts hold a JSON object only, not {type(part.data).__name__}"
            )
        _check_hint(part, "application/json")
        out = {"kind": "data", "data": data}
    put(out, "metadata", part.metadata)
    return out


def message_out(message: Message) -> dict[str, Any]:
    role = ROLE_TO_V03.get(message.role)
    if role is None:
        raise UnrepresentableError("A2A 0.3 messages need the role user or agent")
    out: dict[str, Any] = {
        "kind": "message",
        "messageId": message.message_id,
        "role": role,
        "parts": [part_out(p) for p in message.parts],
    }
    put(out, "contextId", message.context_id)
    put(out, "taskId", message.task_id)
    put(out, "metadata", message.metadata)
    if message.extensions:
        out["extensions"] = list(message.extensions)
    if message.reference_task_ids:
        out["referenceTaskIds"] = list(message.reference_task_ids)
    return out


def status_out(status: TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"state": STATE_TO_V03[status.state]}
    if status.message is not None:
        out["message"] = message_out(status.message)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def artifact_out(artifact: Artifact) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactId": artifact.artifact_id}
    put(out, "name", artifact.name)
    put(out, "description", artifact.description)
    out["parts"] = [part_out(p) for p in artifact.parts]
    put(out, "metadata", artifact.metadata)
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    return out


def task_out(task: Task) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "task",
        "id": task.id,
        "contextId": task.context_id,
        "status": status_out(task.status),
    }
    if task.artifacts:
        out["artifacts"] = [artifact_out(a) for a in task.artifacts]
    if task.history:
        out["history"] = [message_out(m) for m in task.history]
    put(out, "metadata", task.metadata)
    return out


def event_out(event: StreamEvent) -> dict[str, Any]:
    if isinstance(event, Task):
        return task_out(event)
    if isinstance(event, Message):
        return message_out(event)
    if isinstance(event, TaskStatusUpdateEvent):
        out: dict[str, Any] = {
            "kind": "status-update",
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": status_out(event.status),
            "final": is_final(event.status.state),
        }
        put(out, "metadata", event.metadata)
        return out
    out = {
        "kind": "artifact-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": artifact_out(event.artifact),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    put(out, "metadata", event.metadata)
    return out


def task_push_out(config: TaskPushNotificationConfig) -> dict[str, Any]:
    if not config.task_id:
        raise UnrepresentableError("A2A 0.3 push notification configs need a task id")
    return {"taskId": config.task_id, "pushNotificationConfig": push_out(config)}


def _no_tenant(request: Any) -> None:
    if getattr(request, "tenant", None):
        raise UnrepresentableError("A2A 0.3 requests have no tenant")


def _configuration_out(config: SendMessageConfiguration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    put(out, "historyLength", config.history_length)
    push = config.task_push_notification_config
    if push is not None:
        if push.task_id:
            raise UnrepresentableError(
                "A2A 0.3 cannot carry a task id in the send configuration's push config"
            )
        out["pushNotificationConfig"] = push_out(push)
    out["blocking"] = not config.return_immediately
    return out


def request_out(op: Operation, request: BaseModel) -> Any:
    """An internal request -> 0.3 JSON-RPC ``params`` (None: send no params)."""
    if op is Operation.LIST_TASKS:
        raise UnsupportedOperationError(_LIST_TASKS_MESSAGE)
    _no_tenant(request)
    if isinstance(request, SendMessageRequest):
        out: dict[str, Any] = {"message": message_out(request.message)}
        if request.configuration is not None:
            out["configuration"] = _configuration_out(request.configuration)
        put(out, "metadata", request.metadata)
        return out
    if isinstance(request, GetTaskRequest):
        out = {"id": request.id}
        put(out, "historyLength", request.history_length)
        return out
    if isinstance(request, CancelTaskRequest):
        out = {"id": request.id}
        put(out, "metadata", request.metadata)
        return out
    if isinstance(request, SubscribeToTaskRequest):
        return {"id": request.id}
    if isinstance(request, TaskPushNotificationConfig):
        return task_push_out(request)
    if isinstance(request, GetTaskPushNotificationConfigRequest):
        out = {"id": request.task_id}
        if request.id:
            out["pushNotificationConfigId"] = request.id
        return out
    if isinstance(request, ListTaskPushNotificationConfigsRequest):
        if request.page_size is not None or request.page_token:
            raise UnrepresentableError("A2A 0.3 cannot page push notification configs")
        return {"id": request.task_id}
    if isinstance(request, DeleteTaskPushNotificationConfigRequest):
        return {"id": request.task_id, "pushNotificationConfigId": request.id}
    if op is Operation.GET_EXTENDED_CARD:
        return None
    raise UnrepresentableError(f"{type(request).__name__} is not a {op.value} request")


# --- 0.3 -> internal (1.0 dicts, validated by the caller) -----------------


_FILE = field_map(bytes="raw", uri="url", mimeType="mediaType", name="filename")


_PART_MEMBERS = ("text", "file", "data")


def _implied_kind(obj: dict[str, Any]) -> str:
    """The kind of a 0.3 part that omits ``kind``: its one content member.

    types.ts requires the discriminator, but both official SDKs accept a part without it
    (python-a2a sends them). A part with no member or several, or whose ``type`` (an
    older draft's discriminator) names another kind, is still refused.
    """
    members = [name for name in _PART_MEMBERS if obj.get(name) is not None]
    if len(members) != 1:
        raise ValueError('a 0.3 part needs its "kind" ("text", "file" or "data")')
    legacy = obj.get("type")
    if legacy is not None and legacy != members[0]:
        raise ValueError(f"unknown part type {str(legacy)[:40]!r}")
    return members[0]


def part_in(value: Any) -> Any:
    obj = as_obj(value)
    if obj is None:
        return value
    kind = obj.get("kind")
    if kind is None:
        kind = _implied_kind(obj)
    out: dict[str, Any]
    if kind == "text":
        text = obj.get("text")
        out = {} if text is None else {"text": text}
    elif kind == "file":
        file = as_obj(obj.get("file"))
        if file is None:
            raise ValueError("a file part needs a file object")
        out = remap(file, _FILE)
    elif kind == "data":
        data = obj.get("data")
        if not isinstance(data, dict):
            raise ValueError("a 0.3 data part holds a JSON object")
        out = {"data": data}
    else:
        raise ValueError(f"unknown part kind {str(kind)[:40]!r}")
    metadata = obj.get("metadata")
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _enum_in(names: dict[str, str]) -> Converter:
    return lambda value: names.get(value, value) if isinstance(value, str) else value


message_in = nested(
    field_map(
        messageId=None,
        contextId=None,
        taskId=None,
        role=_enum_in(ROLE_FROM_V03),
        parts=each(part_in),
        metadata=None,
        extensions=None,
        referenceTaskIds=None,
    )
)
status_in = nested(field_map(state=_enum_in(STATE_FROM_V03), message=message_in, timestamp=None))
artifact_in = nested(
    field_map(
        artifactId=None,
        name=None,
        description=None,
        parts=each(part_in),
        metadata=None,
        extensions=None,
    )
)
task_in, _STATUS_UPDATE, _ARTIFACT_UPDATE = task_shapes(status_in, message_in, artifact_in)


def _event_kind(obj: dict[str, Any]) -> Any:
    kind = obj.get("kind")
    if kind is not None:
        return kind
    if has(obj, "messageId"):
        return "message"
    if "artifact" in obj:
        return "artifact-update"
    if has(obj, "taskId"):
        return "status-update"
    return "task"


def event_in(value: Any) -> StreamEvent:
    """A 0.3 stream result (Task, Message, status-update, artifact-update) -> event."""
    obj = as_obj(value)
    if obj is None:
        raise ValueError("a stream event must be a JSON object")
    kind = _event_kind(obj)
    if kind == "task":
        return Task.model_validate(task_in(obj))
    if kind == "message":
        return Message.model_validate(message_in(obj))
    if kind == "status-update":
        return TaskStatusUpdateEvent.model_validate(remap(obj, _STATUS_UPDATE))
    if kind == "artifact-update":
        return TaskArtifactUpdateEvent.model_validate(remap(obj, _ARTIFACT_UPDATE))
    raise ValueError(f"unknown event kind {str(kind)[:40]!r}")


def task_or_message_in(value: Any) -> Task | Message:
    event = event_in(value)
    if not isinstance(event, Task | Message):
        raise ValueError("expected a task or a message")
    return event


def task_push_in(value: Any) -> Any:
    """0.3 TaskPushNotificationConfig -> the flat 1.0 dict."""
    obj = as_obj(value)
    if obj is None:
        return value
    out = as_obj(push_in(pick(obj, "pushNotificationConfig"), proto=False))
    if out is None:
        raise ValueError("pushNotificationConfig must be an object")
    put(out, "taskId", pick(obj, "taskId"))
    return out


def _not_blocking(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("configuration.blocking must be a boolean")
    return not value


_configuration_in = nested(
    field_map(
        acceptedOutputModes=None,
        historyLength=None,
        pushNotificationConfig=(
            "taskPushNotificationConfig",
            lambda value: push_in(value, proto=False),
        ),
        blocking=("returnImmediately", _not_blocking),
    )
)


def _params(value: Any) -> dict[str, Any]:
    obj = as_obj(value)
    if obj is None:
        raise InvalidParamsError("Invalid parameters: params must be a JSON object")
    return obj


def request_in(op: Operation, params: Any) -> dict[str, Any]:
    """0.3 ``params`` -> the 1.0 request dict of ``op``."""
    if op is Operation.GET_EXTENDED_CARD:
        if params is None or params == []:
            return {}
        _params(params)
        return {}
    obj = _params(params)
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        out: dict[str, Any] = {}
        put(out, "message", message_in(obj.get("message")))
        put(out, "configuration", _configuration_in(obj.get("configuration")))
        put(out, "metadata", obj.get("metadata"))
        return out
    task_id = obj.get("id")
    if op is Operation.GET_TASK:
        out = {"id": task_id}
        put(out, "historyLength", pick(obj, "historyLength"))
        return out
    if op is Operation.CANCEL_TASK:
        out = {"id": task_id}
        put(out, "metadata", obj.get("metadata"))
        return out
    if op is Operation.SUBSCRIBE_TO_TASK:
        return {"id": task_id}
    if op is Operation.CREATE_PUSH_CONFIG:
        return task_push_in(obj)
    if op is Operation.LIST_PUSH_CONFIGS:
        return {"taskId": task_id}
    if op is Operation.GET_PUSH_CONFIG:
        config_id = pick(obj, "pushNotificationConfigId")
        return {"taskId": task_id, "id": "" if config_id is None else config_id}
    if op is Operation.DELETE_PUSH_CONFIG:
        out = {"taskId": task_id}
        put(out, "id", pick(obj, "pushNotificationConfigId"))
        return out
    raise MethodNotFoundError(_LIST_TASKS_MESSAGE)


class V03JsonRpcCodec(V03Codec):
    """A2A 0.3 JSON-RPC (``types.ts`` shapes)."""

    binding: ClassVar[str] = "JSONRPC"
    shapes: ClassVar[V03Shapes] = V03Shapes.named_in(globals())
    proto: ClassVar[bool] = False
    no_list_tasks: ClassVar[str] = _LIST_TASKS_MESSAGE

    def _push_configs_out(self, result: Any) -> Any:
        if isinstance(result, ListTaskPushNotificationConfigsResponse):
            if result.next_page_token:
                raise UnrepresentableError("A2A 0.3 cannot page push notification configs")
            configs = result.configs
        else:
            configs = list(result)
        return [task_push_out(c) for c in configs]

    def _push_configs_in(self, value: Any) -> ListTaskPushNotificationConfigsResponse:
        # A bare list in 0.3 JSON-RPC.
        return ListTaskPushNotificationConfigsResponse.model_validate(
            {"configs": map_list(value, task_push_in)}
        )
