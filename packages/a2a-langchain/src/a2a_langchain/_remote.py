"""A remote A2A agent as LangChain code talks to it: connections, conversations, replies.

``RemoteConnection`` holds one remote agent: its card, an ``A2AClient`` per
event loop (async callers), and a private loop thread for sync callers (a
sync tool may run inside a thread of a running loop, where ``asyncio.run``
is not allowed).

``RemoteConversations`` keeps the per-thread state that makes multi-turn
work: the remote contextId of each local thread (LangGraph ``thread_id``),
the remote task waiting for input in a thread, and for tools that pause the
graph (``interrupt()``) the replies already received for a tool call, so a
tool body that LangGraph re-runs on resume replays them instead of sending
its first message again. Everything is bounded (least recently used first
out) and lives in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from a2a_core.client import A2AClient, EventStream, SendResult, sanitize_text
from a2a_core.errors import A2AError
from a2a_core.types import (
    AgentCard,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    new_id,
)
from langchain_core.runnables import RunnableConfig

from ._convert import parts_text

__all__ = [
    "CALL_ID_KEY",
    "RemoteConnection",
    "RemoteConversations",
    "RemoteReply",
    "thread_key",
]

logger = logging.getLogger("a2a_langchain")

CALL_ID_KEY = "a2a_tool_call_id"
"""The ``configurable`` key where a remote-agent tool finds the id of its tool call."""

_CANCEL_TIMEOUT = 5.0
_LEARN_TIMEOUT = 5.0
T = TypeVar("T")
V = TypeVar("V")


class _LRU(OrderedDict[Any, V], Generic[V]):
    """A bounded map (least recently remembered out first); safe across threads."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._lock = threading.Lock()

    def remember(self, key: Any, value: V) -> None:
        with self._lock:
            self[key] = value
            self.move_to_end(key)
            while len(self) > self.limit:
                self.popitem(last=False)

    def forget(self, key: Any) -> None:
        with self._lock:
            self.pop(key, None)


def thread_key(config: RunnableConfig | None) -> str:
    """The local conversation a call belongs to: the LangGraph ``thread_id`` ("" if none)."""
    configurable = cast(Mapping[str, Any], (config or {}).get("configurable") or {})
    value = configurable.get("thread_id")
    return str(value) if value is not None else ""


def call_id(config: RunnableConfig | None) -> str | None:
    configurable = cast(Mapping[str, Any], (config or {}).get("configurable") or {})
    value = configurable.get(CALL_ID_KEY)
    return str(value) if value else None


# -- replies -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteReply:
    """What a remote agent answered to one message."""

    agent: str
    url: str
    text: str
    parts: tuple[Part, ...] = ()
    state: TaskState | None = None
    task_id: str | None = None
    context_id: str | None = None

    @property
    def needs_input(self) -> bool:
        return self.state is TaskState.INPUT_REQUIRED

    @property
    def needs_auth(self) -> bool:
        return self.state is TaskState.AUTH_REQUIRED

    @property
    def succeeded(self) -> bool:
        return self.state in (None, TaskState.COMPLETED)

    def artifact(self) -> dict[str, Any]:
        """The reply as JSON data (the tool artifact): ids, state and the raw A2A parts."""
        return {
            "agent": self.agent,
            "url": self.url,
            "task_id": self.task_id,
            "context_id": self.context_id,
            "state": self.state.value if self.state is not None else None,
            "parts": [p.model_dump(mode="json", by_alias=True) for p in self.parts],
        }

    @classmethod
    def of(cls, result: SendResult, agent: str, url: str) -> RemoteReply:
        task = result.task
        if task is None:
            message = result.message
            parts = tuple(message.parts) if message is not None else ()
        else:
            parts = _task_parts(task)
        text = result.text or parts_text(parts)
        return cls(
            agent=agent,
            url=url,
            text=text,
            parts=parts,
            state=result.state,
            task_id=result.task_id,
            context_id=result.context_id,
        )


def _task_parts(task: Task) -> tuple[Part, ...]:
    status = task.status.message
    if task.status.state.is_interrupted and status is not None:
        return tuple(status.parts)
    parts = [p for a in task.artifacts for p in a.parts]
    if not parts and status is not None:
        parts = list(status.parts)
    return tuple(parts)


