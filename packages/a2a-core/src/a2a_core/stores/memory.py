"""The embedded default store: tasks in a dict, bounded by evicting old terminal tasks.

Finished tasks are kept as their compact JSON, deflated (a fraction of the
memory of the model objects: pydantic keeps per-instance bookkeeping on every
nested model), and decoded on read; tasks still in progress stay objects, since they
change often. Listing filters on kept metadata and decodes only the page.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict

from ..types import Task, TaskState
from .base import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    decode_cursor,
    encode_cursor,
    sort_key,
)

_ = sort_key  # the order ``_Entry.key`` reproduces

__all__ = ["MemoryTaskStore"]

_to_json = Task.__pydantic_serializer__.to_json


class _Entry:
    """One stored task: metadata for filtering, and the task as an object or as JSON."""

    __slots__ = ("_blob", "_task", "context_id", "owner", "state", "ts", "version")

    def __init__(self, task: Task, version: int, owner: str | None) -> None:
        self.version = version
        self.owner = owner
        self.state: TaskState = task.status.state
        self.context_id = task.context_id
        stamp = task.status.timestamp
        self.ts: float | None = stamp.timestamp() if stamp is not None else None
        if self.state.is_terminal:
            self._task: Task | None = None
            self._blob: bytes | None = zlib.compress(_to_json(task, by_alias=True), 1)
        else:
            self._task = task
            self._blob = None

    def key(self, task_id: str) -> tuple[float, str]:
        """The same order as ``sort_key``: newest status first, then by id."""
        return (-(self.ts or 0.0), task_id)

    @property
    def task(self) -> Task:
        if self._task is not None:
            return self._task
        assert self._blob is not None
        return Task.model_validate_json(zlib.decompress(self._blob))

    def stored(self) -> StoredTask:
        return StoredTask(self.task, self.version, self.owner)


class MemoryTaskStore(TaskStore):
    """In-process store. ``max_tasks`` bounds memory: past it, the least recently
    updated terminal tasks are evicted (active and paused tasks are never evicted).
    """

    def __init__(self, max_tasks: int = 10_000) -> None:
        if max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        self.max_tasks = max_tasks
        self._tasks: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        if task.id in self._tasks:
            raise ConcurrentUpdateError(f"task {task.id} already exists")
        self._tasks[task.id] = _Entry(task, 1, owner)
        self._evict()
        return StoredTask(task, 1, owner)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        entry = self._tasks.get(task_id)
        if entry is None or entry.owner != owner:
            return None
        return entry.stored()

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        current = self._tasks.get(task.id)
        if current is None or current.owner != owner:
            raise ConcurrentUpdateError(f"task {task.id} no longer exists")
        if current.version != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current.version}, expected {expected_version}"
            )
        self._tasks[task.id] = _Entry(task, expected_version + 1, owner)
        self._tasks.move_to_end(task.id)
        return StoredTask(task, expected_version + 1, owner)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        entry = self._tasks.get(task_id)
        if entry is None or entry.owner != owner:
            return False
        del self._tasks[task_id]
        return True

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        after_ts = query.status_after.timestamp() if query.status_after is not None else None
        matching = [
            (e.key(tid), e)
            for tid, e in self._tasks.items()
            if e.owner == owner and _matches(e, query, after_ts)
        ]
        matching.sort(key=lambda pair: pair[0])
        start = 0
        if query.page_token:
            after = decode_cursor(query.page_token)
            while start < len(matching) and matching[start][0] <= after:
                start += 1
        page = [e.task for _, e in matching[start : start + query.page_size]]
        more = start + query.page_size < len(matching)
        token = encode_cursor(page[-1]) if more and page else ""
        return TaskPage(tasks=page, next_page_token=token, total_size=len(matching))

    def _evict(self) -> None:
        excess = len(self._tasks) - self.max_tasks
        if excess <= 0:
            return
        victims: list[str] = []
        for task_id, entry in self._tasks.items():  # least recently updated first
            if entry.state.is_terminal:
                victims.append(task_id)
                if len(victims) == excess:
                    break
        for task_id in victims:
            del self._tasks[task_id]


def _matches(entry: _Entry, query: TaskQuery, after_ts: float | None) -> bool:
    if query.context_id is not None and entry.context_id != query.context_id:
        return False
    if query.state is not None and entry.state is not query.state:
        return False
    return not (after_ts is not None and (entry.ts is None or entry.ts < after_ts))
