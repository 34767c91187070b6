"""Scenarios, probes and reference agents for the conformance suites; a task factory for stores.

``Scenario`` is what ``AdapterConformance.make_agent`` receives: which
behaviour the suite wants (``scenario.name``), a ``probe`` the agent reports
to, and the ``secret`` a failing agent must raise with. The reference
agents below are the core's own answers to each scenario (plain
``AgentExecutor`` classes): read them to see what a scenario asks of a
framework's fake agent.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ..server.executor import AgentExecutor, RequestContext
from ..server.updater import TaskUpdater
from ..types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

__all__ = [
    "SCENARIOS",
    "AgentProbe",
    "AskingAgent",
    "FailingAgent",
    "Scenario",
    "ScenarioName",
    "SlowAgent",
    "make_task",
]

ScenarioName = Literal["echo", "stream", "ask", "slow", "fail"]
"""- ``echo``: answer ``expected_text(scenario, text)`` (by default ``"echo: " + text``);
- ``stream``: the same answer, produced in several chunks (two or more);
- ``ask``: first turn: ask a question (the task becomes INPUT_REQUIRED); second
  turn (same task): answer ``expected_text`` of the second message;
- ``slow``: call ``probe.mark_started()``, then run until cancelled, and call
  ``probe.mark_stopped()`` when the framework stops (e.g. in a ``finally``);
- ``fail``: raise an exception whose message contains ``scenario.secret``.
"""

SCENARIOS: tuple[ScenarioName, ...] = ("echo", "stream", "ask", "slow", "fail")
"""Every scenario the adapter suite asks an adapter to build an agent for."""


class AgentProbe:
    """What a fake agent reports to the suite. Thread-safe: frameworks may run agents in threads."""

    def __init__(self) -> None:
        self._started = threading.Event()
        self._stopped = threading.Event()

    def mark_started(self) -> None:
        """The agent began running (the suite waits for this before cancelling)."""
        self._started.set()

    def mark_stopped(self) -> None:
        """The agent's work stopped (call it where the framework unwinds, e.g. ``finally``)."""
        self._stopped.set()

    @property
    def started(self) -> bool:
        """Whether the agent has called ``mark_started``."""
        return self._started.is_set()

    @property
    def stopped(self) -> bool:
        """Whether the agent has called ``mark_stopped``."""
        return self._stopped.is_set()

    async def wait_started(self, seconds: float) -> bool:
        """Whether the agent started within ``seconds``."""
        return await _wait(self._started, seconds)

    async def wait_stopped(self, seconds: float) -> bool:
        """Whether the agent stopped within ``seconds``."""
        return await _wait(self._stopped, seconds)


async def _wait(event: threading.Event, seconds: float) -> bool:
    """Poll a thread-set event from the loop (frameworks may set it from a worker thread)."""
    deadline = time.monotonic() + seconds
    while not event.is_set():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.005)
    return True


@dataclass(frozen=True, slots=True)
class Scenario:
    """One behaviour the adapter suite asks ``make_agent`` for."""

    name: ScenarioName
    probe: AgentProbe = field(default_factory=AgentProbe)
    secret: str = field(default_factory=lambda: f"a2a-conformance-secret-{uuid.uuid4().hex}")
    """Text a ``fail`` agent puts in its exception; it must never reach the client."""


# -- reference agents (the core's own answer to each scenario) ---------------------------


class AskingAgent(AgentExecutor):
    """``ask``: asks a question first; answers ``prefix + answer`` when the task is continued."""

    def __init__(self, prefix: str = "echo: ", question: str = "What should I echo?") -> None:
        self.prefix = prefix
        self.question = question

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if not context.is_continuation:
            await updater.require_input(self.question)
            return
        await updater.finish_with(self.prefix + context.text)


class SlowAgent(AgentExecutor):
    """``slow``: works until cancelled; reports start and stop to its probe."""

    def __init__(self, probe: AgentProbe) -> None:
        self.probe = probe

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        try:
            await updater.start_work("working until cancelled")
            self.probe.mark_started()
            await asyncio.Event().wait()
        finally:
            self.probe.mark_stopped()


class FailingAgent(AgentExecutor):
    """``fail``: starts, then raises an exception carrying ``secret``."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        raise RuntimeError(f"internal failure, do not show to clients: {self.secret}")


# -- tasks for store tests ----------------------------------------------------------------

_UNSET: Any = object()


def make_task(
    task_id: str | None = None,
    *,
    context_id: str = "ctx-1",
    state: TaskState = TaskState.WORKING,
    timestamp: datetime | None = _UNSET,
    text: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Task:
    """A task for store tests: a user message in its history, and ``text`` as an artifact.

    ``timestamp`` is the status time (default: now, UTC; None: no timestamp).
    """
    tid = task_id or f"task-{uuid.uuid4().hex}"
    when = datetime.now(UTC) if timestamp is _UNSET else timestamp
    history = [
        Message(
            message_id=f"{tid}-m1",
            role=Role.USER,
            parts=[Part(text=f"question for {tid}")],
            task_id=tid,
            context_id=context_id,
        )
    ]
    artifacts = [Artifact(artifact_id="result", parts=[Part(text=text)])] if text else []
    return Task(
        id=tid,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=when),
        history=history,
        artifacts=artifacts,
        metadata=metadata,
    )
