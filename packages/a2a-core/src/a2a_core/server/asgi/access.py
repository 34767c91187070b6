"""The access log: one line per request on the ``a2a_core.access`` logger, at INFO.

Each line says who called (client address), the HTTP request line, the
binding, the A2A method and protocol version, the task id, the HTTP status,
the task's state or the A2A error code, and how long it took (a stream is
logged when it ends, so its duration is the stream's). Message contents are
never logged. The fields are also set on the log record (``a2a_binding``,
``a2a_method``, ``a2a_version``, ``a2a_task_id``, ``a2a_state``,
``a2a_error``, ``http_status``, ``duration_ms``) for structured handlers.

When the logger is not enabled for INFO (the default: the ``a2a_core`` loggers
have no level set and Python's default is WARNING), the app checks
``isEnabledFor`` once per request and does nothing else.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from ... import telemetry as _telemetry
from ...errors import A2AError
from ...types import Message, StreamEvent, Task, TaskStatusUpdateEvent
from ..stream import ServerStream
from .http import Receive, Scope, Send

__all__ = [
    "ACCESS_KEY",
    "AccessRecord",
    "JsonLogFormatter",
    "RecordedEvents",
    "access_logger",
    "label",
    "logged",
    "use_log_level",
    "wanted",
]

access_logger = logging.getLogger("a2a_core.access")

ACCESS_KEY = "a2a.access"
"""The ASGI scope key holding the request's ``AccessRecord`` (only while the log is on)."""


class AccessRecord:
    """What the endpoints learnt about one request, for its access-log line."""

    __slots__ = (
        "binding",
        "context_id",
        "error",
        "method",
        "operation",
        "started",
        "state",
        "status",
        "task_id",
        "version",
    )

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.binding = "-"
        self.method: str | None = None
        """The method as the caller named it (``message/send``, ``SendMessage``)."""
        self.operation: str | None = None
        """The A2A operation (``SendMessage``), whatever the binding and version."""
        self.version: str | None = None
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state: str | None = None
        self.error: int | None = None
        self.status = 0

    def request(self, request: Any) -> None:
        """The task id a decoded request names (get, cancel, subscribe, push configs, reply)."""
        message = getattr(request, "message", None)
        found = (
            getattr(message, "task_id", None)
            if message is not None
            else getattr(request, "task_id", None) or getattr(request, "id", None)
        )
        if isinstance(found, str):
            self.task_id = found
        context_id = getattr(message, "context_id", None) if message is not None else None
        if isinstance(context_id, str) and context_id:
            self.context_id = context_id

    def result(self, result: Any) -> None:
        """The task id and state of an answer (a Task, a Message, a stream event)."""
        if isinstance(result, Task):
            self.task_id = result.id
            self.context_id = result.context_id
            self.state = _state(result.status.state)
        elif isinstance(result, TaskStatusUpdateEvent):
            self.task_id = result.task_id
            self.context_id = result.context_id
            self.state = _state(result.status.state)
        elif isinstance(result, Message):
            self.task_id = result.task_id or self.task_id
            self.context_id = result.context_id or self.context_id
        else:
            task_id = getattr(result, "task_id", None)
            if isinstance(task_id, str):
                self.task_id = task_id

    def log(self, scope: Scope) -> None:
        duration = (time.perf_counter() - self.started) * 1000
        client = scope.get("client")
        who = f"{client[0]}:{client[1]}" if client else "-"
        query = scope.get("query_string", b"")
        target = scope.get("path", "")
        if query:
            target += "?" + query.decode("latin-1")
        outcome = self.state or (f"error {self.error}" if self.error is not None else "-")
        method = self.method or "-"
        if self.version:
            method = f"{method} ({self.version})"
        ids = _telemetry.trace_ids()
        trace_id, span_id = ids if ids is not None else (None, None)
        access_logger.info(
            '%s "%s %s" %s %s task=%s %d %s %.1fms%s',
            who,
            scope.get("method", "-"),
            target,
            self.binding,
            method,
            self.task_id or "-",
            self.status,
            outcome,
            duration,
            f" trace={trace_id} span={span_id}" if ids is not None else "",
            extra={
                "client_address": who,
                "http_method": scope.get("method", "-"),
                "http_target": target,
                "trace_id": trace_id,
                "span_id": span_id,
                "a2a_binding": self.binding,
                "a2a_method": self.method,
                "a2a_version": self.version,
                "a2a_task_id": self.task_id,
                "a2a_context_id": self.context_id,
                "a2a_state": self.state,
                "a2a_error": self.error,
                "http_status": self.status,
                "duration_ms": round(duration, 3),
            },
        )


