"""Push deliveries pending at a crash: the survivor that settles a task delivers them.

A dead instance's lanes held events in memory. Before the survivor writes
the task's final FAILED, it reads the task's delivered-up-to mark (every
event up to it was finished by every lane, see ``notifier``), reads the
events after it back from the store's event channel and queues them, in
order, in its own push service; the FAILED update follows them. Events the
channel no longer holds (past its retention, or saved but never published)
are replaced by the current Task as one message. What is sent again keeps
the ``webhook-id`` the dead instance used for it.

With no mark (the instance died before writing its first), every retained
event is sent again; a config created after an event does not receive it
(judged by the last status time before it; unknown: sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...contracts.channel import EventsLost
from ...types import StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

if TYPE_CHECKING:
    from ...contracts.channel import TaskChannel
    from ...contracts.push_configs import PushConfigStore
    from ...contracts.task_store import StoredTask

Replay = Callable[[Task, list[tuple[int, StreamEvent, int]], int | None], None]
"""``PushNotificationService.replay``: queue recovered events (and maybe the task) again."""

__all__ = ["Replay", "pending_events", "redeliver_pending"]

READ_WAIT = 2.0
"""Seconds to wait for the next retained event: only an event saved but never published
makes a read wait (the follower is then waiting for live events)."""


async def redeliver_pending(
    store: PushConfigStore, replay: Replay, channel: TaskChannel, stored: StoredTask
) -> int:
    """Queue the task's events after its mark through ``replay``; how many were queued."""
    task = stored.task
    if not store.keeps_marks or not await store.list(task.id):
        return 0
    mark = await store.read_mark(task.id)
    after = 0 if mark is None else mark
    if after >= stored.version:
        return 0  # everything was delivered
    events, complete = await pending_events(channel, task.id, after, stored.version)
    queued = _collapse(events)
    replay(task, queued, None if complete else stored.version)
    return len(queued)


async def pending_events(
    channel: TaskChannel, task_id: str, after: int, current: int, wait: float = READ_WAIT
) -> tuple[list[tuple[int, StreamEvent]], bool]:
    """The task's events with ids in (after, current], and whether none is missing."""
    found: list[tuple[int, StreamEvent]] = []
    follower = channel.follow(task_id, after, current)
    complete = False
    try:
        while True:
            try:
                event_id, event = await asyncio.wait_for(anext(follower), wait)
            except (EventsLost, TimeoutError, StopAsyncIteration):
                break
            if event_id > current:
                complete = True
                break
            if event is not None:
                found.append((event_id, event))
            if event_id >= current:
                complete = True
                break
    finally:
        aclose = getattr(follower, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
    return found, complete


def _collapse(events: list[tuple[int, StreamEvent]]) -> list[tuple[int, StreamEvent, int]]:
    """The events to send again, each with when it happened (ns, for configs made later).

    An appended chunk goes out as its whole artifact as stored now (as every
    push of a chunk does), so only the last update of each artifact is sent.
    """
    last_update: dict[str, int] = {}
    for index, (_, event) in enumerate(events):
        if isinstance(event, TaskArtifactUpdateEvent):
            last_update[event.artifact.artifact_id] = index
    now = time.time_ns()
    at_ns = now
    queued: list[tuple[int, StreamEvent, int]] = []
    for index, (event_id, event) in enumerate(events):
        if isinstance(event, TaskStatusUpdateEvent) and event.status.timestamp is not None:
            at_ns = int(event.status.timestamp.timestamp() * 1e9)
        if (
            isinstance(event, TaskArtifactUpdateEvent)
            and event.append
            and last_update[event.artifact.artifact_id] != index
        ):
            continue
        queued.append((event_id, event, at_ns))
    return queued
