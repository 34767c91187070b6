"""CrewAI's event bus as A2A progress, filtered to each request's own crew copy.

The bus is one per process, so a handler sees every crew's events. Ours are
registered once and route each event to the run it belongs to: the run
bound in the emitting context (CrewAI copies ``contextvars`` into its
threads and handlers), and only for agents of that run's crew copy. The
handlers are ``async`` on purpose: CrewAI runs them one after another on its
event loop thread, in emission order, whereas sync handlers run on a thread
pool and can overtake each other.
"""

from __future__ import annotations

import threading
from typing import Any, cast

from a2a_core.types import Part

from ._files import output_file_part
from ._runs import Chunk, CrewRun, Progress, TaskDone, current_run

__all__ = ["install", "output_parts", "short", "structured"]

_installed = False
_lock = threading.Lock()


def short(text: object, limit: int = 120) -> str:
    """One line of at most ``limit`` characters (for status messages)."""
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "\u2026"


def output_parts(raw: str, data: object = None) -> list[Part]:
    """An output as parts: its text, then its structured form when it has one."""
    parts = [Part(text=raw)] if raw else []
    if isinstance(data, dict) and data:
        parts.append(Part(data=data))
    return parts or [Part(text="(no output)")]


def structured(output: Any) -> object:
    """A task's or crew's structured output (``output_json`` / ``output_pydantic``) as data."""
    data = getattr(output, "json_dict", None)
    if isinstance(data, dict) and data:
        return cast(dict[str, Any], data)
    model = getattr(output, "pydantic", None)
    dump = getattr(model, "model_dump", None)
    return dump(mode="json") if callable(dump) else None


def _run_for(event: Any, agent: Any = None) -> CrewRun | None:
    run = current_run()
    if run is None:
        return None
    agent_id = getattr(agent, "id", None) if agent is not None else getattr(event, "agent_id", None)
    return run if run.owns_agent(agent_id) else None


def _task_index(run: CrewRun, event: Any) -> int | None:
    task_id = getattr(event, "task_id", None)
    return run.task_ids.get(str(task_id)) if task_id is not None else None


def _where(run: CrewRun, index: int | None) -> str:
    return f"task {index}/{run.task_count}" if index is not None and run.task_count > 1 else ""


def _meta(kind: str, **fields: Any) -> dict[str, Any]:
    return {"crewai": {"event": kind, **{k: v for k, v in fields.items() if v is not None}}}


