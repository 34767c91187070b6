"""How a run's task reaches the store: one writer per run, chosen from what the store does.

The run applies its agent's events (``run.TaskRun``); its writer makes them durable
and numbers them. An event's id is the task version its save produced, so the
writer keeps the version bookkeeping: ``version`` (the id of the task's last
event), ``stored`` (the version the store holds) and, on a shared channel, the
id the channel last recorded. Three writers, picked once per run by
``writer_for``:

- ``DirectWriter`` saves every event (a store without ``SavesAtVersion``, or
  coalescing turned off). On a shared channel it publishes each event there too.
- ``CoalescingWriter`` holds streamed artifact chunks in memory and saves them
  together at the next status change, after ``ManagerConfig.store_coalesce_seconds``
  (its timer), or when a reader needs the stored task (``persist``). Its ``hold``
  is the run's one synchronous fast lane.
- ``ChannelWriter`` is the coalescing writer of a channel several instances share
  that writes behind (``WritesBehind``): each chunk is appended to the
  channel at once, with the id it is about to get, and saved later; whoever
  settles the task after this instance died applies the channel's events first.

A task is written when its run starts (or, for a send the agent may answer with a
bare message, with its first event): chunks are held only once the task exists.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from .. import telemetry as _telemetry
from ..contracts.channel import SavesEvents, TaskChannel, WritesBehind
from ..contracts.task_store import ConcurrentUpdateError, SavesAtVersion, StoredTask, TaskStore
from ..errors import A2AError, InternalError, ServerBusyError
from ..types import StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from .task_state import IllegalTransitionError, apply_artifact, apply_artifacts, apply_status

if TYPE_CHECKING:
    from .manager import TaskManager

__all__ = [
    "ChannelWriter",
    "CoalescingWriter",
    "DirectWriter",
    "RunWriter",
    "StoreAbilities",
    "publish_logged",
    "writer_for",
]

logger = logging.getLogger("a2a_core.server")

SAVE_ATTEMPTS = 3

Caught = Callable[[StoredTask | None], None]
"""The run's answer to a reload that found the task gone (None) or final elsewhere."""


async def publish_logged(
    channel: TaskChannel, task_id: str, event_id: int, event: StreamEvent, previous: int | None
) -> bool | None:
    """``TaskChannel.publish``; a failure is logged (the task itself is saved).

    False when the channel dropped the event as not above its last (a late writer).
    """
    try:
        return await channel.publish(task_id, event_id, event, previous)
    except Exception:
        logger.exception("task %s: could not publish event %d to the channel", task_id, event_id)
        return None


@dataclass(frozen=True, slots=True)
class StoreAbilities:
    """What a manager's store and channel can do, read once when the manager is built:
    every run's writer is chosen from it (``isinstance`` on a runtime-checkable protocol
    inspects the protocol's members on each call, too slow for every request). Whether
    the channel is shared is asked per run: a channel may learn it when it starts."""

    saves_at_version: bool
    """The store numbers saves (``SavesAtVersion``): chunks may be held and saved together."""
    writes_behind: bool
    """The channel keeps events and saves behind them (``WritesBehind``)."""
    saves_events: bool
    """The channel saves an event with its task in one write (``SavesEvents``)."""

    @classmethod
    def of(cls, store: TaskStore, channel: TaskChannel) -> StoreAbilities:
        return cls(
            saves_at_version=isinstance(store, SavesAtVersion),
            writes_behind=isinstance(channel, WritesBehind),
            saves_events=isinstance(channel, SavesEvents),
        )


