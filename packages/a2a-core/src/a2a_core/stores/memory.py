"""The embedded default store: tasks in a dict, bounded by evicting old terminal tasks."""

from __future__ import annotations

from collections import OrderedDict

from ..types import Task
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


class MemoryTaskStore(TaskStore):
    """In-process store. ``max_tasks`` bounds memory: past it, the least recently
    updated terminal tasks are evicted (active and paused tasks are never evicted).
    """

    def __init__(self, max_tasks: int = 10_000) -> None:
        if max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        self.max_tasks = max_tasks
        self._tasks: OrderedDict[str, StoredTask] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        if task.id in self._tasks:
            raise ConcurrentUpdateError(f"task {task.id} already exists")
        stored = StoredTask(task, 1, owner)
        self._tasks[task.id] = stored
        self._evict()
        return stored

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        stored = self._tasks.get(task_id)
        if stored is None or stored.owner != owner:
            return None
        return stored

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        current = self._tasks.get(task.id)
        if current is None or current.owner != owner:
            raise ConcurrentUpdateError(f"task {task.id} no longer exists")
        if current.version != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current.version}, expected {expected_version}"
            )
        stored = StoredTask(task, expected_version + 1, owner)
        self._tasks[task.id] = stored
        self._tasks.move_to_end(task.id)
        return stored

    async def delete(self, task_id: str, owner: str | None) -> bool:
        stored = self._tasks.get(task_id)
        if stored is None or stored.owner != owner:
            return False
        del self._tasks[task_id]
        return True

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        matching = [
            s.task for s in self._tasks.values() if s.owner == owner and _matches(s.task, query)
        ]
        matching.sort(key=sort_key)
        start = 0
        if query.page_token:
            after = decode_cursor(query.page_token)
            while start < len(matching) and sort_key(matching[start]) <= after:
                start += 1
        page = matching[start : start + query.page_size]
        more = start + query.page_size < len(matching)
        token = encode_cursor(page[-1]) if more and page else ""
        return TaskPage(tasks=page, next_page_token=token, total_size=len(matching))

    def _evict(self) -> None:
        excess = len(self._tasks) - self.max_tasks
        if excess <= 0:
            return
        victims: list[str] = []
        for task_id, stored in self._tasks.items():  # least recently updated first
            if stored.task.status.state.is_terminal:
                victims.append(task_id)
                if len(victims) == excess:
                    break
        for task_id in victims:
            del self._tasks[task_id]


def _matches(task: Task, query: TaskQuery) -> bool:
    if query.context_id is not None and task.context_id != query.context_id:
        return False
    if query.state is not None and task.status.state is not query.state:
        return False
    if query.status_after is not None:
        ts = task.status.timestamp
        if ts is None or ts < query.status_after:
            return False
    return True