def label(scope: Scope, binding: str) -> None:
    """Name what answered a request that is not an A2A call (``card``, ``page``)."""
    access: AccessRecord | None = scope.get(ACCESS_KEY)
    if access is not None:
        access.binding = binding


def use_log_level(level: str | int, log_format: str = "text") -> None:
    """Log ``a2a_core`` (the access log included, at ``info``) at ``level``, as uvicorn's.

    Servers started by ``serve``/``a2a serve`` call this with their ``log_level``.
    When the process has no logging configured (no handler on the root or the
    ``a2a_core`` logger), a stderr handler is added so that the lines show;
    ``log_format="json"`` makes it write one JSON object per line
    (``JsonLogFormatter``), and switches a handler added earlier to it.
    """
    if log_format not in ("text", "json"):
        raise ValueError("log_format must be 'text' or 'json'")
    core = logging.getLogger("a2a_core")
    core.setLevel(level.upper() if isinstance(level, str) else level)
    formatter = (
        JsonLogFormatter()
        if log_format == "json"
        else logging.Formatter("%(levelname)s:     %(name)s: %(message)s")
    )
    ours = [h for h in core.handlers if getattr(h, _OURS, False)]
    if ours:
        for handler in ours:
            handler.setFormatter(formatter)
    elif not core.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        setattr(handler, _OURS, True)
        handler.setFormatter(formatter)
        core.addHandler(handler)


_OURS = "_a2a_core_handler"

_RECORD_FIELDS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the record's extras.

    The access log's extras (``a2a_method``, ``http_status``, ``duration_ms``,
    ``trace_id``, ``span_id`` ...) become fields, so a log store can join a
    line to its trace. Other records get the current trace ids when telemetry is on.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and not key.startswith("_") and value is not None:
                entry[key] = value
        if "trace_id" not in entry:
            ids = _telemetry.trace_ids()
            if ids is not None:
                entry["trace_id"], entry["span_id"] = ids
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, separators=(",", ":"))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime(datefmt or "%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))


def _state(state: Any) -> str:
    return str(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


class RecordedEvents:
    """A ``ServerStream`` that notes each event's task id and state (only while logging).

    Everything else is the service's stream's: ids, encoded bytes, its end, its close.
    """

    __slots__ = ("_events", "_hooks", "_record")

    def __init__(self, events: ServerStream, record: AccessRecord) -> None:
        self._events = events
        self._record = record
        self._hooks = _telemetry.active
        if self._hooks is not None:
            self._hooks.stream_opened()

    def __aiter__(self) -> RecordedEvents:
        return self

    async def __anext__(self) -> StreamEvent:
        try:
            event = await anext(self._events)
        except A2AError as exc:  # sent as the stream's last event
            self._record.error = exc.code
            raise
        self._record.result(event)
        return event

    @property
    def event_id(self) -> int | None:
        return self._events.event_id

    @property
    def encoded(self) -> bytes | None:
        return self._events.encoded

    def next_ready(self) -> StreamEvent | None:
        event = self._events.next_ready()
        if event is not None:
            self._record.result(event)
        return event

    def ends(self) -> bool:
        return self._events.ends()

    async def aclose(self) -> None:
        try:
            await self._events.aclose()
        finally:
            hooks, self._hooks = self._hooks, None
            if hooks is not None:
                hooks.stream_closed()


def wanted() -> bool:
    """Whether requests need an ``AccessRecord``: the access log or telemetry is on."""
    return _telemetry.active is not None or access_logger.isEnabledFor(logging.INFO)


async def logged(app: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` for one request with an ``AccessRecord`` in its scope, then log the line.

    With telemetry on, the request runs inside its SERVER span (continuing the
    caller's trace), which the record names and attributes at the end.
    """
    record = AccessRecord()
    scope[ACCESS_KEY] = record
    hooks = _telemetry.active
    span = hooks.server_start(scope) if hooks is not None else None

    async def recording_send(message: Any) -> None:
        if message["type"] == "http.response.start":
            record.status = message["status"]
        await send(message)

    try:
        await app(scope, receive, recording_send)
    finally:
        try:
            if access_logger.isEnabledFor(logging.INFO):
                record.log(scope)
        finally:
            if span is not None and hooks is not None:
                hooks.server_end(span, record)
