"""The OpenTelemetry implementation behind ``a2a_core.telemetry`` (loaded by ``enable()``).

Every hook the client and server call lives on ``Telemetry``; callers reach it
as ``telemetry.active`` and skip it when that is None, so nothing here is
imported while telemetry is off.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..errors import A2AError
from ..types import Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from .metrics import Instruments, core_version

__all__ = ["RPC_SERVICE", "ServerSpan", "Telemetry", "state_name"]

RPC_SERVICE = "lf.a2a.v1.A2AService"
"""``rpc.service`` of every A2A span (the gRPC service name of A2A 1.0)."""

_RPC_SYSTEM = {"JSONRPC": "jsonrpc", "GRPC": "grpc", "HTTP+JSON": "http", "INPROCESS": "a2a"}


def state_name(state: TaskState | str) -> str:
    """``completed``, ``input-required``: a task state as the access log writes it."""
    return str(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _text(parts: Any) -> str:
    return " ".join(p.text for p in parts or () if getattr(p, "text", None))


class ServerSpan:
    """One SERVER span while its request runs (the context it made current, to restore)."""

    __slots__ = ("method", "span", "started", "token")

    def __init__(self, span: Span, token: object, method: str = "") -> None:
        self.span = span
        self.token = token
        self.method = method
        self.started = time.perf_counter()


class Telemetry:
    """Tracer, propagator and instruments, and the hooks that use them."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        baggage: bool = False,
        record_content: bool = False,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.tracer = trace.get_tracer("a2a_core", core_version(), tracer_provider=tracer_provider)
        propagators: list[TextMapPropagator] = [TraceContextTextMapPropagator()]
        if baggage:
            propagators.append(W3CBaggagePropagator())
        self.propagator = CompositePropagator(propagators)
        self.fields = frozenset(self.propagator.fields)
        self.record_content = record_content
        self.metrics = Instruments(meter_provider)

    # -- context ----------------------------------------------------------------------
    def get_tracer(self, name: str) -> trace.Tracer:
        """A tracer of the same provider as the A2A spans (for the framework adapters)."""
        return trace.get_tracer(name, tracer_provider=self.tracer_provider)

    def trace_ids(self) -> tuple[str, str] | None:
        found = trace.get_current_span().get_span_context()
        if not found.is_valid:
            return None
        return format(found.trace_id, "032x"), format(found.span_id, "016x")

    def inject(self, headers: dict[str, str], ctx: Any = None) -> dict[str, str]:
        """Add the W3C headers of ``ctx`` (default: the current context) to ``headers``."""
        self.propagator.inject(headers, context=ctx)
        return headers

    def extract(self, headers: Mapping[str, str]) -> Any:
        """The context a caller's headers (lower-case names) carry."""
        return self.propagator.extract({k: v for k, v in headers.items() if k in self.fields})

    def current(self) -> Any:
        """The current context, to carry to work that runs later (push deliveries)."""
        return otel_context.get_current()

    # -- client -----------------------------------------------------------------------
    def _client_span(self, transport: Any, op: str) -> Span:
        binding = str(getattr(transport, "binding", "") or "")
        attributes: dict[str, Any] = {
            "rpc.system": _RPC_SYSTEM.get(binding, "a2a"),
            "rpc.service": RPC_SERVICE,
            "rpc.method": op,
            "a2a.method": op,
            "a2a.binding": binding,
            "a2a.protocol.version": str(getattr(transport, "version", "")),
        }
        url = getattr(transport, "url", None)
        if isinstance(url, str) and "://" in url:
            parts = urlsplit(url)
            if parts.hostname:
                attributes["server.address"] = parts.hostname
            if parts.port:
                attributes["server.port"] = parts.port
            if binding != "GRPC":
                attributes["url.full"] = url
        return self.tracer.start_span(
            f"{RPC_SERVICE}/{op}", kind=SpanKind.CLIENT, attributes=attributes
        )

    def _with_trace(self, span: Span, options: Any) -> Any:
        # ``options`` is the client's ``CallOptions`` (never None here): a copy carrying
        # the trace headers, so a stream's position and a forwarded credential stay.
        headers = self.inject({}, trace.set_span_in_context(span))
        return dataclasses.replace(options, headers={**(options.headers or {}), **headers})

    def _note_result(self, span: Span, result: Any) -> None:
        if isinstance(result, Task):
            span.set_attribute("a2a.task.id", result.id)
            span.set_attribute("a2a.context.id", result.context_id)
            span.set_attribute("a2a.task.state", state_name(result.status.state))
        elif isinstance(result, Message):
            if result.task_id:
                span.set_attribute("a2a.task.id", result.task_id)
            if result.context_id:
                span.set_attribute("a2a.context.id", result.context_id)
        elif isinstance(result, TaskStatusUpdateEvent):
            span.set_attribute("a2a.task.id", result.task_id)
            span.set_attribute("a2a.context.id", result.context_id)
            span.set_attribute("a2a.task.state", state_name(result.status.state))
            span.add_event("a2a.task.status", self._status_event(result, None))
        elif isinstance(result, TaskArtifactUpdateEvent):
            span.add_event("a2a.task.artifact", self._artifact_event(result))

    def _failed(self, span: Span, exc: BaseException) -> None:
        if isinstance(exc, A2AError):
            span.set_attribute("a2a.error.code", exc.code)
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        elif not isinstance(exc, GeneratorExit):
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))

    async def client_call(
        self,
        transport: Any,
        op: Any,
        request: Any,
        options: Any,
        call: Callable[[Any, Any, Any], Awaitable[Any]],
    ) -> Any:
        """One unary call under a CLIENT span, its context sent in the headers."""
        name = str(op.value)
        span = self._client_span(transport, name)
        started = time.perf_counter()
        outcome = "ok"
        try:
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                result = await call(op, request, self._with_trace(span, options))
            self._note_result(span, result)
            return result
        except BaseException as exc:
            outcome = "error"
            self._failed(span, exc)
            raise
        finally:
            span.end()
            self._client_time(transport, name, started, outcome)

    def _client_time(self, transport: Any, op: str, started: float, outcome: str) -> None:
        self.metrics.client_duration.record(
            time.perf_counter() - started,
            {"a2a.operation": op, "a2a.binding": str(transport.binding), "a2a.outcome": outcome},
        )

    async def client_stream(
        self,
        transport: Any,
        op: Any,
        request: Any,
        options: Any,
        open_stream: Callable[[Any, Any, Any], Awaitable[AsyncGenerator[Any]]],
    ) -> AsyncGenerator[Any]:
        """Open a stream under a CLIENT span that ends with the stream (and is timed to then)."""
        name = str(op.value)
        span = self._client_span(transport, name)
        started = time.perf_counter()
        try:
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                events = await open_stream(op, request, self._with_trace(span, options))
        except BaseException as exc:
            self._failed(span, exc)
            span.end()
            self._client_time(transport, name, started, "error")
            raise
        return self._client_events(
            span, events, lambda outcome: self._client_time(transport, name, started, outcome)
        )

    async def _client_events(
        self, span: Span, events: AsyncGenerator[Any], timed: Callable[[str], None]
    ) -> AsyncGenerator[Any]:
        outcome = "ok"
        try:
            async for event in events:
                self._note_result(span, event)
                yield event
        except GeneratorExit:
            raise  # the caller stopped reading: not an error of the call
        except BaseException as exc:
            outcome = "error"
            self._failed(span, exc)
            raise
        finally:
            try:
                await events.aclose()
            finally:
                span.end()
                timed(outcome)

    # -- server -----------------------------------------------------------------------
    def server_start(self, scope: Mapping[str, Any]) -> ServerSpan:
        """Start the SERVER span of an HTTP request in the caller's trace, and make it current."""
        carrier: dict[str, str] = {}
        for key, value in scope.get("headers", ()):
            name = key.decode("latin-1")
            if name in self.fields:
                carrier[name] = value.decode("latin-1")
        parent = self.propagator.extract(carrier)
        method = str(scope.get("method", "-"))
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "url.path": str(scope.get("path", "")),
            "url.scheme": str(scope.get("scheme", "http")),
            "network.protocol.version": str(scope.get("http_version", "1.1")),
        }
        client = scope.get("client")
        if client:
            attributes["client.address"] = str(client[0])
        server = scope.get("server")
        if server:
            attributes["server.address"] = str(server[0])
            if server[1] is not None:
                attributes["server.port"] = int(server[1])
        span = self.tracer.start_span(
            method, context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        return ServerSpan(span, token, method)

    def server_end(self, handle: ServerSpan, record: Any) -> None:
        """Name and attribute the SERVER span from what the endpoint learnt; end it."""
        span = handle.span
        duration = time.perf_counter() - handle.started
        operation: str | None = record.operation
        binding: str = record.binding
        try:
            if operation is not None:
                span.update_name(f"{RPC_SERVICE}/{operation}")
                span.set_attribute("rpc.system", _RPC_SYSTEM.get(binding, "a2a"))
                span.set_attribute("rpc.service", RPC_SERVICE)
                span.set_attribute("rpc.method", operation)
            elif binding != "-":
                span.update_name(f"{handle.method} {binding}")
            span.set_attribute("a2a.binding", binding)
            if record.method:
                span.set_attribute("a2a.method", record.method)
            if record.version:
                span.set_attribute("a2a.protocol.version", record.version)
            if record.task_id:
                span.set_attribute("a2a.task.id", record.task_id)
            if record.context_id:
                span.set_attribute("a2a.context.id", record.context_id)
            if record.state:
                span.set_attribute("a2a.task.state", record.state)
            if record.status:
                span.set_attribute("http.response.status_code", record.status)
            outcome = "ok"
            if record.error is not None:
                outcome = "error"
                span.set_attribute("a2a.error.code", record.error)
                span.set_status(Status(StatusCode.ERROR, f"A2A error {record.error}"))
            elif record.status >= 500:
                outcome = "error"
                span.set_status(Status(StatusCode.ERROR, f"HTTP {record.status}"))
            span.end()
        finally:
            otel_context.detach(handle.token)  # type: ignore[arg-type]
        attributes: dict[str, Any] = {
            "a2a.operation": operation or binding,
            "a2a.binding": binding,
            "a2a.outcome": outcome,
        }
        if record.error is not None:
            attributes["a2a.error.code"] = record.error
        self.metrics.requests.add(1, attributes)
        self.metrics.request_duration.record(duration, attributes)

    def grpc_start(self, op: Any, headers: Mapping[str, str]) -> ServerSpan:
        """Start the SERVER span of a gRPC call from its metadata, and make it current."""
        name = str(op.value)
        span = self.tracer.start_span(
            f"{RPC_SERVICE}/{name}",
            context=self.extract(headers),
            kind=SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc",
                "rpc.service": RPC_SERVICE,
                "rpc.method": name,
                "a2a.method": name,
                "a2a.binding": "GRPC",
                "a2a.protocol.version": "1.0",
            },
        )
        return ServerSpan(span, otel_context.attach(trace.set_span_in_context(span)))

    def grpc_end(
        self, handle: ServerSpan, op: Any, result: Any, error: BaseException | None
    ) -> None:
        """End a gRPC SERVER span (``result``: the answer or the last event)."""
        span = handle.span
        try:
            if result is not None:
                self._note_result(span, result)
            outcome = "ok"
            attributes: dict[str, Any] = {"a2a.operation": str(op.value), "a2a.binding": "GRPC"}
            if error is not None:
                outcome = "error"
                self._failed(span, error)
                if isinstance(error, A2AError):
                    attributes["a2a.error.code"] = error.code
            attributes["a2a.outcome"] = outcome
            span.end()
        finally:
            otel_context.detach(handle.token)  # type: ignore[arg-type]
        self.metrics.requests.add(1, attributes)
        self.metrics.request_duration.record(time.perf_counter() - handle.started, attributes)

    def stream_opened(self) -> None:
        self.metrics.active_streams.add(1)

    def stream_closed(self) -> None:
        self.metrics.active_streams.add(-1)

    # -- agent runs -------------------------------------------------------------------
    async def run(self, run: Any, work: Coroutine[Any, Any, None]) -> None:
        """An agent's run as its own span: a child of the request that started it, linked to
        it too (a non-blocking send's run outlives its request)."""
        task = run.task
        request = trace.get_current_span().get_span_context()
        span = self.tracer.start_span(
            "a2a.agent.run",
            kind=SpanKind.INTERNAL,
            attributes={"a2a.task.id": task.id, "a2a.context.id": task.context_id},
            links=[Link(request, {"a2a.link": "request"})] if request.is_valid else None,
        )
        run.span = span
        started = time.perf_counter()
        self.metrics.active_tasks.add(1)
        try:
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                await work
        except BaseException as exc:
            self._failed(span, exc)
            raise
        finally:
            state = state_name(run.state)
            span.set_attribute("a2a.task.state", state)
            if run.state is TaskState.FAILED:
                span.set_status(Status(StatusCode.ERROR, "task failed"))
            span.end()
            run.span = None
            self.metrics.active_tasks.add(-1)
            self.metrics.tasks.add(1, {"a2a.task.state": state})
            self.metrics.task_duration.record(
                time.perf_counter() - started, {"a2a.task.state": state}
            )

    def _status_event(
        self, event: TaskStatusUpdateEvent, previous: TaskState | None
    ) -> dict[str, Any]:
        attributes: dict[str, Any] = {"a2a.task.state": state_name(event.status.state)}
        if previous is not None:
            attributes["a2a.task.previous_state"] = state_name(previous)
        if self.record_content and event.status.message is not None:
            attributes["a2a.message.text"] = _text(event.status.message.parts)
        return attributes

    def _artifact_event(self, event: TaskArtifactUpdateEvent) -> dict[str, Any]:
        artifact = event.artifact
        attributes: dict[str, Any] = {
            "a2a.artifact.id": artifact.artifact_id,
            "a2a.artifact.parts": len(artifact.parts),
            "a2a.artifact.append": bool(event.append),
            "a2a.artifact.last_chunk": bool(event.last_chunk),
        }
        if artifact.name:
            attributes["a2a.artifact.name"] = artifact.name
        if self.record_content:
            attributes["a2a.artifact.text"] = _text(artifact.parts)
        return attributes

    def task_event(self, span: Span, event: Any, previous: TaskState | None) -> None:
        """A status change or an artifact of a run, as an event on its span."""
        if isinstance(event, TaskStatusUpdateEvent):
            span.add_event("a2a.task.status", self._status_event(event, previous))
        elif isinstance(event, TaskArtifactUpdateEvent):
            span.add_event("a2a.task.artifact", self._artifact_event(event))

    # -- push ---------------------------------------------------------------------------
    def push_start(self, carried: Any, origin: str, task_id: str) -> tuple[Span, dict[str, str]]:
        """A CLIENT span for one push delivery in the task's trace, and its headers."""
        span = self.tracer.start_span(
            "a2a.push",
            context=carried,
            kind=SpanKind.CLIENT,
            attributes={
                "a2a.task.id": task_id,
                "server.address": origin,
                "http.request.method": "POST",
            },
        )
        return span, self.inject({}, trace.set_span_in_context(span))

    def push_end(self, span: Span | None, delivered: bool) -> None:
        if span is not None:
            if not delivered:
                span.set_status(Status(StatusCode.ERROR, "push not delivered"))
            span.end()
        self.metrics.push_deliveries.add(
            1, {"a2a.push.outcome": "delivered" if delivered else "failed"}
        )

    # -- stores -------------------------------------------------------------------------
    def store_time(self, operation: str, store: str, seconds: float) -> None:
        self.metrics.store_duration.record(
            seconds, {"a2a.store.operation": operation, "a2a.store": store}
        )
