"""Following a task's events: ``SubscribeToTask``, and a blocking retry waiting for a
task that runs elsewhere.

A task running here is followed through the manager's bus; one running on another
instance, or events to replay by ``Last-Event-ID``, through the store's shared channel
(past its retention, the current task comes first).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

from ..contracts.task_store import StoredTask
from ..errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from ..types import StreamEvent, SubscribeToTaskRequest, Task
from .context import ServerCallContext
from .events import EventsLost, Subscription
from .manager import TaskManager
from .stream import ServerStream
from .task_state import snapshot
from .task_stream import (
    StreamItem,
    TaskStream,
    event_id_of,
    nothing,
    settles,
    single,
    then_follow,
)

__all__ = ["settled", "subscribe"]

_REPLAY_STALL_SECONDS = 1.0
"""How long a replay of a finished task waits for its next retained event before it ends."""


async def subscribe(
    manager: TaskManager, request: SubscribeToTaskRequest, call: ServerCallContext
) -> ServerStream:
    """The current Task, then its events while an agent works on it (on any instance).

    With a ``Last-Event-ID`` header (an event id this server sent), the events after
    it are replayed instead of the snapshot, then live ones follow; when they are past
    retention, the current Task comes first.
    """
    last = _last_event_id(call)
    stored = await manager.store.get(request.id, call.owner)
    if stored is None:
        raise TaskNotFoundError.for_task(request.id)
    run = manager.active_run(request.id)
    current, version = (run.task, run.version) if run is not None else (stored.task, stored.version)
    terminal = current.status.state.is_terminal
    if terminal and last is None:
        if call.version == "0.3":
            return TaskStream(single(version, snapshot(current)), None)
        raise UnsupportedOperationError(
            f"Task {request.id} is {current.status.state.value}; there is nothing to follow"
        )
    if terminal and last is not None and last >= version:
        return TaskStream(nothing(), None)  # the client has every event already
    if manager.channel.shared and (run is None or last is not None):
        # Followed through the backend: the task runs elsewhere, or the events
        # to replay are the channel's (it holds every instance's).
        start = last if last is not None else version
        first = None if last is not None else (version, snapshot(current), None)
        events = _follow_channel(manager, request.id, call, start, version, first, terminal)
        return TaskStream(events, None)
    # Running here, or idle but open (paused for input, or left working): follow it
    # until it is final or pauses again; a later message may continue it (the
    # 1.0 kit's STREAM-SUB-002). Subscribe and snapshot with no await between.
    if last is not None:
        try:
            subscription = manager.subscribe(request.id, after=last)
        except EventsLost:
            pass
        else:
            replay = _follow(subscription, replay_only=terminal)
            return TaskStream(replay, subscription)
    subscription = manager.subscribe(request.id, current=version)
    task = snapshot(current)
    if terminal:
        subscription.close()
        return TaskStream(single(version, task), None)
    return TaskStream(then_follow((version, task, None)), subscription)


async def settled(manager: TaskManager, stored: StoredTask, call: ServerCallContext) -> StoredTask:
    """The task once it is final or paused, or its run ended, followed through the channel.

    For a blocking retry of a task running on another instance: the channel carries
    that instance's events (or the final status a survivor writes when it died).
    Without a shared channel no run elsewhere can change it.
    """
    channel = manager.channel
    task_id = stored.task.id
    while channel.shared and not _is_settled(stored.task):
        follower = channel.follow(task_id, stored.version, stored.version)
        try:
            ended = await _until_settled(follower)
        finally:
            await _aclose(follower)
        fresh = await manager.store.get(task_id, call.owner)
        if fresh is None:
            raise TaskNotFoundError.for_task(task_id)
        stored = fresh
        if ended:
            break
    return stored


async def _follow(subscription: Subscription, replay_only: bool) -> AsyncGenerator[StreamItem]:
    """Replayed events, then (unless ``replay_only``) live ones until the task settles."""
    try:
        if replay_only and not subscription.pending:
            return
        async for event in subscription:
            yield event_id_of(subscription), event, subscription.encoded
            if settles(event) or (replay_only and not subscription.pending):
                return
    finally:
        subscription.close()


async def _follow_channel(
    manager: TaskManager,
    task_id: str,
    call: ServerCallContext,
    after: int,
    current: int,
    first: StreamItem | None,
    terminal: bool,
) -> AsyncGenerator[StreamItem]:
    """Events of a task from the store's channel; past retention, a snapshot first."""
    channel = manager.channel
    follower = channel.follow(task_id, after, current)
    try:
        if first is not None:
            yield first
        while True:
            try:
                if terminal:  # replaying a finished task: never wait for more
                    event_id, event = await asyncio.wait_for(anext(follower), _REPLAY_STALL_SECONDS)
                else:
                    event_id, event = await anext(follower)
            except EventsLost:
                await _aclose(follower)
                stored = await manager.store.get(task_id, call.owner)
                if stored is None:
                    raise TaskNotFoundError.for_task(task_id) from None
                yield stored.version, snapshot(stored.task), None
                state = stored.task.status.state
                if state.is_terminal or state.is_interrupted:
                    return
                terminal = False
                follower = channel.follow(task_id, stored.version, stored.version)
                continue
            except (StopAsyncIteration, TimeoutError):
                return
            if event is None:  # the run ended without settling the task
                return
            yield event_id, event, None
            if settles(event):
                return
    finally:
        await _aclose(follower)


def _is_settled(task: Task) -> bool:
    state = task.status.state
    return state.is_terminal or state.is_interrupted


async def _until_settled(follower: AsyncIterator[tuple[int, StreamEvent | None]]) -> bool:
    """Read a channel follower until the task settles or its run ends (True), or events
    were lost (False: read the task again and follow from there)."""
    try:
        async for _, event in follower:
            if event is None or settles(event):
                return True
    except EventsLost:
        return False
    return True


def _last_event_id(call: ServerCallContext) -> int | None:
    """The ``Last-Event-ID`` a resubscribing client sent (None: none), checked."""
    raw = call.headers.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise InvalidParamsError(
            "Last-Event-ID must be the id of an event this server sent (a non-negative integer)"
        )
    return int(raw)


async def _aclose(events: AsyncIterator[object]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()
