"""Who hears of a task's events besides its streams: observers, the push intake, the trace."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from .. import telemetry as _telemetry
from ..types import StreamEvent, Task, TaskState

__all__ = ["PushIntake", "TaskObserver", "TaskObservers"]

logger = logging.getLogger("a2a_core.server")

PushIntake = Callable[[Task, StreamEvent, TaskState | None, int | None], None]
"""The push service's intake: an observer that is also told the event's id."""

TaskObserver = Callable[[Task, StreamEvent, TaskState | None], None]
"""Called after each applied event with the task, the event and the previous state.

Observers must not block: they run inline on the event path (push delivery
queues work for a background sender). An observer with a true ``transitions_only``
attribute is called only for events that change the task's state: streamed artifact
chunks then never build the task for it (the plugins' ``a2a_task_transition`` is one).
"""


def _transitions_only(observer: TaskObserver) -> bool:
    """Whether ``observer`` asks to be told only of state changes (``TaskObserver``)."""
    return getattr(observer, "transitions_only", False)


class TaskObservers:
    """A manager's observers and push intake, told of every applied event."""

    def __init__(self, observers: Sequence[TaskObserver] = ()) -> None:
        self.observers: list[TaskObserver] = list(observers)
        self.push_intake: PushIntake | None = None
        """The push service's intake, told each event with its id (set by the service)."""

    def __bool__(self) -> bool:
        return bool(self.observers) or self.push_intake is not None

    def wanted(self, changed: bool) -> bool:
        """Whether an event has anyone to tell (``notify``): the push intake takes every
        event; an observer every event, or only those that change the task's state when
        it watches transitions only (``TaskObserver``)."""
        if self.push_intake is not None:
            return True
        if changed:
            return bool(self.observers)
        return any(not _transitions_only(observer) for observer in self.observers)

    @staticmethod
    def trace(span: Any, event: StreamEvent, previous: TaskState | None) -> None:
        """Record an event on its run's span, when tracing is on (it needs no task: an
        event nobody observes is still traced)."""
        hooks = _telemetry.active
        if hooks is not None and span is not None:
            hooks.task_event(span, event, previous)

    def notify(
        self,
        task: Task,
        event: StreamEvent,
        previous: TaskState | None,
        event_id: int | None = None,
        span: Any = None,
    ) -> None:
        """Tell every observer (and the push intake) about a task's event (id: the version
        it produced; ``span``: its run's); one that raises is logged, not fatal."""
        self.trace(span, event, previous)
        unchanged = previous is task.status.state
        for observer in self.observers:
            if unchanged and _transitions_only(observer):
                continue
            try:
                observer(task, event, previous)
            except Exception:
                logger.exception("task observer %r failed", observer)
        if self.push_intake is not None:
            try:
                self.push_intake(task, event, previous, event_id)
            except Exception:
                logger.exception("the push intake failed")
