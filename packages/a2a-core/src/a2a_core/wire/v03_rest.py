"""A2A 0.3 over HTTP+JSON: ProtoJSON of the 0.3 proto (package ``a2a.v1``).

Every 0.3 SDK spoke this on its ``/v1/...`` routes. How it differs from the
1.0 ProtoJSON: ``Message.content`` (not ``parts``); parts are ``{"text"}``,
``{"file": {"fileWithUri" | "fileWithBytes", "mimeType", "name"}}`` or
``{"data": {"data": {...}}}``; ``TASK_STATE_CANCELLED`` with two Ls; status
events carry ``final``; push configs are ``{"name": "tasks/{t}/
pushNotificationConfigs/{c}", "pushNotificationConfig": {...}}``; requests
name resources (``"name": "tasks/{id}"``) instead of plain ids; the card is
the 0.3 card with proto-style security schemes (the 1.0 oneof wrappers).

Decoding accepts both ProtoJSON spellings of a field (``messageId`` and
``message_id``; ``message`` and the proto name ``request`` / ``msg`` /
``update``), enum names or numbers, and applies proto3 semantics: an empty
string or zero is an unset field. So ``historyLength: 0`` means "unset", and
encoding a 1.0 ``historyLength`` of 0 is unrepresentable. In a send
``configuration`` an absent ``blocking`` is false (proto3), so it means
return immediately; without a ``configuration`` the send blocks.

**The dict ``decode_request`` expects** is the 0.3 proto request message in
ProtoJSON, filled as google.api.http transcoding does: path variables as the
resource-name fields, query parameters as the remaining scalar fields, and
the JSON body for the body fields. ``assemble_request`` builds it from the
route's pieces; ``encode_request`` returns the same shape and
``split_request`` turns it back into (method, path, query, body).

Per operation (route relative to the interface url -> the dict):

- SEND_MESSAGE, ``POST /v1/message:send`` and SEND_STREAMING_MESSAGE,
  ``POST /v1/message:stream``: the JSON body,
  ``{"message", "configuration"?, "metadata"?}``.
- GET_TASK, ``GET /v1/tasks/{id}?historyLength=N``:
  ``{"name": "tasks/{id}", "historyLength"?: N}`` (a number or its string).
- CANCEL_TASK, ``POST /v1/tasks/{id}:cancel``: ``{"name": "tasks/{id}"}``
  (the body carries nothing in 0.3 and is ignored).
- SUBSCRIBE_TO_TASK, ``POST`` (or ``GET``) ``/v1/tasks/{id}:subscribe``:
  ``{"name": "tasks/{id}"}``.
- CREATE_PUSH_CONFIG, ``POST /v1/tasks/{id}/pushNotificationConfigs``:
  ``{"parent": "tasks/{id}", "config": <body>}`` (1).
- GET_PUSH_CONFIG, ``GET /v1/tasks/{id}/pushNotificationConfigs/{c}`` and
  DELETE_PUSH_CONFIG, ``DELETE`` on the same path:
  ``{"name": "tasks/{id}/pushNotificationConfigs/{c}"}``.
- LIST_PUSH_CONFIGS, ``GET /v1/tasks/{id}/pushNotificationConfigs``:
  ``{"parent": "tasks/{id}", "pageSize"?, "pageToken"?}``.
- GET_EXTENDED_CARD, ``GET /v1/card``: ``{}`` (or None).
- LIST_TASKS has no 0.3 route: MethodNotFoundError.

(1) Clients disagree on the create body: the a2a-python SDK posts the whole
``CreateTaskPushNotificationConfigRequest`` (``{"parent", "configId",
"config": {"name", "pushNotificationConfig"}}``), others post the
``TaskPushNotificationConfig`` or the bare ``PushNotificationConfig``. The
decoder accepts all three under ``config`` or at the top level; the task id
always comes from ``parent`` (the path), which ``assemble_request`` sets.

Results: SendMessage answers ``{"task"}`` or ``{"message"}``; stream frames
are ``StreamResponse`` (``task``, ``message``, ``statusUpdate``,
``artifactUpdate``); GetTask and CancelTask a Task; push config create/get a
``TaskPushNotificationConfig``; list ``{"configs", "nextPageToken"?}``;
delete ``{}``; the extended card a 0.3 card.

Ids become resource-name segments, so an id containing ``/`` is rejected
(InvalidParamsError on decode, UnrepresentableError on encode). Error
bodies are not this codec's business over HTTP: use
``errors_wire.encode_rest_error_v03`` / ``decode_rest_error`` for the status
and body (``encode_error`` gives the 0.3 JSON-RPC error object).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple, cast
from urllib.parse import quote

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
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    format_timestamp,
)
from ._v03_codec import V03Codec, V03Shapes
from ._v03_convert import (
    Converter,
    FieldMap,
    as_obj,
    b64,
    each,
    field_map,
    has,
    is_final,
    map_list,
    nested,
    nonempty,
    pick,
    push_in,
    push_out,
    put,
    remap,
    task_shapes,
)
from .operations import Operation

__all__ = ["RestRequest", "V03RestCodec", "assemble_request", "split_request"]

_LIST_TASKS_MESSAGE = "ListTasks has no A2A 0.3 HTTP+JSON route"
_CANCELLED = "TASK_STATE_CANCELLED"
_TASK_NAME = re.compile(r"tasks/([^/]+)")
_PARENT_NAME = re.compile(r"tasks/([^/]+)(?:/pushNotificationConfigs)?")
_CONFIG_NAME = re.compile(r"tasks/([^/]+)/pushNotificationConfigs/([^/]*)")

# --- resource names ----------------------------------------------------------


def _segment(value: str, what: str) -> str:
    if not value or "/" in value:
        raise UnrepresentableError(f"A2A 0.3 resource names need a non-empty {what} without '/'")
    return value


def _task_name(task_id: str) -> str:
    return f"tasks/{_segment(task_id, 'task id')}"


def _config_name(task_id: str, config_id: str | None) -> str:
    suffix = "" if config_id is None else _segment(config_id, "config id")
    return f"{_task_name(task_id)}/pushNotificationConfigs/{suffix}"


def _match(pattern: re.Pattern[str], value: Any, what: str) -> re.Match[str]:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a resource name string")
    found = pattern.fullmatch(value)
    if found is None:
        raise ValueError(f"{what} is not a valid resource name")
    return found


# --- internal -> 0.3 ProtoJSON -----------------------------------------------


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
        out = {"text": part.text}
    elif part.raw is not None or part.url is not None:
        file: dict[str, Any] = (
            {"fileWithBytes": b64(part.raw)} if part.raw is not None else {"fileWithUri": part.url}
        )
        put(file, "mimeType", nonempty(part.media_type))
        put(file, "name", nonempty(part.filename))
        out = {"file": file}
    else:
        data = as_obj(part.data)
        if data is None:
            raise UnrepresentableError(
                f"A2A 0.3 data parts hold a JSON object only, not {type(part.data).__name__}"
            )
        _check_hint(part, "application/json")
        out = {"data": {"data": data}}
    put(out, "metadata", part.metadata)
    return out


def message_out(message: Message) -> dict[str, Any]:
    if message.reference_task_ids:
        raise UnrepresentableError("A2A 0.3 HTTP+JSON messages have no referenceTaskIds")
    out: dict[str, Any] = {"messageId": message.message_id}
    put(out, "contextId", nonempty(message.context_id))
    put(out, "taskId", nonempty(message.task_id))
    out["role"] = message.role.value
    out["content"] = [part_out(p) for p in message.parts]
    put(out, "metadata", message.metadata)
    if message.extensions:
        out["extensions"] = list(message.extensions)
    return out


def _state_out(state: TaskState) -> str:
    return _CANCELLED if state is TaskState.CANCELED else state.value


def status_out(status: TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"state": _state_out(status.state)}
    if status.message is not None:
        out["message"] = message_out(status.message)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def artifact_out(artifact: Artifact) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactId": artifact.artifact_id}
    put(out, "name", nonempty(artifact.name))
    put(out, "description", nonempty(artifact.description))
    out["parts"] = [part_out(p) for p in artifact.parts]
    put(out, "metadata", artifact.metadata)
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    return out


def task_out(task: Task) -> dict[str, Any]:
    out: dict[str, Any] = {"id": task.id}
    put(out, "contextId", nonempty(task.context_id))
    out["status"] = status_out(task.status)
    if task.artifacts:
        out["artifacts"] = [artifact_out(a) for a in task.artifacts]
    if task.history:
        out["history"] = [message_out(m) for m in task.history]
    put(out, "metadata", task.metadata)
    return out


def event_out(event: StreamEvent) -> dict[str, Any]:
    """An event wrapped as a 0.3 ``StreamResponse``."""
    if isinstance(event, Task):
        return {"task": task_out(event)}
    if isinstance(event, Message):
        return {"message": message_out(event)}
    if isinstance(event, TaskStatusUpdateEvent):
        update: dict[str, Any] = {"taskId": event.task_id}
        put(update, "contextId", nonempty(event.context_id))
        update["status"] = status_out(event.status)
        update["final"] = is_final(event.status.state)
        put(update, "metadata", event.metadata)
        return {"statusUpdate": update}
    update = {"taskId": event.task_id}
    put(update, "contextId", nonempty(event.context_id))
    update["artifact"] = artifact_out(event.artifact)
    if event.append:
        update["append"] = True
    if event.last_chunk:
        update["lastChunk"] = True
    put(update, "metadata", event.metadata)
    return {"artifactUpdate": update}


def _push_config_out(config: TaskPushNotificationConfig) -> dict[str, Any]:
    inner = push_out(config)
    for key in ("id", "token"):
        if inner.get(key) == "":
            del inner[key]
    auth = inner.get("authentication")
    if auth is not None and auth.get("credentials") == "":
        del auth["credentials"]
    return inner


def task_push_out(config: TaskPushNotificationConfig) -> dict[str, Any]:
    if not config.task_id:
        raise UnrepresentableError("A2A 0.3 push notification configs need a task id")
    return {
        "name": _config_name(config.task_id, nonempty(config.id)),
        "pushNotificationConfig": _push_config_out(config),
    }


def _configuration_out(config: SendMessageConfiguration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if config.accepted_output_modes:
        out["acceptedOutputModes"] = list(config.accepted_output_modes)
    push = config.task_push_notification_config
    if push is not None:
        if push.task_id:
            raise UnrepresentableError(
                "A2A 0.3 cannot carry a task id in the send configuration's push config"
            )
        out["pushNotification"] = _push_config_out(push)
    if config.history_length is not None:
        if config.history_length == 0:
            raise UnrepresentableError("A2A 0.3 HTTP+JSON cannot ask for historyLength 0")
        out["historyLength"] = config.history_length
    out["blocking"] = not config.return_immediately
    return out


def request_out(op: Operation, request: BaseModel) -> dict[str, Any]:
    """An internal request -> the 0.3 proto request message (see the module docstring)."""
    if op is Operation.LIST_TASKS:
        raise UnsupportedOperationError(_LIST_TASKS_MESSAGE)
    if getattr(request, "tenant", None):
        raise UnrepresentableError("A2A 0.3 requests have no tenant")
    if isinstance(request, SendMessageRequest):
        out: dict[str, Any] = {"message": message_out(request.message)}
        if request.configuration is not None:
            out["configuration"] = _configuration_out(request.configuration)
        put(out, "metadata", request.metadata)
        return out
    if isinstance(request, GetTaskRequest):
        out = {"name": _task_name(request.id)}
        if request.history_length is not None:
            if request.history_length == 0:
                raise UnrepresentableError("A2A 0.3 HTTP+JSON cannot ask for historyLength 0")
            out["historyLength"] = request.history_length
        return out
    if isinstance(request, CancelTaskRequest):
        if request.metadata:
            raise UnrepresentableError("A2A 0.3 HTTP+JSON cancel requests have no metadata")
        return {"name": _task_name(request.id)}
    if isinstance(request, SubscribeToTaskRequest):
        return {"name": _task_name(request.id)}
    if isinstance(request, TaskPushNotificationConfig):
        config = task_push_out(request)
        out = {"parent": _task_name(request.task_id or "")}
        put(out, "configId", nonempty(request.id))
        out["config"] = config
        return out
    if isinstance(
        request, GetTaskPushNotificationConfigRequest | DeleteTaskPushNotificationConfigRequest
    ):
        return {"name": _config_name(request.task_id, request.id)}
    if isinstance(request, ListTaskPushNotificationConfigsRequest):
        out = {"parent": _task_name(request.task_id)}
        if request.page_size:
            out["pageSize"] = request.page_size
        put(out, "pageToken", nonempty(request.page_token))
        return out
    if op is Operation.GET_EXTENDED_CARD:
        return {}
    raise UnrepresentableError(f"{type(request).__name__} is not a {op.value} request")


# --- 0.3 ProtoJSON -> internal (1.0 dicts, validated by the caller) ---------


_FILE = field_map(
    fileWithUri="url",
    fileWithBytes="raw",
    mimeType=("mediaType", nonempty),
    name=("filename", nonempty),
)


def part_in(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    obj = cast("dict[str, Any]", value)
    text, file_value, holder_value = obj.get("text"), obj.get("file"), obj.get("data")
    if (text is not None) + (file_value is not None) + (holder_value is not None) != 1:
        raise ValueError("a part needs exactly one of text, file or data")
    out: dict[str, Any]
    if text is not None:
        out = {"text": text}
    elif file_value is not None:
        file = as_obj(file_value)
        if file is None:
            raise ValueError("a file part needs a file object")
        out = remap(file, _FILE)
    else:
        holder = as_obj(holder_value)
        if holder is None:
            raise ValueError("a data part needs a DataPart object")
        data = holder.get("data")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError("a 0.3 data part holds a JSON object")
        out = {"data": data}
    metadata = obj.get("metadata")
    if metadata is not None:
        out["metadata"] = metadata
    return out


def _state_in(value: Any) -> Any:
    return TaskState.CANCELED.value if value == _CANCELLED else value


def _with_default(table: FieldMap, key: str, default: Any) -> Converter:
    """``nested`` plus a proto3 default for an enum whose zero value is omitted on the wire."""

    def convert(value: Any) -> Any:
        obj = as_obj(value)
        if obj is None:
            return value
        out = remap(obj, table)
        out.setdefault(key, default)
        return out

    return convert


message_in = _with_default(
    field_map(
        messageId=None,
        contextId=nonempty,
        taskId=nonempty,
        role=None,
        content=("parts", each(part_in)),
        metadata=None,
        extensions=None,
    ),
    "role",
    Role.UNSPECIFIED.value,
)
status_in = _with_default(
    field_map(
        state=_state_in,
        message=message_in,
        update=("message", message_in),
        timestamp=None,
    ),
    "state",
    TaskState.UNSPECIFIED.value,
)
artifact_in = nested(
    field_map(
        artifactId=None,
        name=nonempty,
        description=nonempty,
        parts=each(part_in),
        metadata=None,
        extensions=None,
    )
)
task_in, _STATUS_UPDATE, _ARTIFACT_UPDATE = task_shapes(status_in, message_in, artifact_in)


_EVENT_MEMBERS = ("task", "message", "msg", "statusUpdate", "artifactUpdate")


def event_in(value: Any) -> StreamEvent:
    """A 0.3 ``StreamResponse`` -> the wrapped event."""
    obj = as_obj(value)
    if obj is None:
        raise ValueError("a stream response must be a JSON object")
    present = [m for m in _EVENT_MEMBERS if has(obj, m)]
    if len(present) != 1:
        raise ValueError(
            "a stream response needs exactly one of task, message, statusUpdate, artifactUpdate"
        )
    member = present[0]
    inner = pick(obj, member)
    if member == "task":
        return Task.model_validate(task_in(inner))
    if member in ("message", "msg"):
        return Message.model_validate(message_in(inner))
    update = as_obj(inner)
    if update is None:
        raise ValueError(f"{member} must be an object")
    if member == "statusUpdate":
        return TaskStatusUpdateEvent.model_validate(remap(update, _STATUS_UPDATE))
    return TaskArtifactUpdateEvent.model_validate(remap(update, _ARTIFACT_UPDATE))


def task_or_message_in(value: Any) -> Task | Message:
    obj = as_obj(value)
    if obj is None:
        raise ValueError("a send response must be a JSON object")
    if has(obj, "statusUpdate") or has(obj, "artifactUpdate"):
        raise ValueError("a send response holds a task or a message")
    event = event_in(obj)
    assert isinstance(event, Task | Message)
    return event


def _push_in(value: Any) -> dict[str, Any]:
    out = as_obj(push_in(value, proto=True))
    if out is None:
        raise ValueError("pushNotificationConfig must be an object")
    return out


def task_push_in(value: Any) -> Any:
    """0.3 TaskPushNotificationConfig ``{name, pushNotificationConfig}`` -> the flat 1.0 dict."""
    obj = as_obj(value)
    if obj is None:
        return value
    found = _match(_CONFIG_NAME, pick(obj, "name"), "name")
    out = _push_in(pick(obj, "pushNotificationConfig"))
    out["taskId"] = found.group(1)
    if "id" not in out and found.group(2):
        out["id"] = found.group(2)
    return out


def _create_in(obj: dict[str, Any]) -> dict[str, Any]:
    task_id = _match(_PARENT_NAME, pick(obj, "parent"), "parent").group(1)
    body = obj
    config = as_obj(pick(obj, "config"))
    if config is not None:
        body = config
    if has(body, "pushNotificationConfig"):
        out = _push_in(pick(body, "pushNotificationConfig"))
    else:
        out = _push_in(body)
    if "id" not in out:
        put(out, "id", nonempty(pick(obj, "configId")))
    out["taskId"] = task_id
    return out


def _zero_unset(value: Any) -> Any:
    """Proto3 int32: 0 (or "0") is unset."""
    if isinstance(value, bool):
        return value
    return None if value in (0, "0", "") else value


def _not_blocking(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("configuration.blocking must be a boolean")
    return not value


# Proto3: a configuration without ``blocking`` has blocking=false.
_configuration_in = _with_default(
    field_map(
        acceptedOutputModes=None,
        pushNotification=("taskPushNotificationConfig", _push_in),
        pushNotificationConfig=("taskPushNotificationConfig", _push_in),
        historyLength=_zero_unset,
        blocking=("returnImmediately", _not_blocking),
    ),
    "returnImmediately",
    True,
)


def request_in(op: Operation, params: Any) -> dict[str, Any]:
    """The 0.3 proto request dict (see the module docstring) -> the 1.0 request dict."""
    obj = as_obj(params)
    if obj is None:
        if op is Operation.GET_EXTENDED_CARD and params is None:
            return {}
        raise InvalidParamsError("Invalid parameters: the request must be a JSON object")
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        message = obj.get("message")
        if message is None:
            message = obj.get("request")
        out: dict[str, Any] = {}
        put(out, "message", message_in(message))
        put(out, "configuration", _configuration_in(obj.get("configuration")))
        put(out, "metadata", obj.get("metadata"))
        return out
    if op is Operation.GET_EXTENDED_CARD:
        return {}
    if op is Operation.CREATE_PUSH_CONFIG:
        return _create_in(obj)
    if op is Operation.LIST_PUSH_CONFIGS:
        out = {"taskId": _match(_PARENT_NAME, obj.get("parent"), "parent").group(1)}
        put(out, "pageSize", _zero_unset(pick(obj, "pageSize")))
        put(out, "pageToken", nonempty(pick(obj, "pageToken")))
        return out
    if op in (Operation.GET_PUSH_CONFIG, Operation.DELETE_PUSH_CONFIG):
        found = _match(_CONFIG_NAME, obj.get("name"), "name")
        return {"taskId": found.group(1), "id": found.group(2)}
    task_id = _match(_TASK_NAME, obj.get("name"), "name").group(1)
    if op is Operation.GET_TASK:
        out = {"id": task_id}
        put(out, "historyLength", _zero_unset(pick(obj, "historyLength")))
        return out
    if op in (Operation.CANCEL_TASK, Operation.SUBSCRIBE_TO_TASK):
        return {"id": task_id}
    raise MethodNotFoundError(_LIST_TASKS_MESSAGE)


# --- the HTTP side of the dict ---------------------------------------------------


class RestRequest(NamedTuple):
    """One 0.3 HTTP+JSON call: method, path below the interface url, query, JSON body."""

    method: str
    path: str
    query: dict[str, str]
    body: Any


def assemble_request(
    op: Operation,
    *,
    task_id: str | None = None,
    config_id: str | None = None,
    query: Mapping[str, str] | None = None,
    body: Any = None,
) -> Any:
    """Build the dict ``decode_request`` expects from a matched 0.3 route.

    ``task_id`` / ``config_id`` are the decoded path parameters. Path values
    override anything of the same name in the body. A body that is not an
    object is passed on for the codec to reject.
    """
    query = query or {}
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        return body
    if op is Operation.GET_EXTENDED_CARD:
        return {}
    tid = task_id or ""
    if op is Operation.CREATE_PUSH_CONFIG:
        out: dict[str, Any] = {"config": body}
        if isinstance(body, dict) and ("parent" in body or "config" in body):
            out = dict(body)  # pyright: ignore[reportUnknownArgumentType]
        out["parent"] = f"tasks/{tid}"
        return out
    if op is Operation.LIST_PUSH_CONFIGS:
        out = {"parent": f"tasks/{tid}"}
        for key in ("pageSize", "pageToken"):
            if key in query:
                out[key] = query[key]
        return out
    if op in (Operation.GET_PUSH_CONFIG, Operation.DELETE_PUSH_CONFIG):
        return {"name": f"tasks/{tid}/pushNotificationConfigs/{config_id or ''}"}
    out = {"name": f"tasks/{tid}"}
    if op is Operation.GET_TASK and "historyLength" in query:
        out["historyLength"] = query["historyLength"]
    return out


_ROUTES: dict[Operation, tuple[str, str]] = {
    Operation.SEND_MESSAGE: ("POST", "/v1/message:send"),
    Operation.SEND_STREAMING_MESSAGE: ("POST", "/v1/message:stream"),
    Operation.GET_TASK: ("GET", "/v1/tasks/{task}"),
    Operation.CANCEL_TASK: ("POST", "/v1/tasks/{task}:cancel"),
    Operation.SUBSCRIBE_TO_TASK: ("POST", "/v1/tasks/{task}:subscribe"),
    Operation.CREATE_PUSH_CONFIG: ("POST", "/v1/tasks/{task}/pushNotificationConfigs"),
    Operation.GET_PUSH_CONFIG: ("GET", "/v1/tasks/{task}/pushNotificationConfigs/{config}"),
    Operation.LIST_PUSH_CONFIGS: ("GET", "/v1/tasks/{task}/pushNotificationConfigs"),
    Operation.DELETE_PUSH_CONFIG: ("DELETE", "/v1/tasks/{task}/pushNotificationConfigs/{config}"),
    Operation.GET_EXTENDED_CARD: ("GET", "/v1/card"),
}


def split_request(op: Operation, value: dict[str, Any]) -> RestRequest:
    """The inverse of ``assemble_request``: ``encode_request``'s dict -> the HTTP call.

    Subscribe uses POST (the spec text and most SDKs); a client may retry
    with GET on 405, as the 0.3 proto declares GET.
    """
    route = _ROUTES.get(op)
    if route is None:
        raise UnsupportedOperationError(_LIST_TASKS_MESSAGE)
    method, template = route
    task = config = ""
    query: dict[str, str] = {}
    body: Any = None
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        body = value
    elif op is Operation.CREATE_PUSH_CONFIG:
        task = _match(_PARENT_NAME, value.get("parent"), "parent").group(1)
        body = value
    elif op is Operation.LIST_PUSH_CONFIGS:
        task = _match(_PARENT_NAME, value.get("parent"), "parent").group(1)
        query = {k: str(value[k]) for k in ("pageSize", "pageToken") if k in value}
    elif op in (Operation.GET_PUSH_CONFIG, Operation.DELETE_PUSH_CONFIG):
        found = _match(_CONFIG_NAME, value.get("name"), "name")
        task, config = found.group(1), found.group(2)
    elif op is not Operation.GET_EXTENDED_CARD:
        task = _match(_TASK_NAME, value.get("name"), "name").group(1)
        if "historyLength" in value:
            query["historyLength"] = str(value["historyLength"])
        if op is Operation.CANCEL_TASK:
            body = {}
    path = template.format(task=quote(task, safe=""), config=quote(config, safe=""))
    return RestRequest(method, path, query, body)


class V03RestCodec(V03Codec):
    """A2A 0.3 HTTP+JSON (ProtoJSON of the 0.3 proto ``a2a.v1``)."""

    binding: ClassVar[str] = "HTTP+JSON"
    shapes: ClassVar[V03Shapes] = V03Shapes.named_in(globals())
    proto: ClassVar[bool] = True
    no_list_tasks: ClassVar[str] = _LIST_TASKS_MESSAGE

    def _push_configs_out(self, result: Any) -> Any:
        response = (
            result
            if isinstance(result, ListTaskPushNotificationConfigsResponse)
            else ListTaskPushNotificationConfigsResponse(configs=list(result))
        )
        out: dict[str, Any] = {"configs": [task_push_out(c) for c in response.configs]}
        put(out, "nextPageToken", nonempty(response.next_page_token))
        return out

    def _deleted(self) -> Any:
        return {}

    def _push_configs_in(self, value: Any) -> ListTaskPushNotificationConfigsResponse:
        obj = as_obj(value)
        if obj is None:
            raise ValueError("a list response must be a JSON object")
        out: dict[str, Any] = {"configs": map_list(obj.get("configs", []), task_push_in)}
        put(out, "nextPageToken", pick(obj, "nextPageToken"))
        return ListTaskPushNotificationConfigsResponse.model_validate(out)
