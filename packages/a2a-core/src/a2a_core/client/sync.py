"""A synchronous client for code that cannot await (CrewAI tools, scripts, threads).

The async client runs on a private event loop in a background thread; each
call submits a coroutine there and blocks the calling thread until it is
done. That works the same whether or not the calling thread runs an event
loop of its own (a sync tool called from inside a running loop cannot use
``asyncio.run``), and from any number of threads at once. Interrupting the
wait (KeyboardInterrupt, or any exception while blocked) cancels the call
on the private loop, which closes its HTTP request. Streams are iterated
synchronously, one event per step.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Self

from ..types import (
    AgentCard,
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    StreamEvent,
    Task,
    TaskPushNotificationConfig,
)
from .client import A2AClient, Content, EventStream, TaskRef
from .loop import BackgroundLoop
from .results import SendResult

if TYPE_CHECKING:
    from ..identity import Principal
    from .transports.inprocess import LocalService

__all__ = ["SyncA2AClient", "SyncEventStream"]


def _stop_loop(runner: BackgroundLoop) -> None:
    runner.stop()


class SyncEventStream:
    """A stream's events, iterated synchronously."""

    def __init__(self, stream: EventStream, runner: BackgroundLoop) -> None:
        self._stream = stream
        self._runner = runner

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> StreamEvent:
        try:
            return self._runner.run(_next(self._stream))
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop reading and release the connection."""
        self._runner.run(self._stream.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def result(self) -> SendResult:
        """Read to the end; the message reply or the final task."""
        return self._runner.run(self._stream.result())

    @property
    def task(self) -> Task | None:
        """The task as the events so far describe it (None before the first)."""
        return self._stream.task

    @property
    def text(self) -> str:
        """The text received so far: the answer's artifacts, or the reply message."""
        return self._stream.text


async def _next(stream: EventStream) -> StreamEvent:
    return await stream.__anext__()


