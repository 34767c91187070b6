"""The delivered-up-to mark of each task: what a survivor need not deliver again.

Every event id up to a task's mark has been finished by every lane of the task
(delivered, given up on, dropped or superseded). The marks that moved are
written to the push config store off the event path, at once and then at most
once per ``interval`` (``PushConfigStore.write_marks``); ``recovery`` reads
them back when a survivor settles a task whose instance died.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...contracts.push_configs import PushConfigStore

__all__ = ["DeliveryMarks"]

logger = logging.getLogger("a2a_core.server.push")


@dataclass(slots=True)
class _Progress:
    """What the lanes of one task have finished: the base of its delivered-up-to mark."""

    open: dict[int, int] = field(default_factory=dict[int, int])
    """Event id -> its fan-out and deliveries not finished yet."""
    done: int = -1
    """The highest event id finished."""
    written: int = -1
    """The mark last written to the store."""
    final: bool = False
    """The task's final update was finished on a lane (nothing more to protect)."""

    def mark(self) -> int:
        """Every event id up to this one is finished (ids are increasing per task)."""
        return min(self.open) - 1 if self.open else self.done


class DeliveryMarks:
    """Counts what each task's lanes still owe per event id, and writes the marks that moved."""

    def __init__(self, store: Callable[[], PushConfigStore], interval: float) -> None:
        """``store``: the push config store in use now (a notifier may be given a shared one)."""
        self._store = store
        self.interval = interval
        self._progress: dict[str, _Progress] = {}
        self._dirty: set[str] = set()
        self.writer: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    def bind(self) -> None:
        """Start over on a new event loop (the writer, if any, belonged to the old one)."""
        self._wake = asyncio.Event()
        self.writer = None

    def ensure_writing(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run the writer when the store keeps marks (it may have been shared after start)."""
        if self._store().keeps_marks and (self.writer is None or self.writer.done()):
            self.writer = loop.create_task(self._write(), name="a2a-push-marks")

    def clear(self) -> None:
        """Forget every task (the notifier closed)."""
        self._progress.clear()
        self._dirty.clear()

    def fan_out(self, task_id: str, event_id: int | None, configs: bool) -> bool:
        """Count an event's fan-out as open; False when no mark is kept for it.

        ``configs``: the task has configs to fan out to. A task without any is tracked
        only while earlier events of it are still open.
        """
        if event_id is None or not self._store().keeps_marks:
            return False
        if configs or task_id in self._progress:
            progress = self._progress.get(task_id)
            if progress is None:
                progress = self._progress[task_id] = _Progress()
            progress.open[event_id] = progress.open.get(event_id, 0) + 1
        return True

    def opened(self, task_id: str, event_id: int | None) -> None:
        """A delivery of the event was queued on one of the task's lanes."""
        if event_id is None:
            return
        progress = self._progress.get(task_id)
        if progress is not None:
            open_ = progress.open
            open_[event_id] = open_.get(event_id, 0) + 1

    def finished(self, task_id: str, event_id: int | None, final: bool) -> None:
        """A fan-out or delivery is done with: delivered, given up on, dropped or superseded."""
        if event_id is None:
            return
        progress = self._progress.get(task_id)
        if progress is None:
            return
        left = progress.open.get(event_id, 0) - 1
        if left > 0:
            progress.open[event_id] = left
        else:
            progress.open.pop(event_id, None)
            progress.done = max(progress.done, event_id)
        if final:
            progress.final = True
        if not progress.open and (progress.final or progress.written == progress.done):
            del self._progress[task_id]  # a finished task is never settled: no mark needed
            self._dirty.discard(task_id)
        elif progress.mark() > progress.written:
            self._dirty.add(task_id)
            if self._wake is not None:
                self._wake.set()

    async def _write(self) -> None:
        """Write the marks that moved: at once, then at most once per ``interval``."""
        assert self._wake is not None
        wake = self._wake
        while True:
            while not self._dirty:
                wake.clear()
                await wake.wait()
            marks: dict[str, int] = {}
            for task_id in self._dirty:
                progress = self._progress.get(task_id)
                if progress is not None and progress.mark() > progress.written:
                    marks[task_id] = progress.mark()
            self._dirty.clear()
            if marks:
                try:
                    await self._store().write_marks(marks)
                except Exception:
                    logger.warning("push: could not write delivery marks", exc_info=True)
                    self._dirty.update(marks)  # tried again next period
                else:
                    for task_id, mark in marks.items():
                        progress = self._progress.get(task_id)
                        if progress is None:
                            continue
                        progress.written = max(progress.written, mark)
                        if not progress.open and progress.written >= progress.done:
                            del self._progress[task_id]
            await asyncio.sleep(self.interval)
