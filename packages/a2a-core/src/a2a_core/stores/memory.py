"""The reference task store: the ``TaskStore`` contract kept in a dict, to read and to test with.

Everything a store must do is here in its plainest form:

- versions: ``create`` stores version 1; ``save`` succeeds only at the version the
  writer read, and adds one (optimistic concurrency: ``ConcurrentUpdateError``);
- owners: every call is scoped to an owner, and someone else's task is missing;
- listing: filter, sort newest status first (``sort_key``), and page with a
  cursor after the last task of the page (``encode_cursor``);
- bounds: past ``max_tasks`` tasks or ``max_bytes`` bytes the least recently
  written finished tasks are evicted; tasks in progress never are, so when they
  alone fill ``max_bytes`` new work is refused with a retryable ``ServerBusyError``;
- sent messages (``SentMessages``): which task a retried send already started.

``memory://`` opens ``CompactMemoryTaskStore`` (``stores/compact.py``), which keeps
the same contract in less memory and lists without sorting; ``docs/stores.md`` says
why, with the measurements.
"""

from __future__ import annotations

from ..contracts.task_store import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    decode_cursor,
    encode_cursor,
    sort_key,
)
from ..errors import ServerBusyError
from ..types import Task
from ._sends import SendRecords
from ._sizes import estimated_json_size
from .cluster import SentMessages

__all__ = ["DEFAULT_MAX_BYTES", "MemoryTaskStore"]

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""The default byte budget of the in-memory stores: fits a small server."""


class MemoryTaskStore(TaskStore, SentMessages):
    """Tasks in a dict, bounded by ``max_tasks`` and ``max_bytes``: the reference store.

    A task is charged the length of its JSON (estimated, ``estimated_json_size``).
    Idempotent sends keep at most ``max_sends`` records, the oldest dropped first.
    No run leases: the tasks die with the process that runs them.
    """

    def __init__(
        self,
        max_tasks: int = 10_000,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_sends: int = 10_000,
    ) -> None:
        if max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        if max_bytes <= 0:
            raise ValueError("max_bytes must be > 0")
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self.max_sends = max_sends
        self._sends = SendRecords(max_sends)
        self._tasks: dict[str, StoredTask] = {}
        """Every task, least recently written first (a write moves its task to the end)."""
        self._bytes = 0
        self._live_bytes = 0
        """The bytes of the tasks in progress: what eviction cannot give back."""

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def stored_bytes(self) -> int:
        """The bytes charged for every stored task."""
        return self._bytes

    # -- the contract ------------------------------------------------------------------
    async def create(self, task: Task, owner: str | None) -> StoredTask:
        if task.id in self._tasks:
            raise ConcurrentUpdateError(f"task {task.id} already exists")
        if not task.status.state.is_terminal:
            self._check_room(_size(task))
        stored = StoredTask(task, 1, owner)
        self._add(stored)
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
        if not task.status.state.is_terminal:
            held = 0 if current.task.status.state.is_terminal else _size(current.task)
            self._check_room(_size(task) - held)
        stored = StoredTask(task, expected_version + 1, owner)
        self._remove(task.id)
        self._add(stored)
        self._evict()
        return stored

    async def delete(self, task_id: str, owner: str | None) -> bool:
        stored = self._tasks.get(task_id)
        if stored is None or stored.owner != owner:
            return False
        self._remove(task_id)
        return True

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        matching = sorted(
            (s.task for s in self._tasks.values() if s.owner == owner and _matches(s.task, query)),
            key=sort_key,
        )
        if query.page_token:
            after = decode_cursor(query.page_token)
            matching_after = [t for t in matching if sort_key(t) > after]
        else:
            matching_after = matching
        tasks = matching_after[: query.page_size]
        more = len(matching_after) > query.page_size
        token = encode_cursor(tasks[-1]) if more and tasks else ""
        return TaskPage(tasks=tasks, next_page_token=token, total_size=len(matching))

    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        return self._sends.remember(key, task_id, now, retention)

    async def forget_send(self, key: str, task_id: str) -> None:
        self._sends.forget(key, task_id)

    # -- the bounds --------------------------------------------------------------------
    def _add(self, stored: StoredTask) -> None:
        self._tasks[stored.task.id] = stored  # a new key goes last: the latest written
        size = _size(stored.task)
        self._bytes += size
        if not stored.task.status.state.is_terminal:
            self._live_bytes += size

    def _remove(self, task_id: str) -> None:
        stored = self._tasks.pop(task_id)
        size = _size(stored.task)
        self._bytes -= size
        if not stored.task.status.state.is_terminal:
            self._live_bytes -= size

    def _check_room(self, size: int) -> None:
        """Refuse work whose bytes would not fit even once every finished task is evicted."""
        if self._live_bytes + size > self.max_bytes:
            raise ServerBusyError(
                "The task store is full of tasks in progress; retry later",
                data={"reason": "task_store_full", "retryable": True, "max_bytes": self.max_bytes},
            )

    def _evict(self) -> None:
        """Evict the least recently written finished tasks until both bounds hold.

        Past ``max_tasks`` with only tasks in progress the store grows instead: they
        are never evicted (their bytes are bounded by ``_check_room``).
        """
        while len(self._tasks) > self.max_tasks or self._bytes > self.max_bytes:
            oldest_finished = next(
                (s for s in self._tasks.values() if s.task.status.state.is_terminal), None
            )
            if oldest_finished is None:
                return
            self._remove(oldest_finished.task.id)


def _size(task: Task) -> int:
    return estimated_json_size(task)


def _matches(task: Task, query: TaskQuery) -> bool:
    """Whether ``task`` passes the query's filters (owner aside)."""
    if query.context_id is not None and task.context_id != query.context_id:
        return False
    if query.state is not None and task.status.state is not query.state:
        return False
    if query.status_after is not None:
        stamp = task.status.timestamp
        return stamp is not None and stamp.timestamp() >= query.status_after.timestamp()
    return True