async def _task_started(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None:
        return
    index = _task_index(run, event)
    if index is None:
        return  # not one of the crew's own tasks (e.g. a delegated sub-task)
    task = getattr(event, "task", None)
    role = getattr(getattr(task, "agent", None), "role", None)
    name = short(getattr(event, "task_name", None) or "", 80)
    text = f"Task {index}/{run.task_count} started: {name}" if name else f"Task {index} started"
    if role:
        text += f" ({short(role, 60)})"
    run.push(Progress(text, _meta("task_started", task=index, agent=role)))


async def _task_completed(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None:
        return
    index = _task_index(run, event)
    if index is None:
        return
    output = event.output
    task = getattr(event, "task", None)
    raw = str(getattr(output, "raw", "") or "")
    name = str(getattr(task, "name", None) or f"task {index}")
    description = short(getattr(output, "description", None) or event.task_name or "", 200)
    parts = output_parts(raw, structured(output))
    written = output_file_part(task)
    if written is not None:
        run.output_files[index] = written
        parts.append(written)
    run.push(TaskDone(index, name, description, parts, raw))
    run.push(
        Progress(
            f"Task {index}/{run.task_count} completed",
            _meta("task_completed", task=index, agent=getattr(output, "agent", None)),
        )
    )


async def _agent_started(source: Any, event: Any) -> None:
    agent = getattr(event, "agent", None)
    run = _run_for(event, agent)
    if run is None:
        return
    index = run.task_ids.get(str(getattr(getattr(event, "task", None), "id", "")))
    role = short(getattr(agent, "role", "agent"), 60)
    where = _where(run, index)
    run.push(
        Progress(
            f"{role} is working" + (f" on {where}" if where else ""),
            _meta("agent_started", task=index, agent=role),
        )
    )


async def _agent_step(source: Any, event: Any) -> None:
    run = current_run()
    if run is None or not run.owns_agent(getattr(source, "id", None)):
        return
    answer = getattr(event, "formatted_answer", None)
    kind = type(answer).__name__
    role = short(event.agent_role, 60)
    if kind == "AgentAction":
        text = f"{role} decided to use {short(getattr(answer, 'tool', ''), 60)}"
    elif kind == "AgentFinish":
        text = f"{role} has an answer"
    else:
        return
    run.push(Progress(text, _meta("agent_step", agent=role, step=kind)))


async def _tool_started(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None:
        return
    role = short(event.agent_role or "agent", 60)
    tool = short(event.tool_name, 64)
    run.push(
        Progress(
            f"{role} is using the tool {tool}",
            _meta("tool_started", tool=tool, agent=role, task=_task_index(run, event)),
        )
    )


async def _tool_finished(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None:
        return
    tool = short(event.tool_name, 64)
    run.push(
        Progress(
            f"The tool {tool} answered",
            _meta("tool_finished", tool=tool, task=_task_index(run, event)),
        )
    )


async def _tool_error(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None:
        return
    tool = short(event.tool_name, 64)
    # The error text stays out: it may hold internals; the agent sees it and may retry.
    run.push(
        Progress(
            f"The tool {tool} failed",
            _meta("tool_error", tool=tool, task=_task_index(run, event)),
        )
    )


async def _stream_chunk(source: Any, event: Any) -> None:
    run = _run_for(event)
    if run is None or getattr(event, "tool_call", None) is not None or not event.chunk:
        return
    if run.flow is not None:
        return  # a flow's answer is its last step's return value, not a model's tokens
    run.push(Chunk(_task_index(run, event), event.chunk))


def _flow_run(source: Any) -> CrewRun | None:
    run = current_run()
    return run if run is not None and run.flow is not None and source is run.flow else None


async def _step_started(source: Any, event: Any) -> None:
    run = _flow_run(source)
    if run is not None:
        step = short(event.method_name, 80)
        run.push(Progress(f"Step {step} started", _meta("step_started", step=step)))


async def _step_finished(source: Any, event: Any) -> None:
    run = _flow_run(source)
    if run is not None:
        step = short(event.method_name, 80)
        run.push(Progress(f"Step {step} finished", _meta("step_finished", step=step)))


async def _step_failed(source: Any, event: Any) -> None:
    run = _flow_run(source)
    if run is not None:
        step = short(event.method_name, 80)  # the error stays out, as for tools
        run.push(Progress(f"Step {step} failed", _meta("step_failed", step=step)))


def install() -> None:
    """Register the handlers on CrewAI's event bus (once per process)."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        from crewai.events import crewai_event_bus
        from crewai.events.types.agent_events import AgentExecutionStartedEvent
        from crewai.events.types.flow_events import (
            MethodExecutionFailedEvent,
            MethodExecutionFinishedEvent,
            MethodExecutionStartedEvent,
        )
        from crewai.events.types.llm_events import LLMStreamChunkEvent
        from crewai.events.types.logging_events import AgentLogsExecutionEvent
        from crewai.events.types.task_events import TaskCompletedEvent, TaskStartedEvent
        from crewai.events.types.tool_usage_events import (
            ToolUsageErrorEvent,
            ToolUsageFinishedEvent,
            ToolUsageStartedEvent,
        )

        handlers: list[tuple[Any, Any]] = [
            (TaskStartedEvent, _task_started),
            (TaskCompletedEvent, _task_completed),
            (AgentExecutionStartedEvent, _agent_started),
            (AgentLogsExecutionEvent, _agent_step),
            (ToolUsageStartedEvent, _tool_started),
            (ToolUsageFinishedEvent, _tool_finished),
            (ToolUsageErrorEvent, _tool_error),
            (LLMStreamChunkEvent, _stream_chunk),
            (MethodExecutionStartedEvent, _step_started),
            (MethodExecutionFinishedEvent, _step_finished),
            (MethodExecutionFailedEvent, _step_failed),
        ]
        for event_type, handler in handlers:
            crewai_event_bus.on(event_type)(handler)
        _installed = True
