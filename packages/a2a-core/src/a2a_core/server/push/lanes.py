"""The lanes: one per (task, config), each sending one delivery at a time, in order.

A slow receiver delays only its own lane. A lane holds at most ``max_backlog``
deliveries (past it the oldest is dropped, logged and counted), and a newer
whole state replaces one still waiting in it (never one in flight), so a
receiver gets whole text. The fan-out waits while ``max_pending`` deliveries
are outstanding in all lanes.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from ...types import TaskArtifactUpdateEvent
from .delivery import Counters, Delivery
from .marks import DeliveryMarks

__all__ = ["Lanes"]

logger = logging.getLogger("a2a_core.server.push")


@dataclass(slots=True)
class _Lane:
    queue: deque[Delivery] = field(default_factory=deque[Delivery])
    runner: asyncio.Task[None] | None = None


def _supersedes(version: str, newer: Delivery, waiting: Delivery) -> bool:
    """Whether ``newer`` makes ``waiting`` (queued, not yet sent) redundant."""
    if version == "0.3":
        return True  # 0.3 bodies are full Task snapshots
    new, old = newer.event, waiting.event
    return (
        isinstance(new, TaskArtifactUpdateEvent)
        and isinstance(old, TaskArtifactUpdateEvent)
        and not new.append
        and not old.append
        and new.artifact.artifact_id == old.artifact.artifact_id
    )


class Lanes:
    """The lanes of every (task, config) pair, and the deliveries outstanding in them."""

    def __init__(
        self,
        deliver: Callable[[Delivery], Awaitable[None]],
        marks: DeliveryMarks,
        counters: Counters,
        drop: Callable[[str], None],
        *,
        max_backlog: int,
        max_pending: int,
    ) -> None:
        """``deliver`` sends one delivery; ``drop`` counts and logs one dropped unsent."""
        self._deliver = deliver
        self._marks = marks
        self._counters = counters
        self._drop = drop
        self.max_backlog = max_backlog
        self.max_pending = max_pending
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self.pending = 0
        """Deliveries waiting in lanes or in flight."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._room: asyncio.Event | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run lanes on ``loop`` from now on."""
        self._loop = loop
        self._room = asyncio.Event()

    def runners(self) -> set[asyncio.Task[None]]:
        """The lanes sending now."""
        return {lane.runner for lane in self._lanes.values() if lane.runner is not None}

    def clear(self) -> int:
        """Forget every lane (the notifier closed); returns the deliveries left unsent."""
        unsent = sum(len(lane.queue) for lane in self._lanes.values())
        self._lanes.clear()
        self.pending = 0
        return unsent

    async def wait_for_room(self) -> None:
        """Return once fewer than ``max_pending`` deliveries are outstanding."""
        assert self._room is not None
        while self.pending >= self.max_pending:
            self._room.clear()
            await self._room.wait()

    def put(self, version: str, delivery: Delivery) -> None:
        """Queue ``delivery`` on its lane (bodies in ``version``), starting the lane if idle."""
        key = (delivery.task_id, delivery.config_id)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        self._marks.opened(delivery.task_id, delivery.event_id)
        if lane.queue and _supersedes(version, delivery, lane.queue[-1]):
            # The newest whole state replaces one still waiting (never one in flight).
            superseded = lane.queue[-1]
            lane.queue[-1] = replace(delivery, final=delivery.final or superseded.final)
            # its end travels on in the newer
            self._marks.finished(superseded.task_id, superseded.event_id, False)
        else:
            if len(lane.queue) >= self.max_backlog:
                self._finished(lane.queue.popleft())
                self.pending -= 1
                self._drop(
                    f"push backlog of task {key[0]} config {key[1]} is full "
                    f"({self.max_backlog}); dropped its oldest update"
                )
            lane.queue.append(delivery)
            self.pending += 1
        if lane.runner is None:
            assert self._loop is not None
            lane.runner = self._loop.create_task(self._drain(key, lane), name="a2a-push-lane")

    async def _drain(self, key: tuple[str, str], lane: _Lane) -> None:
        try:
            while lane.queue:
                delivery = lane.queue.popleft()
                try:
                    await self._deliver(delivery)
                except asyncio.CancelledError:
                    self._counters.dropped += 1
                    raise
                except Exception:
                    self._counters.failed += 1
                    logger.exception("push: delivery for task %s config %s crashed", key[0], key[1])
                finally:
                    self.pending -= 1
                    if self._room is not None:
                        self._room.set()
                self._finished(delivery)  # not when cancelled: a survivor sends it again
        finally:
            lane.runner = None
            if self._lanes.get(key) is lane and not lane.queue:
                del self._lanes[key]

    def _finished(self, delivery: Delivery) -> None:
        """A delivery is done with: delivered, given up on, dropped or superseded."""
        self._marks.finished(delivery.task_id, delivery.event_id, delivery.final)