class RunWriter:
    """Saves one run's task, numbering its events; every write happens under the run's lock.

    ``task`` is the latest state of the task; ``version`` its last event's id.
    Subclasses decide which artifact chunks wait to be saved together.
    """

    def __init__(
        self,
        manager: TaskManager,
        task: Task,
        owner: str | None,
        version: int,
        caught: Caught,
        channel: TaskChannel | None = None,
    ) -> None:
        self._store: TaskStore = manager.store
        self._backend = type(manager.backend).__name__
        """The store's name in telemetry (``store`` may be the timing wrapper)."""
        self._task = task
        self._owner = owner
        self.version: int = version
        """The id of ``task``'s last event (0: not stored yet)."""
        self.stored: int = version
        """The version the store holds (below ``version`` while chunks are held)."""
        self.published: int = version
        """The id of the task's last event the channel records (a shared channel only)."""
        self.error: InternalError | None = None
        """Why the last save failed (cleared by a later successful save)."""
        self._max_history = manager.config.max_history
        self._caught = caught
        self._channel = channel
        """The channel other instances read (None: nobody else reads what is published)."""
        self._saves_events = (
            cast("SavesEvents", channel)
            if channel is not None and manager.abilities.saves_events
            else None
        )
        """The channel again when it saves an event with its task in one write."""
        self._chunks: list[TaskArtifactUpdateEvent] = []
        """Held artifact events not yet applied to ``_task`` (``task`` applies them)."""
        self._unsaved: list[TaskArtifactUpdateEvent] = []
        """Every artifact event held since the last save (re-applied after a conflict)."""

    @property
    def task(self) -> Task:
        if self._chunks:
            self._task = apply_artifacts(self._task, self._chunks)
            self._chunks = []
        return self._task

    @property
    def head(self) -> Task:
        """The task without the held chunks applied: its id and state are the same."""
        return self._task

    @property
    def dirty(self) -> bool:
        """Whether the store is behind: the task was never written, or chunks are held."""
        return not self.stored or bool(self._unsaved)

    # -- chunks -----------------------------------------------------------------------
    def hold(self, chunk: TaskArtifactUpdateEvent) -> bool | None:
        """Hold ``chunk`` without awaiting; whether the held chunks are due to be saved now.

        None: this writer does not take it here (``add`` then saves or holds it).
        """
        return None

    async def add(self, chunk: TaskArtifactUpdateEvent) -> bool | None:
        """``hold`` for a chunk that may need to await (a channel first); None: save it."""
        return self.hold(chunk)

    async def flush(self) -> None:
        """Save the held chunks (no-op when none are held)."""

    def close(self) -> None:
        """The run ended: hold nothing more (late events from the agent are saved one by one)."""

    # -- saves ------------------------------------------------------------------------
    async def save(self, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> Task:
        """Apply ``event`` to the task and store the result, re-applying after a conflict.

        Held chunks are saved with it (one write). ``share`` then tells the channel.
        """
        for _ in range(SAVE_ATTEMPTS):
            if isinstance(event, TaskStatusUpdateEvent):
                new_task = apply_status(self.task, event, self._max_history)
            else:
                new_task = apply_artifact(self.task, event)
            try:
                self._shared = await self._write(new_task, self.version + 1, event)
            except ConcurrentUpdateError:
                await self.reload()
                continue
            return new_task
        raise self._kept_changing()

    async def share(self, event: StreamEvent) -> None:
        """Publish a saved event to the shared channel (if any), unless its save did."""
        channel = self._channel
        if channel is not None:
            if not self._shared:
                await publish_logged(channel, self._task.id, self.version, event, self.published)
            self.published = self.version

    async def persist(self) -> None:
        """Write what the store lacks: the task itself, or the held chunks."""
        if not self.stored:
            await self._write(self.task)
        elif self._unsaved:
            await self.flush()

    async def end(self, *, replied: bool) -> None:
        """The run ended: write what the store lacks. A task written at its start for a
        retried send to find, then answered with a bare message, is deleted (no task);
        one left neither final nor paused is marked ended on the shared channel, for
        the followers elsewhere."""
        if replied:
            if self.stored:
                await self._store.delete(self._task.id, self._owner)
            return
        await self.persist()
        state = self._task.status.state
        unsettled = not (state.is_terminal or state.is_interrupted)
        if self._channel is not None and self.version and unsettled:
            await self._channel.publish_end(self._task.id, self.version)

    async def replace(self, task: Task) -> None:
        """Save ``task`` (a continuation: the new message, WORKING) over the stored one."""
        await self._write(task)

    async def reload(self) -> None:
        """Someone else saved the task (another instance, a concurrent cancel): catch up."""
        stored = await self._store.get(self._task.id, self._owner)
        if stored is None:
            self._caught(None)
            raise IllegalTransitionError("the task no longer exists")
        self._task, self._chunks = stored.task, []
        self.version = self.stored = stored.version
        if stored.task.status.state.is_terminal:
            self._unsaved = []  # nothing more can be added to it
            self._caught(stored)
        elif self._unsaved:
            # Held chunks (already streamed) join what another writer stored; the next
            # save writes them, numbered after it (and after the ids they were
            # published with: a shared channel's ids only grow).
            self._chunks = list(self._unsaved)
            self.version = max(stored.version + len(self._unsaved), self.published)

    async def _write(
        self, task: Task, version: int | None = None, event: StreamEvent | None = None
    ) -> bool:
        """Store ``task`` at ``version`` (default: the run's version, as the first save or
        a flush of held chunks) over the stored version; True when ``event`` was published
        in the same write."""
        store = self._store
        stored_at = self.stored
        published = False
        if version is None:
            version = max(self.version, stored_at + 1)
        try:
            if stored_at == 0:
                stored = await store.create(task, self._owner)
            elif event is not None and self._saves_events is not None:
                stored = await self._save_and_publish(task, event, version)
                published = True
            elif version == stored_at + 1:
                stored = await store.save(task, self._owner, stored_at)
            else:
                numbered = cast("SavesAtVersion", store)  # only coalescing writers hold chunks
                stored = await numbered.save_at(task, self._owner, stored_at, version)
        except (ConcurrentUpdateError, ServerBusyError):
            raise  # a conflict to re-apply, or a full store: retryable, not a failure
        except Exception as exc:
            logger.exception("task %s: the task store failed", task.id)
            self.error = InternalError("The task could not be saved")
            raise self.error from exc
        self._saved()
        self.version = self.stored = stored.version
        self._task, self._chunks, self._unsaved = task, [], []
        self.error = None
        return published

    async def _save_and_publish(self, task: Task, event: StreamEvent, version: int) -> StoredTask:
        """Save and publish in one write (``SavesEvents``), timed as a save."""
        channel = self._saves_events
        assert channel is not None
        stored_at = self.stored
        hooks = _telemetry.active
        started = time.perf_counter()
        try:
            if version == stored_at + 1:
                return await channel.save_and_publish(
                    task, self._owner, stored_at, event, self.published
                )
            return await channel.save_and_publish(
                task, self._owner, stored_at, event, self.published, version=version
            )
        finally:
            if hooks is not None:
                hooks.store_time("save", self._backend, time.perf_counter() - started)

    def _saved(self) -> None:
        """A write went through (a coalescing writer stops its timer)."""

    def _kept_changing(self) -> InternalError:
        self.error = InternalError("The task kept changing while it was being saved")
        return self.error

    _shared = False
    """Whether the last ``save`` published its event in the same write."""


class DirectWriter(RunWriter):
    """Saves every event on its own."""


class CoalescingWriter(RunWriter):
    """Holds artifact chunks in memory and saves them together, numbered (``save_at``)."""

    def __init__(
        self,
        manager: TaskManager,
        task: Task,
        owner: str | None,
        version: int,
        caught: Caught,
        channel: TaskChannel | None = None,
        *,
        delay: float,
        lock: AbstractAsyncContextManager[None],
    ) -> None:
        super().__init__(manager, task, owner, version, caught, channel)
        self._delay = delay
        """How long chunks may wait to be saved (0 once the run ended: saved one by one)."""
        self._since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._lock = lock
        """The run's lock: the timer's flush waits for the event or status being written."""

    def hold(self, chunk: TaskArtifactUpdateEvent) -> bool | None:
        """The fast lane: apply the chunk in memory, numbered now; saved with the next write.

        The chunk gets the next version as its id, and the write that saves it stores
        the task at the id of the last chunk it holds, so ids stay versions.
        """
        if not self.stored or not self._delay:
            return None
        return self._take(chunk)

    def _take(self, chunk: TaskArtifactUpdateEvent) -> bool:
        now = time.monotonic()
        if not self._unsaved:
            self._since = now
        self._chunks.append(chunk)
        self._unsaved.append(chunk)
        self.version += 1
        delay = self._delay
        if now - self._since >= delay:
            return True
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(delay, self._start_flusher)
        return False

    def _start_flusher(self) -> None:
        self._timer = None
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        async with self._lock:
            try:
                await self.flush()
            except A2AError:
                pass  # logged where it failed; the next save or the run's end tries again
            except Exception:
                logger.exception("task %s: could not save the streamed chunks", self._task.id)

    async def flush(self) -> None:
        for _ in range(SAVE_ATTEMPTS):
            if not self._unsaved:
                self._saved()
                return
            try:
                await self._write(self.task)
            except ConcurrentUpdateError:
                await self.reload()  # the held chunks are re-applied to what is stored
                continue
            return
        raise self._kept_changing()

    def close(self) -> None:
        self._delay = 0.0
        self._saved()

    def _saved(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class ChannelWriter(CoalescingWriter):
    """Appends each chunk to the shared channel at once and saves it with the next write."""

    def hold(self, chunk: TaskArtifactUpdateEvent) -> bool | None:
        return None  # the channel comes first: ``add``

    async def add(self, chunk: TaskArtifactUpdateEvent) -> bool | None:
        if not self.stored or not self._delay:
            return None
        channel = self._channel
        assert channel is not None
        # Published with the id it is about to get: a subscriber reading the run's task
        # and version meanwhile then gets it from this instance's bus, once.
        task_id = self._task.id
        sent = await publish_logged(channel, task_id, self.version + 1, chunk, self.published)
        if sent is False:
            # The channel holds a later event: another instance wrote the task after this
            # run's last one (it settled it while this instance was frozen).
            await self.reload()
            raise IllegalTransitionError(
                f"task {task_id} was written elsewhere ({self._task.status.state.value})"
            )
        due = self._take(chunk)
        self.published = self.version
        return due


def writer_for(
    manager: TaskManager,
    task: Task,
    owner: str | None,
    version: int,
    caught: Caught,
    lock: AbstractAsyncContextManager[None],
) -> RunWriter:
    """The writer for a run of ``task`` (stored at ``version``; 0: not yet), chosen once
    from what the store does, whether other instances share its channel, and the config.

    ``caught``: the run's answer to a reload finding the task gone or final elsewhere;
    ``lock``: the run's, taken by the coalescing timer's flush.
    """
    abilities = manager.abilities
    channel = manager.channel
    shared = channel if channel.shared else None
    delay = manager.config.store_coalesce_seconds
    if delay > 0 and abilities.saves_at_version:
        if shared is None:
            return CoalescingWriter(manager, task, owner, version, caught, delay=delay, lock=lock)
        if abilities.writes_behind:
            return ChannelWriter(
                manager, task, owner, version, caught, shared, delay=delay, lock=lock
            )
    return DirectWriter(manager, task, owner, version, caught, shared)
