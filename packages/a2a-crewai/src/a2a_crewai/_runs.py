"""One request's run of a crew copy: its worker thread, its events, its cancellation.

A ``CrewRun`` is created on the server's event loop for one A2A task and
works in a thread of its own. The thread (and every CrewAI thread or event
handler spawned from it, since CrewAI copies ``contextvars``) sees the run
as ``current_run()``: that is how the process-global event bus, the
human-input provider, the cancel hooks and the remote-agent tools find the
request they belong to. Everything the thread reports goes to the loop
through ``push`` (``call_soon_threadsafe``), in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from a2a_core.identity import Credential
from a2a_core.types import Part

__all__ = [
    "Canceled",
    "Chunk",
    "CrewRun",
    "Failed",
    "Finished",
    "NeedInput",
    "Progress",
    "RunItem",
    "TaskDone",
    "current_run",
    "paused_run",
]

_CURRENT: ContextVar[CrewRun | None] = ContextVar("a2a_crewai_run", default=None)

_PAUSED: weakref.WeakValueDictionary[str, CrewRun] = weakref.WeakValueDictionary()
"""Runs waiting for a human answer, by A2A task id (to release them on a cancel)."""


def current_run() -> CrewRun | None:
    """The run the calling thread works for (None outside a served crew)."""
    return _CURRENT.get()


def paused_run(task_id: str) -> CrewRun | None:
    """The run of ``task_id`` if it waits for input in this process."""
    return _PAUSED.get(task_id)


# -- what a run reports to the loop -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Progress:
    """A working status update."""

    text: str
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A streamed piece of a task's output (token streaming)."""

    task_index: int | None
    text: str


@dataclass(frozen=True, slots=True)
class TaskDone:
    """A task of the crew finished (its output may become an artifact)."""

    index: int
    name: str
    description: str
    parts: list[Part]
    text: str


@dataclass(frozen=True, slots=True)
class NeedInput:
    """The crew waits for a human answer to ``question``."""

    question: str
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """The crew returned; ``parts`` are its final output."""

    parts: list[Part]
    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The crew raised (the exception is logged, never shown)."""

    error: BaseException


@dataclass(frozen=True, slots=True)
class Canceled:
    """The crew stopped because the task was canceled."""


RunItem = Progress | Chunk | TaskDone | NeedInput | Finished | Failed | Canceled


class InputTimeout(Exception):
    """No answer came within the run's input timeout."""


_WAKE = object()


@dataclass(eq=False)
class CrewRun:
    """The state of one request's crew run, shared by the loop and the worker thread."""

    task_id: str
    loop: asyncio.AbstractEventLoop
    input_timeout: float = 3600.0
    max_feedback_rounds: int = 1
    agent_ids: set[str] = field(default_factory=set[str])
    task_ids: dict[str, int] = field(default_factory=dict[str, int])
    """The copy's task ids and their 1-based position."""
    task_count: int = 0
    reports: asyncio.Queue[RunItem] = field(default_factory=asyncio.Queue[RunItem])
    writer: Any = None
    """Loop side: the artifact writer, kept across a pause for input."""
    holder: Any = None
    """Loop side: the concurrency slot the run holds while it works."""
    files: Any = None
    """The files the request brought (``_files.ReceivedFiles``), for tools to read."""
    outputs: Any = None
    """The folder this run's tasks write their ``output_file`` into (``_files.OutputFolder``)."""
    credential: Credential | None = None
    """The bearer token the request was authenticated with (the end user's), forwarded by
    remote-agent tools and members built with ``passthrough=True``; never logged."""
    flow: Any = None
    """The request's own flow instance, when a flow is served (its events are this run's)."""
    output_files: dict[int, Part] = field(default_factory=dict[int, Part])
    """Files the crew's tasks wrote (``output_file``), by task position."""
    finished: threading.Event = field(default_factory=threading.Event)
    _cancelled: threading.Event = field(default_factory=threading.Event)
    _answers: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue[Any])
    _callbacks: list[Callable[[], None]] = field(default_factory=list[Callable[[], None]])
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- thread side ------------------------------------------------------------------
    def push(self, item: RunItem) -> None:
        """Report ``item`` to the loop (callable from any thread)."""
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody listens any more
            self.loop.call_soon_threadsafe(self.reports.put_nowait, item)

    def bind(self) -> Callable[[], None]:
        """Make this run ``current_run()`` in the calling context; returns the undo."""
        token = _CURRENT.set(self)
        return lambda: _CURRENT.reset(token)

    def ask(self, question: str, metadata: dict[str, Any] | None = None) -> str:
        """Pause for a human answer (worker thread): blocks until it comes.

        Raises ``InputTimeout`` after ``input_timeout`` seconds, and the
        caller's cancellation error when the task is canceled meanwhile.
        """
        self.push(NeedInput(question, metadata))
        deadline = time.monotonic() + self.input_timeout
        while True:
            if self._cancelled.is_set():
                raise _cancel_error()
            left = deadline - time.monotonic()
            if left <= 0:
                raise InputTimeout(f"no answer within {self.input_timeout:g} s")
            try:
                answer = self._answers.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if answer is _WAKE:
                continue
            return str(answer)

    def check(self) -> None:
        """Raise the cancellation error when the task was canceled (worker thread)."""
        if self._cancelled.is_set():
            raise _cancel_error()

    # -- loop side --------------------------------------------------------------------
    def pause(self) -> None:
        """Remember this run as waiting for input (a cancel of the paused task releases it)."""
        _PAUSED[self.task_id] = self

    def resume(self, answer: str) -> None:
        """Hand the human answer to the waiting thread."""
        _PAUSED.pop(self.task_id, None)
        self._answers.put(answer)

    # -- either side ------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the crew at its next step (idempotent, any thread)."""
        with self._lock:
            if self._cancelled.is_set():
                return
            self._cancelled.set()
            callbacks, self._callbacks = self._callbacks, []
        _PAUSED.pop(self.task_id, None)
        self._answers.put(_WAKE)
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` when the run is canceled (at once if it is); returns the undo."""
        with self._lock:
            if not self._cancelled.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock, contextlib.suppress(ValueError):
                        self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def owns_agent(self, agent_id: object) -> bool:
        """Whether an event's agent is one of this run's crew copy.

        Events without an agent, and runs whose agents are not all known in
        advance (a hierarchical crew's manager joins at kickoff), pass.
        """
        return agent_id is None or not self.agent_ids or str(agent_id) in self.agent_ids


def _cancel_error() -> BaseException:
    from crewai.hooks.dispatch import HookAborted

    return HookAborted("the A2A task was canceled", source="a2a_crewai")