def outgoing_parts(text: str, data: Any = None) -> list[Part]:
    """The parts of a message to a remote agent: the text, and data when given."""
    parts: list[Part] = []
    if text:
        parts.append(Part(text=text))
    if data is not None:
        parts.append(Part(data=data))
    if not parts:
        parts.append(Part(text=""))
    return parts


# -- connections ---------------------------------------------------------------------------


class _LoopThread:
    """A private event loop in a daemon thread, for synchronous callers."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="a2a-lc", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a synchronous remote-agent call was made from its own loop")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)
            if not self.thread.is_alive():
                self.loop.close()


class RemoteConnection:
    """One remote agent, reachable from async code (any loop) and from sync code."""

    def __init__(
        self,
        target: str | AgentCard | A2AClient,
        *,
        connect_options: Mapping[str, Any] | None = None,
    ) -> None:
        self._given: A2AClient | None = None
        self.card: AgentCard | None = None
        self.url: str | None = None
        if isinstance(target, A2AClient):
            self._given = target
            self.card = target.card
            self.url = target.interface.url if target.interface is not None else None
        elif isinstance(target, AgentCard):
            self.card = target
            self.url = target.supported_interfaces[0].url if target.supported_interfaces else None
        else:
            self.url = target
        self.connect_options: dict[str, Any] = dict(connect_options or {})
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, A2AClient] = (
            weakref.WeakKeyDictionary()
        )
        self._connecting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._runner: _LoopThread | None = None
        self._runner_lock = threading.Lock()

    @property
    def label(self) -> str:
        """Where the agent is, for messages ("(client)" for a given in-process client)."""
        return self.url or "(client)"

    async def client(self) -> A2AClient:
        """The client for the running loop (connected, and the card fetched, on first use)."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        found = self._clients.get(loop)
        if found is not None:
            return found
        lock = self._connecting.setdefault(loop, asyncio.Lock())
        async with lock:
            found = self._clients.get(loop)
            if found is None:
                options: dict[str, Any] = {"timeout": 600.0, **self.connect_options}
                if self.card is not None:
                    options["card"] = self.card
                    found = await A2AClient.connect(None, **options)
                else:
                    found = await A2AClient.connect(self.url, **options)
                    self.card = found.card
                self._clients[loop] = found
        return found

    async def fetch_card(self) -> AgentCard:
        if self.card is None:
            await self.client()
        if self.card is None:
            raise ValueError(f"the agent at {self.label} has no card")
        return self.card

    def run_sync(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` (which uses ``client()``) on the private loop; wait for it."""
        if self._given is not None:
            coro.close()
            raise TypeError(
                "a remote agent given as an A2AClient can only be called asynchronously "
                "(ainvoke/astream); give its URL for synchronous calls"
            )
        with self._runner_lock:
            if self._runner is None:
                self._runner = _LoopThread()
            runner = self._runner
        return runner.run(coro)

    async def aclose(self) -> None:
        """Close the client of the running loop and stop the sync loop (a given client stays)."""
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()
        self._stop_runner()

    def close(self) -> None:
        """Close the sync loop's client and stop it (call from sync code)."""
        self._stop_runner()

    def _stop_runner(self) -> None:
        with self._runner_lock:
            runner, self._runner = self._runner, None
        if runner is None:
            return
        client = self._clients.pop(runner.loop, None)
        if client is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(client.aclose(), runner.loop).result(timeout=5)
        runner.stop()


# -- conversations -------------------------------------------------------------------------


@dataclass(slots=True)
class _CallHistory:
    """The replies one tool call got so far (first message, then each answer)."""

    replies: list[RemoteReply] = field(default_factory=list[RemoteReply])


class RemoteConversations:
    """Per-thread remote state: contexts, tasks waiting for input, replayable tool calls."""

    def __init__(self, limit: int = 1000) -> None:
        self.contexts: _LRU[str] = _LRU(limit)
        self.pending: _LRU[RemoteReply] = _LRU(limit)
        self.calls: _LRU[_CallHistory] = _LRU(limit)

    def history(self, thread: str, call: str | None) -> _CallHistory:
        key = (thread, call)
        found = self.calls.get(key)
        if found is None:
            found = _CallHistory()
        self.calls.remember(key, found)
        return found

    def learn(self, thread: str, reply: RemoteReply) -> None:
        if reply.context_id:
            self.contexts.remember(thread, reply.context_id)
        if reply.needs_input or reply.needs_auth:
            self.pending.remember(thread, reply)
        else:
            self.pending.forget(thread)


async def exchange(
    connection: RemoteConnection,
    parts: Sequence[Part],
    *,
    context_id: str | None,
    task_id: str | None = None,
    on_text: Callable[[str], Coroutine[Any, Any, None]] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> RemoteReply:
    """Send one message (continuing ``task_id`` when given) and wait for the answer.

    Streams when the agent can, passing text deltas of artifacts to ``on_text``;
    a cancelled call cancels the remote task it started.
    """
    client = await connection.client()
    card = client.card
    agent = sanitize_text(card.name, 128, single_line=True) if card is not None else "agent"
    message = Message(
        message_id=new_id(),
        role=Role.USER,
        parts=list(parts),
        context_id=context_id,
        task_id=task_id,
    )
    if not client.supports_streaming:
        result = await client.send(message, metadata=metadata)
        return RemoteReply.of(result, agent, connection.label)
    stream = client.stream(message, metadata=metadata)
    reading = _StreamReader(stream, task_id, on_text)
    reader = asyncio.ensure_future(reading.run())
    try:
        result = await asyncio.shield(reader)
    except asyncio.CancelledError:
        # The caller gave up. The reader runs on (shielded) until it knows which
        # remote task it started, so that task can be canceled, then stops.
        reading.on_text = None
        if reading.task_id is None and not reader.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reading.known.wait()), _LEARN_TIMEOUT)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await reader
        if reading.task_id is not None and not reading.settled:
            await asyncio.shield(_cancel_remote(client, reading.task_id))
        raise
    return RemoteReply.of(result, agent, connection.label)


class _StreamReader:
    """Reads one streaming exchange; learns the remote task id from the first event."""

    def __init__(
        self,
        stream: EventStream,
        task_id: str | None,
        on_text: Callable[[str], Coroutine[Any, Any, None]] | None,
    ) -> None:
        self.stream = stream
        self.task_id = task_id
        self.on_text = on_text
        self.known = asyncio.Event()
        self.settled = False
        if task_id is not None:
            self.known.set()

    async def run(self) -> SendResult:
        try:
            async with self.stream:
                async for event in self.stream:
                    current = self.stream.task
                    if current is not None and self.task_id is None:
                        self.task_id = current.id
                        self.known.set()
                    if self.on_text is not None and isinstance(event, TaskArtifactUpdateEvent):
                        delta = "".join(p.text for p in event.artifact.parts if p.text is not None)
                        if delta:
                            await self.on_text(delta)
            result = await self.stream.result()
            self.settled = True
            return result
        finally:
            self.known.set()


async def _cancel_remote(client: A2AClient, task_id: str) -> None:
    try:
        async with asyncio.timeout(_CANCEL_TIMEOUT):
            await client.cancel(task_id)
    except (A2AError, TimeoutError, OSError) as exc:
        logger.debug("remote cancel of %s: %r", task_id, exc)


async def text_stream(
    connection: RemoteConnection,
    parts: Sequence[Part],
    *,
    context_id: str | None,
    task_id: str | None = None,
    replies: list[RemoteReply] | None = None,
) -> AsyncGenerator[str]:
    """The agent's answer text as it arrives; the final reply is appended to ``replies``."""
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    async def push(delta: str) -> None:
        await queue.put(delta)

    async def run() -> RemoteReply:
        try:
            return await exchange(
                connection, parts, context_id=context_id, task_id=task_id, on_text=push
            )
        finally:
            await queue.put(None)

    worker = asyncio.ensure_future(run())
    sent = False
    try:
        while True:
            delta = await queue.get()
            if delta is None:
                break
            sent = True
            yield delta
        reply = await worker
    finally:
        if not worker.done():
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker
    if replies is not None:
        replies.append(reply)
    if not sent and reply.text:
        yield reply.text
