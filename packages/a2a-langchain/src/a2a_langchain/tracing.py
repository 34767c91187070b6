"""LangChain runs as OpenTelemetry spans, inside the A2A trace they serve or call from.

``OpenTelemetryCallbackHandler`` turns chain, chat model / LLM, tool and retriever
runs into spans: a run's parent is its parent run's span, and a top-level run's
parent is the span current when it started (the A2A agent run when served). A
served runnable gets one added to its config while ``a2a_core.telemetry`` is
enabled; callbacks the user configured (LangSmith's tracer, their own handlers)
stay as they are, and a handler of this class already in the config is not
doubled. Pass one in ``config={"callbacks": [...]}`` on the calling side so the
remote-agent tool's span is the parent of the A2A client span (and of the remote
server's spans). Prompts and outputs are never recorded.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from uuid import UUID

from a2a_core import telemetry
from langchain_core.callbacks import BaseCallbackHandler

__all__ = ["OpenTelemetryCallbackHandler", "has_handler", "run_span_context"]

_SPANS: dict[UUID, Any] = {}
"""Open spans by LangChain run id (shared by every handler: tools look theirs up)."""
_LOCK = threading.Lock()


def _name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any], default: str) -> str:
    name = kwargs.get("name")
    if isinstance(name, str) and name:
        return name
    if serialized:
        found = serialized.get("name")
        if isinstance(found, str) and found:
            return found
        ids = serialized.get("id")
        if isinstance(ids, list) and ids:
            return str(ids[-1])  # pyright: ignore[reportUnknownArgumentType]
    return default


class OpenTelemetryCallbackHandler(BaseCallbackHandler):
    """Chain, model, tool and retriever runs as spans (a no-op while telemetry is off)."""

    run_inline = True  # called in the run's own task, in order: parents exist before children

    def _start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        name: str,
        kind: str,
        attributes: dict[str, Any],
    ) -> None:
        tracer = telemetry.get_tracer("a2a_langchain")
        if tracer is None:
            return
        from opentelemetry import trace

        parent = _SPANS.get(parent_run_id) if parent_run_id is not None else None
        context = trace.set_span_in_context(parent) if parent is not None else None
        attributes = {"langchain.run.type": kind, "langchain.run.id": str(run_id), **attributes}
        span = tracer.start_span(name, context=context, attributes=attributes)
        with _LOCK:
            _SPANS[run_id] = span

    def _end(self, run_id: UUID, error: BaseException | None = None, **attributes: Any) -> None:
        with _LOCK:
            span = _SPANS.pop(run_id, None)
        if span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        for key, value in attributes.items():
            if value is not None:
                span.set_attribute(key, value)
        if error is not None:
            span.set_attribute("error.type", type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        span.end()

    # -- chains ------------------------------------------------------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._start(run_id, parent_run_id, _name(serialized, kwargs, "chain"), "chain", {})

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        # A LangGraph interrupt is how a graph pauses for input, not a failure.
        failed = None if type(error).__name__ == "GraphInterrupt" else error
        self._end(run_id, failed)

    # -- models ------------------------------------------------------------------------------
    def _model_start(
        self,
        serialized: dict[str, Any] | None,
        run_id: UUID,
        parent_run_id: UUID | None,
        operation: str,
        kwargs: Mapping[str, Any],
    ) -> None:
        params = kwargs.get("invocation_params") or {}
        model = None
        if isinstance(params, Mapping):
            model = params.get("model") or params.get("model_name")  # pyright: ignore[reportUnknownMemberType]
        name = _name(serialized, kwargs, "model")
        attributes: dict[str, Any] = {"gen_ai.operation.name": operation}
        if model:
            attributes["gen_ai.request.model"] = str(model)  # pyright: ignore[reportUnknownArgumentType]
        label = f"{operation} {model or name}"
        self._start(run_id, parent_run_id, label, "llm", attributes)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: Sequence[Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(serialized, run_id, parent_run_id, "chat", kwargs)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: Sequence[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_start(serialized, run_id, parent_run_id, "text_completion", kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        usage: Mapping[str, Any] = {}
        for generations in getattr(response, "generations", None) or ():
            for generation in generations:
                message = getattr(generation, "message", None)
                found = getattr(message, "usage_metadata", None)
                if isinstance(found, Mapping):
                    usage = found  # pyright: ignore[reportUnknownVariableType]
        self._end(
            run_id,
            None,
            **{
                "gen_ai.usage.input_tokens": usage.get("input_tokens"),
                "gen_ai.usage.output_tokens": usage.get("output_tokens"),
            },
        )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    # -- tools and retrievers ----------------------------------------------------------------
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        name = _name(serialized, kwargs, "tool")
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        self._start(run_id, parent_run_id, f"execute_tool {name}", "tool", attributes)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._start(run_id, parent_run_id, _name(serialized, kwargs, "retriever"), "retriever", {})

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)


def has_handler(callbacks: Any) -> bool:
    """Whether ``callbacks`` (a list or a callback manager) already holds our handler."""
    handlers = getattr(callbacks, "handlers", callbacks)
    if not isinstance(handlers, list | tuple):
        return False
    return any(isinstance(h, OpenTelemetryCallbackHandler) for h in handlers)  # pyright: ignore[reportUnknownVariableType]


@contextlib.contextmanager
def run_span_context(run_id: UUID | None) -> Iterator[None]:
    """Make the span of LangChain run ``run_id`` current (a tool's: its ``run_manager.run_id``).

    The tool's span then is the parent of what the tool does (the A2A client
    call, and through it the remote agent's spans). Without telemetry or a
    handler on the run this does nothing.
    """
    span = _SPANS.get(run_id) if run_id is not None else None
    if span is None:
        yield
        return
    from opentelemetry import trace

    with trace.use_span(span, end_on_exit=False):
        yield
