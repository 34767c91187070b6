"""The embedded default store: tasks in a dict, bounded by evicting old terminal tasks.

Finished tasks are kept as their compact JSON (about a sixth of the memory of
the model objects: pydantic keeps per-instance bookkeeping on every nested
model) and decoded on read; tasks still in progress stay objects, since they
change often. Listing filters on kept metadata and decodes only the page.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime

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

__all__ = ["MemoryTaskStore"]

_to_json = Task.__pydantic_serializer__.to_json


class _Entry:
    """One stored task: metadata for filtering, and the task as an object or as JSON."""

    __slots__ = ("_blob", "_task", "context_id", "key", "owner", "state", "timestamp", "version")

    def __init__(self, task: Task, version: int, owner: str | None) -> None:
        self.version = version
        self.owner = owner
        self.state: TaskState = task.status.state
        self.context_id = task.context_id
        self.timestamp: datetime | None = task.status.timestamp
        self.key = sort_key(task)
        if self.state.is_terminal:
            self._task: Task | None = None
            self._blob: bytes | None = _to_json(task, by_alias=True)
        else:
            self._task = task
            self._blob = None

    @property
    def task(self) -> Task:
        if self._task is not None:
            return self._task
        assert self._blob is not None
        return Task.model_validate_json(self._blob)

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
        matching = [e for e in self._tasks.values() if e.owner == owner and _matches(e, query)]
        matching.sort(key=lambda e: e.key)
        start = 0
        if query.page_token:
            after = decode_cursor(query.page_token)
            while start < len(matching) and matching[start].key <= after:
                start += 1
        page = [e.task for e in matching[start : start + query.page_size]]
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


def _matches(entry: _Entry, query: TaskQuery) -> bool:
    if query.context_id is not None and entry.context_id != query.context_id:
        return False
    if query.state is not None and entry.state is not query.state:
        return False
    if query.status_after is not None:
        ts = entry.timestamp
        if ts is None or ts < query.status_after:
            return False
    return True