class SyncA2AClient:
    """The blocking twin of ``A2AClient``: the same methods, without ``await``."""

    def __init__(self, client: A2AClient, runner: BackgroundLoop) -> None:
        """Use ``connect``, ``for_endpoint`` or ``in_process`` (the client lives on ``runner``)."""
        self.client = client
        self._runner = runner
        self._finalizer = weakref.finalize(self, _stop_loop, runner)

    # -- construction ---------------------------------------------------------------
    @classmethod
    def connect(cls, url: str | None = None, **kwargs: Any) -> SyncA2AClient:
        """Like ``A2AClient.connect`` (same keyword arguments)."""
        return cls._started(lambda: A2AClient.connect(url, **kwargs))

    @classmethod
    def for_endpoint(cls, url: str, **kwargs: Any) -> SyncA2AClient:
        """Like ``A2AClient.for_endpoint``."""
        return cls._started(lambda: _make_endpoint_client(url, kwargs))

    @classmethod
    def _started(cls, make: Callable[[], Coroutine[Any, Any, A2AClient]]) -> SyncA2AClient:
        runner = BackgroundLoop()
        try:
            client = runner.run(make())
        except BaseException:
            runner.stop()
            raise
        return cls(client, runner)

    @classmethod
    def in_process(
        cls,
        service: LocalService,
        *,
        version: str = "1.0",
        principal: Principal | None = None,
        extensions: Sequence[str] = (),
    ) -> SyncA2AClient:
        """Like ``A2AClient.in_process``; the service's agents run on the private loop."""
        runner = BackgroundLoop()
        client = A2AClient.in_process(
            service, version=version, principal=principal, extensions=extensions
        )
        return cls(client, runner)

    # -- facts ----------------------------------------------------------------------
    @property
    def card(self) -> AgentCard | None:
        """The agent card this client was connected with (None when none was fetched)."""
        return self.client.card

    @property
    def version(self) -> str:
        """The protocol version spoken: ``"1.0"`` or ``"0.3"``."""
        return self.client.version

    @property
    def binding(self) -> str:
        """The binding used: ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"INPROCESS"``."""
        return self.client.binding

    @property
    def supports_streaming(self) -> bool:
        """Whether the agent's card declares streaming (True when no card is known)."""
        return self.client.supports_streaming

    # -- operations -----------------------------------------------------------------
    def send(self, content: Content, **kwargs: Any) -> SendResult:
        """Like ``A2AClient.send``."""
        return self._runner.run(self.client.send(content, **kwargs))

    def send_text(self, text: str, **kwargs: Any) -> str:
        """Send ``text``; the answer's text."""
        return self._runner.run(self.client.send_text(text, **kwargs))

    def stream(self, content: Content, **kwargs: Any) -> SyncEventStream:
        """Like ``A2AClient.stream``; iterate the result with a plain ``for``."""
        return SyncEventStream(self.client.stream(content, **kwargs), self._runner)

    def get_task(self, task: TaskRef, *, history_length: int | None = None) -> Task:
        """A task as the agent has it now, with at most ``history_length`` messages."""
        return self._runner.run(self.client.get_task(task, history_length=history_length))

    def list_tasks(self, **kwargs: Any) -> ListTasksResponse:
        """A page of tasks (A2A 1.0); the filters are ``A2AClient.list_tasks``'s."""
        return self._runner.run(self.client.list_tasks(**kwargs))

    def iter_tasks(self, **kwargs: Any) -> Iterator[Task]:
        """Every matching task, page after page."""
        tasks = self.client.iter_tasks(**kwargs)
        try:
            while True:
                try:
                    yield self._runner.run(_next_task(tasks))
                except StopAsyncIteration:
                    return
        finally:
            self._runner.run(_aclose(tasks))

    def cancel(self, task: TaskRef) -> Task:
        """Ask the agent to cancel a task; the task afterwards."""
        return self._runner.run(self.client.cancel(task))

    def subscribe(self, task: TaskRef, *, last_event_id: str | None = None) -> SyncEventStream:
        """Follow a running task's events, iterated synchronously (``A2AClient.subscribe``)."""
        return SyncEventStream(
            self.client.subscribe(task, last_event_id=last_event_id), self._runner
        )

    def create_push_config(
        self, task: TaskRef, url_or_config: str | TaskPushNotificationConfig, **kwargs: Any
    ) -> TaskPushNotificationConfig:
        """Register a webhook the agent calls on the task's updates."""
        return self._runner.run(self.client.create_push_config(task, url_or_config, **kwargs))

    def get_push_config(self, task: TaskRef, config_id: str) -> TaskPushNotificationConfig:
        """One webhook configuration of a task (its secrets redacted by the agent)."""
        return self._runner.run(self.client.get_push_config(task, config_id))

    def list_push_configs(
        self, task: TaskRef, **kwargs: Any
    ) -> ListTaskPushNotificationConfigsResponse:
        """A task's webhook configurations, a page at a time."""
        return self._runner.run(self.client.list_push_configs(task, **kwargs))

    def delete_push_config(self, task: TaskRef, config_id: str) -> None:
        """Remove a webhook configuration, so the agent stops calling it."""
        self._runner.run(self.client.delete_push_config(task, config_id))

    def get_extended_card(self) -> AgentCard:
        """The authenticated extended card; it replaces ``card`` for this client."""
        return self._runner.run(self.client.get_extended_card())

    # -- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        """Close the client, then stop the private loop (idempotent)."""
        if not self._finalizer.alive:
            return
        try:
            self._runner.run(self.client.aclose())
        finally:
            self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _make_endpoint_client(url: str, kwargs: dict[str, Any]) -> A2AClient:
    return A2AClient.for_endpoint(url, **kwargs)


async def _next_task(tasks: AsyncIterator[Task]) -> Task:
    return await tasks.__anext__()


async def _aclose(tasks: AsyncIterator[Task]) -> None:
    aclose = getattr(tasks, "aclose", None)
    if aclose is not None:
        await aclose()
