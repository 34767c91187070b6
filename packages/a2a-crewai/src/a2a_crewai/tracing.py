"""CrewAI's event bus as OpenTelemetry spans, inside the A2A trace a crew serves or calls from.

``install_tracing()`` registers handlers (once per process) that turn a crew's
kickoff, tasks, agent executions, tool calls and model calls into spans while
``a2a_core.telemetry`` is enabled. Serving a crew and building a remote-agent
tool install them. A span's parent is the span of the event's CrewAI scope
(``parent_event_id``: a task inside its crew, a tool call inside its agent's
execution); a crew's own parent is the span current where it was kicked off
(the A2A agent run when served). Prompts, tool arguments and outputs are never
recorded.

The handlers are ``async``: CrewAI runs those one after another on its event
loop thread, in emission order (sync ones run on a pool and can overtake each
other), with the emitting thread's context. A remote-agent tool call waits
briefly for its tool span (``tool_span_context``) so that it can be the parent
of the A2A client call.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from a2a_core import telemetry

__all__ = ["install_tracing", "tool_span_context"]

_SPANS: dict[str, Any] = {}
"""Open spans by the CrewAI event id that started them."""
_OWNERS: dict[tuple[str, str, str], Any] = {}
"""Open task and agent-execution spans by (kind, task id, agent id): parents of last resort."""
_OWNED: dict[str, tuple[str, str, str]] = {}
_CHANGED = threading.Condition()
_installed = False
_WAIT_SECONDS = 2.0


def _label(event: Any) -> tuple[str, dict[str, Any]]:
    kind = str(getattr(event, "type", ""))
    attributes: dict[str, Any] = {"crewai.event": kind}
    if kind == "crew_kickoff_started":
        name = str(getattr(event, "crew_name", None) or "crew")
        attributes["crewai.crew.name"] = name
        return f"crewai.crew {name}", attributes
    if kind == "task_started":
        name = str(getattr(event, "task_name", None) or "task")
        attributes["crewai.task.name"] = name
        if getattr(event, "task_id", None):
            attributes["crewai.task.id"] = str(event.task_id)
        return f"crewai.task {name}", attributes
    if kind == "agent_execution_started":
        agent = getattr(event, "agent", None)
        role = str(getattr(event, "agent_role", None) or getattr(agent, "role", None) or "agent")
        attributes["crewai.agent.role"] = role
        return f"crewai.agent {role}", attributes
    if kind == "tool_usage_started":
        name = str(getattr(event, "tool_name", None) or "tool")
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = name
        return f"execute_tool {name}", attributes
    model = str(getattr(event, "model", None) or "model")
    attributes["gen_ai.operation.name"] = "chat"
    attributes["gen_ai.request.model"] = model
    return f"chat {model}", attributes


def _owner_ids(event: Any) -> tuple[str, str]:
    """(task id, agent id) of an event (an agent execution names them through its objects)."""
    task_id = getattr(event, "task_id", None)
    agent_id = getattr(event, "agent_id", None)
    if not task_id and getattr(event, "task", None) is not None:
        task_id = getattr(event.task, "id", None)
    if not agent_id and getattr(event, "agent", None) is not None:
        agent_id = getattr(event.agent, "id", None)
    return str(task_id or ""), str(agent_id or "")


async def _started(source: Any, event: Any) -> None:
    tracer = telemetry.get_tracer("a2a_crewai")
    if tracer is None:
        return
    from opentelemetry import trace

    parent_id = getattr(event, "parent_event_id", None)
    parent = _SPANS.get(parent_id) if parent_id else None
    task_id, agent_id = _owner_ids(event)
    if parent is None and task_id:
        # A scope of CrewAI's we do not trace in between: the agent's or task's span.
        parent = _OWNERS.get(("agent", task_id, agent_id)) or _OWNERS.get(("task", task_id, ""))
    context = trace.set_span_in_context(parent) if parent is not None else None
    name, attributes = _label(event)
    span = tracer.start_span(name, context=context, attributes=attributes)
    kind = str(getattr(event, "type", ""))
    owner = None
    if kind == "task_started" and task_id:
        owner = ("task", task_id, "")
    elif kind == "agent_execution_started" and task_id:
        owner = ("agent", task_id, agent_id)
    with _CHANGED:
        _SPANS[str(event.event_id)] = span
        if owner is not None:
            _OWNERS[owner] = span
            _OWNED[str(event.event_id)] = owner
        _CHANGED.notify_all()


async def _ended(source: Any, event: Any) -> None:
    started = getattr(event, "started_event_id", None)
    if not started:
        return
    with _CHANGED:
        span = _SPANS.pop(str(started), None)
        owner = _OWNED.pop(str(started), None)
        if owner is not None and _OWNERS.get(owner) is span:
            del _OWNERS[owner]
    if span is None:
        return
    kind = str(getattr(event, "type", ""))
    if kind.endswith(("_failed", "_error")):
        from opentelemetry.trace import Status, StatusCode

        span.set_status(Status(StatusCode.ERROR, kind))
    span.end()


def install_tracing() -> None:
    """Register the span handlers on CrewAI's event bus (once; they idle while telemetry is off)."""
    global _installed
    if _installed:
        return
    with _CHANGED:
        if _installed:
            return
        from crewai.events import crewai_event_bus
        from crewai.events.types.agent_events import (
            AgentExecutionCompletedEvent,
            AgentExecutionErrorEvent,
            AgentExecutionStartedEvent,
        )
        from crewai.events.types.crew_events import (
            CrewKickoffCompletedEvent,
            CrewKickoffFailedEvent,
            CrewKickoffStartedEvent,
        )
        from crewai.events.types.llm_events import (
            LLMCallCompletedEvent,
            LLMCallFailedEvent,
            LLMCallStartedEvent,
        )
        from crewai.events.types.task_events import (
            TaskCompletedEvent,
            TaskFailedEvent,
            TaskStartedEvent,
        )
        from crewai.events.types.tool_usage_events import (
            ToolUsageErrorEvent,
            ToolUsageFinishedEvent,
            ToolUsageStartedEvent,
        )

        for started in (
            CrewKickoffStartedEvent,
            TaskStartedEvent,
            AgentExecutionStartedEvent,
            ToolUsageStartedEvent,
            LLMCallStartedEvent,
        ):
            crewai_event_bus.on(started)(_started)
        for ended in (
            CrewKickoffCompletedEvent,
            CrewKickoffFailedEvent,
            TaskCompletedEvent,
            TaskFailedEvent,
            AgentExecutionCompletedEvent,
            AgentExecutionErrorEvent,
            ToolUsageFinishedEvent,
            ToolUsageErrorEvent,
            LLMCallCompletedEvent,
            LLMCallFailedEvent,
        ):
            crewai_event_bus.on(ended)(_ended)
        _installed = True


@contextlib.contextmanager
def tool_span_context() -> Iterator[None]:
    """Make the span of the CrewAI tool call in progress (this thread's) current.

    The tool span is made on CrewAI's event thread, maybe a moment after the
    tool started: wait for it (bounded), or go on without it.
    """
    if not telemetry.enabled() or not _installed:
        yield
        return
    from crewai.events.event_context import get_current_parent_id

    event_id = get_current_parent_id()
    span = None
    if event_id:
        with _CHANGED:
            _CHANGED.wait_for(lambda: event_id in _SPANS, timeout=_WAIT_SECONDS)
            span = _SPANS.get(event_id)
    if span is None:
        yield
        return
    from opentelemetry import trace

    with trace.use_span(span, end_on_exit=False):
        yield
