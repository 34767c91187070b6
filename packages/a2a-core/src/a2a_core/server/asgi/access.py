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

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from ...errors import A2AError
from ...types import Message, StreamEvent, Task, TaskStatusUpdateEvent
from .http import Receive, Scope, Send
from .sse import close_events

__all__ = [
    "ACCESS_KEY",
    "AccessRecord",
    "RecordedEvents",
    "access_logger",
    "label",
    "logged",
    "use_log_level",
]

access_logger = logging.getLogger("a2a_core.access")

ACCESS_KEY = "a2a.access"
"""The ASGI scope key holding the request's ``AccessRecord`` (only while the log is on)."""


class AccessRecord:
    """What the endpoints learnt about one request, for its access-log line."""

    __slots__ = ("binding", "error", "method", "started", "state", "status", "task_id", "version")

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.binding = "-"
        self.method: str | None = None
        self.version: str | None = None
        self.task_id: str | None = None
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

    def result(self, result: Any) -> None:
        """The task id and state of an answer (a Task, a Message, a stream event)."""
        if isinstance(result, Task):
            self.task_id = result.id
            self.state = _state(result.status.state)
        elif isinstance(result, TaskStatusUpdateEvent):
            self.task_id = result.task_id
            self.state = _state(result.status.state)
        elif isinstance(result, Message):
            self.task_id = result.task_id or self.task_id
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
        access_logger.info(
            '%s "%s %s" %s %s task=%s %d %s %.1fms',
            who,
            scope.get("method", "-"),
            target,
            self.binding,
            method,
            self.task_id or "-",
            self.status,
            outcome,
            duration,
            extra={
                "a2a_binding": self.binding,
                "a2a_method": self.method,
                "a2a_version": self.version,
                "a2a_task_id": self.task_id,
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


def use_log_level(level: str | int) -> None:
    """Log ``a2a_core`` (the access log included, at ``info``) at ``level``, as uvicorn's.

    Servers started by ``serve``/``a2a serve`` call this with their ``log_level``.
    When the process has no logging configured (no handler on the root or the
    ``a2a_core`` logger), a stderr handler is added so that the lines show.
    """
    core = logging.getLogger("a2a_core")
    core.setLevel(level.upper() if isinstance(level, str) else level)
    if not core.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
        core.addHandler(handler)


def _state(state: Any) -> str:
    return str(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


class RecordedEvents:
    """A stream's events, noting each one's task id and state (only while logging).

    Closing it closes the service's stream the way ``close_events`` does, so
    the subscription behind it is released even when no event was read.
    """

    __slots__ = ("_events", "_record", "_started")

    def __init__(self, events: AsyncIterator[StreamEvent], record: AccessRecord) -> None:
        self._events = events
        self._record = record
        self._started = False

    def __aiter__(self) -> RecordedEvents:
        return self

    async def __anext__(self) -> StreamEvent:
        self._started = True
        try:
            event = await anext(self._events)
        except A2AError as exc:  # sent as the stream's last event
            self._record.error = exc.code
            raise
        self._record.result(event)
        return event

    async def aclose(self) -> None:
        await close_events(self._events, started=self._started)


async def logged(app: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` for one request with an ``AccessRecord`` in its scope, then log the line."""
    record = AccessRecord()
    scope[ACCESS_KEY] = record

    async def recording_send(message: Any) -> None:
        if message["type"] == "http.response.start":
            record.status = message["status"]
        await send(message)

    try:
        await app(scope, receive, recording_send)
    finally:
        record.log(scope)
