"""The agent contract: a small async executor, and plain functions as agents.

An executor receives a ``RequestContext`` (the message, the task so far,
merged metadata, the caller, a cancellation token) and a ``TaskUpdater`` to
report progress, artifacts, questions and the outcome. Cancellation is
cooperative: the token is set (visible from threads too), ``cancel`` is
called, and the asyncio task running ``execute`` is cancelled.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..types import Artifact, Message, Part, SendMessageConfiguration, Task
from .cancellation import CancellationToken
from .context import Principal, ServerCallContext

if TYPE_CHECKING:
    from .updater import TaskUpdater

__all__ = [
    "AgentExecutor",
    "AgentFunction",
    "FunctionExecutor",
    "GeneratorExecutor",
    "RequestContext",
    "as_executor",
]


@dataclass(slots=True)
class RequestContext:
    """Everything an agent needs to know about one request."""

    task_id: str
    context_id: str
    message: Message
    task: Task
    """The task so far (including ``message`` in its history)."""
    metadata: dict[str, Any]
    """Message metadata merged with request metadata (request keys win)."""
    cancellation: CancellationToken
    configuration: SendMessageConfiguration | None = None
    call: ServerCallContext = field(default_factory=ServerCallContext)
    is_continuation: bool = False
    """True when the message continues an existing (e.g. input-required) task."""

    @property
    def principal(self) -> Principal | None:
        """The authenticated caller, if any."""
        return self.call.principal

    @property
    def text(self) -> str:
        """The text of the incoming message."""
        return self.message.text

    @property
    def cancelled(self) -> bool:
        """Whether the task was canceled (poll between steps)."""
        return self.cancellation.cancelled


class AgentExecutor(ABC):
    """Base class for agents. Implement ``execute``; override ``cancel`` to clean up."""

    @abstractmethod
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        """Do the work, reporting through ``updater``."""

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:  # noqa: B027
        """Called when the client cancels; the token is already set. Default: nothing."""


AgentResult = str | Message | Part | list[Part] | Artifact | None
AgentFunction = Callable[..., Awaitable[AgentResult]] | Callable[..., AsyncIterator[Any]]


def _wants_updater(func: Callable[..., Any]) -> bool:
    try:
        params = [
            p
            for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


class FunctionExecutor(AgentExecutor):
    """``async def agent(context[, updater])`` returning str, Part(s), Artifact, Message or None.

    A returned value becomes the task's ``result`` artifact (a Message becomes the
    completion status message), and the task completes unless the function
    already ended or paused it through the updater.
    """

    def __init__(self, func: Callable[..., Awaitable[AgentResult]]) -> None:
        self.func = func
        self._with_updater = _wants_updater(func)

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if self._with_updater:
            result = await self.func(context, updater)
        else:
            result = await self.func(context)
        await updater.finish_with(result)


class GeneratorExecutor(AgentExecutor):
    """``async def agent(context[, updater]): yield "chunk" ...``: chunks stream as one artifact."""

    def __init__(self, func: Callable[..., AsyncIterator[Any]]) -> None:
        self.func = func
        self._with_updater = _wants_updater(func)

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        gen = self.func(context, updater) if self._with_updater else self.func(context)
        artifact_id: str | None = None
        pending: list[Part] | None = None
        try:
            async for item in gen:
                parts = _to_parts(item)
                if not parts:
                    continue
                if pending is not None:
                    artifact_id = await updater.add_artifact(
                        pending, artifact_id=artifact_id or "result", append=artifact_id is not None
                    )
                pending = parts
        finally:
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                await cast(Callable[[], Awaitable[None]], aclose)()
        if pending is not None:
            await updater.add_artifact(
                pending,
                artifact_id=artifact_id or "result",
                append=artifact_id is not None,
                last_chunk=True,
            )
        await updater.finish_with(None)


def _to_parts(item: Any) -> list[Part]:
    if item is None:
        return []
    if isinstance(item, str):
        return [Part(text=item)] if item else []
    if isinstance(item, Part):
        return [item]
    if isinstance(item, list):
        return [p for p in cast(list[Any], item) if isinstance(p, Part)]
    return [Part(data=item)]


def as_executor(agent: Any) -> AgentExecutor:
    """Accept an AgentExecutor, an async function or an async generator function."""
    if isinstance(agent, AgentExecutor):
        return agent
    if inspect.isasyncgenfunction(agent):
        return GeneratorExecutor(agent)
    if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(
        getattr(agent, "__call__", None)  # noqa: B004
    ):
        return FunctionExecutor(agent)
    raise TypeError(
        f"Cannot serve {type(agent).__name__!r}: expected an AgentExecutor, an async function "
        "or an async generator function (framework objects need their adapter package)"
    )
