"""The agent contract: a small async executor, and plain functions as agents.

An executor receives a ``RequestContext`` (the message, the task so far,
merged metadata, the caller, a cancellation token) and a ``TaskUpdater`` to
report progress, artifacts, questions and the outcome. Returning from
``execute`` ends the work: a task still working then completes (one paused
for input stays paused). Cancellation is cooperative and terminal: the task
becomes CANCELED first, then the token is set (visible from threads too),
``cancel`` is called, and the asyncio task running ``execute`` is cancelled
so that whatever it awaits is interrupted (its ``finally`` blocks still run).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, ParamSpec, TypeVar, cast

from ..types import Artifact, Message, Part, SendMessageConfiguration, Task
from .artifact_stream import ArtifactStream
from .cancellation import CancellationToken
from .context import Credential, Principal, ServerCallContext

if TYPE_CHECKING:
    from .updater import TaskUpdater

_P = ParamSpec("_P")
_T = TypeVar("_T")

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
    earlier: Callable[[int], Awaitable[list[Message]]] | None = field(default=None, repr=False)
    """Loads the context's earlier turns (``earlier_turns``; None: not available)."""

    async def earlier_turns(self, limit: int) -> list[Message]:
        """The context's earlier completed tasks, oldest first, as conversation turns:
        each task's user messages and its answer, at most ``limit`` messages (the
        newest kept).

        Agents that hold a conversation across the tasks of a context (a chat model
        without memory of its own) read it; see ``server.earlier``.
        """
        if self.earlier is None:
            return []
        return await self.earlier(limit)

    @property
    def principal(self) -> Principal | None:
        """The authenticated caller, if any."""
        return self.call.principal

    @property
    def credential(self) -> Credential | None:
        """The bearer token the caller was authenticated with (None: anonymous).

        Only for forwarding on the caller's behalf to an agent that expects it
        (token passthrough): never log it, store it or send it anywhere else.
        """
        return self.call.credential

    @property
    def text(self) -> str:
        """The text of the incoming message."""
        return self.message.text

    @property
    def accepted_output_modes(self) -> list[str]:
        """The media types the client accepts in answers (empty: anything).

        The server does not refuse a request whose modes the agent cannot meet
        (unless ``strict_output_modes``): answer in the best mode you have, using
        an accepted one when you can.
        """
        config = self.configuration
        return list(config.accepted_output_modes) if config is not None else []

    @property
    def cancelled(self) -> bool:
        """Whether the task was canceled (poll between steps)."""
        return self.cancellation.cancelled

    async def to_thread(self, func: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run blocking ``func`` in a worker thread, cooperatively.

        Unlike ``asyncio.to_thread``, a cancel does not abandon the thread: the
        token is set, and this waits for ``func`` to notice (poll
        ``context.cancelled``) and return, so shutdown never closes the store
        under a thread that is still working.
        """
        future = asyncio.ensure_future(asyncio.to_thread(func, *args, **kwargs))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            self.cancellation.cancel()
            with contextlib.suppress(BaseException):
                await future
            raise


class AgentExecutor(ABC):
    """Base class for agents. Implement ``execute``; override ``cancel`` to clean up."""

    leaves_task_open: ClassVar[bool] = False
    """When True, a task still submitted or working after ``execute`` returns stays so.

    By default returning means the work is done and the server completes the task,
    so no task is left working forever. Agents that finish work out of band (the
    "fire and forget" pattern; later messages continue the task) set this.
    """

    starts_task_at_once: bool = False
    """When True, every send makes a task: the agent never answers with a bare Message.

    A streamed send then stores the task and sends it as the stream's first event at
    once, before the agent runs, instead of waiting for the agent's first event to tell
    a direct reply from a task: the client has the task's id (to follow, cancel or
    resume it) while the agent is still at its first step. A Message the agent replies
    with anyway becomes the task's final status message, as with ``returnImmediately``.
    """

    @abstractmethod
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        """Do the work, reporting through ``updater``; returning completes a working task."""

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:  # noqa: B027
        """Called when the task was canceled (it already is; the token is set). Default: nothing."""

    def admit(self, context: RequestContext) -> None:  # noqa: B027
        """Refuse a request before its task is created or continued, by raising (an
        ``A2AError``, usually ``ServerBusyError`` for a bound of the agent's own, such as
        the crews it keeps waiting for input); the caller gets the error. Default: admit.
        """


AgentResult = str | Message | Part | list[Any] | Artifact | dict[str, Any] | None
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
    """``async def agent(context[, updater])`` returning str, Part(s), Artifact, Message,
    JSON data or None.

    A returned Message is the reply (a direct Message when the caller allows
    it, else the completed task's status message); any other value becomes the
    task's ``result`` artifact, and the task completes unless the function
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
    """``async def agent(context[, updater]): yield "chunk" ...``: chunks stream as one artifact.

    Each chunk (str, Part, list of parts, or JSON data) is sent as it comes,
    appended to the ``result`` artifact; the last one is marked ``lastChunk``
    (an ``ArtifactStream``). The stored task holds the chunks' text joined.
    """

    def __init__(self, func: Callable[..., AsyncIterator[Any]]) -> None:
        self.func = func
        self._with_updater = _wants_updater(func)
        # What it yields is always a task's artifact; only the updater could reply instead.
        self.starts_task_at_once = not self._with_updater

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        gen = self.func(context, updater) if self._with_updater else self.func(context)
        stream = ArtifactStream(updater, "result")
        try:
            async for item in gen:
                await stream.write(item)
        finally:
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                await cast(Callable[[], Awaitable[None]], aclose)()
        await stream.close()
        await updater.finish_with(None)


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
