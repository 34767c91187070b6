"""A served flow's human steps as A2A input-required: ``@human_feedback`` and ``Flow.ask()``.

CrewAI asks a flow's human on the console unless a provider is configured.
Inside a served flow these providers ask the A2A client instead: the task
goes INPUT_REQUIRED with the step's output and its question (and the
outcomes, when the step routes on them), the worker thread waits, and the
next message on the same task is the answer (a flow kicked off inside a
served crew or flow asks the same client), given to CrewAI as the human's
text (``@human_feedback`` then maps it onto an outcome with its ``llm``, as it
does for a console answer). Outside a served flow the console (or the
provider configured before) answers, as without this package.

``@human_feedback(provider=...)`` named on a step, and a flow's own
``input_provider``, are the user's choice and are kept.
"""

from __future__ import annotations

import threading
from typing import Any

from ._events import short
from ._runs import current_run

__all__ = ["A2AFlowFeedback", "A2AFlowInput", "feedback_question", "install_providers"]

_lock = threading.Lock()


def _render(output: Any) -> str:
    dump = getattr(output, "model_dump_json", None)
    return str(dump()) if callable(dump) else str(output)


def feedback_question(output: Any, message: str, outcomes: list[str] | None) -> str:
    """The input-required text: what the step produced, its question, the possible replies."""
    text = f"{_render(output)}\n\n{message}".strip()
    if outcomes:
        return f"{text}\n\nReply with one of: {', '.join(outcomes)} (or say it in your own words)."
    return f"{text}\n\nReply with your feedback."


class A2AFlowFeedback:
    """``@human_feedback`` asks the A2A client when the step runs in a served flow."""

    def __init__(self, previous: Any = None) -> None:
        self.previous = previous
        """The provider configured before (asked outside served flows; None: the console)."""

    def request_feedback(self, context: Any, flow: Any) -> str:
        run = current_run()
        if run is None:  # not in a served request: as without this package
            if self.previous is not None:
                return self.previous.request_feedback(context, flow)
            return flow._request_human_feedback(  # what CrewAI does with no provider
                message=context.message,
                output=context.method_output,
                metadata=context.metadata,
                emit=context.emit,
                method_name=context.method_name,
            )
        from crewai.events import crewai_event_bus
        from crewai.events.types.flow_events import (
            HumanFeedbackReceivedEvent,
            HumanFeedbackRequestedEvent,
        )

        name = flow.name or type(flow).__name__
        crewai_event_bus.emit(
            flow,
            HumanFeedbackRequestedEvent(
                type="human_feedback_requested",
                flow_name=name,
                method_name=context.method_name,
                output=context.method_output,
                message=context.message,
                emit=context.emit,
            ),
        )
        outcomes = list(context.emit) if context.emit else None
        metadata: dict[str, Any] = {
            "event": "human_feedback",
            "step": short(context.method_name, 80),
        }
        if outcomes:
            metadata["outcomes"] = outcomes
        question = feedback_question(context.method_output, context.message, outcomes)
        feedback = run.ask(question, {"crewai": metadata}).strip()
        crewai_event_bus.emit(
            flow,
            HumanFeedbackReceivedEvent(
                type="human_feedback_received",
                flow_name=name,
                method_name=context.method_name,
                feedback=feedback,
                outcome=None,
            ),
        )
        return feedback


class A2AFlowInput:
    """``Flow.ask()`` asks the A2A client when the flow runs in a served request."""

    def __init__(self, previous: Any = None) -> None:
        self.previous = previous
        """The provider configured before (asked outside served flows; None: the console)."""

    def request_input(
        self, message: str, flow: Any, metadata: dict[str, Any] | None = None
    ) -> str | None:
        run = current_run()
        if run is None:  # not in a served request: as without this package
            if self.previous is not None:
                return self.previous.request_input(message, flow, metadata=metadata)
            from crewai.flow.async_feedback.providers import ConsoleProvider

            return ConsoleProvider().request_input(message, flow, metadata=metadata)
        from crewai.flow.flow_context import current_flow_method_name

        step = current_flow_method_name.get("unknown")
        return run.ask(message, {"crewai": {"event": "flow_input", "step": short(step, 80)}})


def install_providers() -> None:
    """Make ``@human_feedback`` steps and ``ask()`` of served flows ask the A2A client
    (CrewAI's global providers, wrapped once per process)."""
    from crewai.flow.flow_config import flow_config

    with _lock:
        feedback = flow_config.hitl_provider
        if not isinstance(feedback, A2AFlowFeedback):
            flow_config.hitl_provider = A2AFlowFeedback(feedback)  # pyright: ignore[reportAttributeAccessIssue]
        asking = flow_config.input_provider
        if not isinstance(asking, A2AFlowInput):
            flow_config.input_provider = A2AFlowInput(asking)
