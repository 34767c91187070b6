"""The compact in-memory store (``memory://``): tasks in a dict, bounded in count and in bytes.

It keeps the contract of ``MemoryTaskStore`` (``stores/memory.py``, the one to read
first) in less memory and with cheaper listings. Finished tasks are kept as their
JSON, deflated in packs of up to 32 (pydantic keeps per-instance bookkeeping on every
nested model, so the objects take several times the memory of their JSON), and
decoded on read; tasks still in progress stay objects, since they change often.
Listing walks an order kept from the first listing on (``_status_order``), filters
on kept metadata and decodes only the page. ``docs/stores.md`` says why this is the
default and links the measurements.

Both bounds evict the least recently updated finished tasks first. Tasks in
progress are never evicted: when they alone hold the byte budget, new tasks
(and growth of running ones) are refused with a retryable ``ServerBusyError``
instead, so one client cannot make the server hold unbounded memory.
"""

from __future__ import annotations

import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable

from ..contracts.task_store import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from ..errors import ServerBusyError
from ..types import Task, TaskState
from ..types._json import task_json
from ._sends import SendRecords
from ._sizes import estimated_json_size
from ._status_order import StatusOrder
from .cluster import SentMessages
from .memory import DEFAULT_MAX_BYTES

__all__ = ["CompactMemoryTaskStore"]

_to_json = Task.__pydantic_serializer__.to_json

_RAW_DEFLATE = -15
"""Raw deflate (no zlib header or checksum: the bytes never leave the process)."""
_MEM_LEVEL = 4
"""zlib's default clears a hash table sized for large inputs on every compressor; packs
are small, and come out the same size with this smaller one."""

_PACK_TASKS = 32
"""At most this many finished tasks share a pack (an index below 257: a shared small int)."""
_PACK_BYTES = 16 * 1024
"""A pack is deflated once its tasks' JSON reaches this; a larger task gets a pack alone.
Reading a task of a deflated pack inflates all of it, so packs stay small."""


class _Pack:
    """Finished tasks' JSON kept together: raw while the pack fills, deflated once full.

    Setting up a compressor costs more than compressing a small task with it (zlib clears
    its tables and builds its codes per call), so many tasks share one set-up; and tasks
    compressed together share their keys and ids, so they take fewer bytes than each
    deflated alone. A task is charged its share of the pack's bytes.
    """

    __slots__ = ("_blob", "_charges", "_counted", "_ends", "_raw")

    def __init__(self) -> None:
        self._raw: list[bytes] | None = []
        self._blob = b""
        self._ends = array("I")  # where each task's JSON ends in the whole
        self._charges = array("I")  # each task's share of the blob, once deflated
        self._counted = bytearray()  # 1 while the store counts the task's charge

    @property
    def open(self) -> bool:
        return self._raw is not None

    def _start(self, index: int) -> int:
        """Where task ``index``'s JSON starts in the whole (where the next one would)."""
        return self._ends[index - 1] if index else 0

    def fits(self, size: int) -> bool:
        """Whether a task of ``size`` bytes of JSON may join this open pack."""
        count = len(self._ends)
        return count < _PACK_TASKS and self._start(count) + size <= _PACK_BYTES

    def add(self, data: bytes) -> int:
        """Keep a task's JSON (the pack is open); its index in the pack."""
        assert self._raw is not None
        index = len(self._ends)
        self._raw.append(data)
        self._ends.append(self._start(index) + len(data))
        self._counted.append(0)
        return index

    def seal(self) -> int:
        """Deflate the pack; the change in the charges the store counts."""
        assert self._raw is not None
        compressor = zlib.compressobj(1, zlib.DEFLATED, _RAW_DEFLATE, _MEM_LEVEL)
        whole = b"".join(self._raw)
        self._blob = compressor.compress(whole) + compressor.flush()
        self._raw = None
        change = 0
        total, blob = len(whole) or 1, len(self._blob)
        for index, end in enumerate(self._ends):
            size = end - self._start(index)
            share = size * blob // total + 1
            self._charges.append(share)
            if self._counted[index]:
                change += share - size
        return change

    def charge(self, index: int) -> int:
        """Task ``index``'s bytes: its JSON while the pack is open, then its share."""
        if self._raw is not None:
            return self._ends[index] - self._start(index)
        return self._charges[index]

    def counted(self, index: int, counted: bool) -> None:
        self._counted[index] = counted

    def json(self, index: int) -> bytes:
        if self._raw is not None:
            return self._raw[index]
        global _last_inflated
        last = _last_inflated
        if last is not None and last[0] is self:
            whole = last[1]
        else:
            whole = zlib.decompress(self._blob, _RAW_DEFLATE)
            if len(self._ends) > 1:  # a listing's page reads a pack's tasks in a row
                _last_inflated = (self, whole)
        return whole[self._start(index) : self._ends[index]]


_last_inflated: tuple[_Pack, bytes] | None = None
"""The shared pack read last and its JSON (at most ``_PACK_BYTES``: a task too large to
share a pack is not kept)."""


_ENTRY_OVERHEAD = 400
"""Bytes charged per task beyond its payload (the entry, its key, its dict slot)."""
_LIVE_FACTOR = 2
"""Objects take more memory than their JSON: a live task is charged twice its JSON."""


class _Entry:
    """One stored task: metadata for filtering, and the task as an object or in a pack."""

    __slots__ = ("_data", "_number", "context_id", "owner", "state", "ts", "version")

    def __init__(
        self,
        task: Task,
        version: int,
        owner: str | None,
        pack: Callable[[bytes], tuple[_Pack, int]],
    ) -> None:
        self.version = version
        self.owner = owner
        self.state: TaskState = task.status.state
        self.context_id = task.context_id
        stamp = task.status.timestamp
        self.ts: float | None = stamp.timestamp() if stamp is not None else None
        self._data: Task | _Pack
        self._number: int
        """A live task's charged size, or a finished task's index in its pack."""
        if self.state.is_terminal:
            # One slot holds either form: a finished task's pack, or the live object.
            data = task_json(task) or _to_json(task, by_alias=True)
            self._data, self._number = pack(data)
        else:
            self._data = task
            # Estimated, not encoded: encoding it would cost more than the rest of the write.
            self._number = _LIVE_FACTOR * estimated_json_size(task) + _ENTRY_OVERHEAD

    @property
    def size(self) -> int:
        """The bytes this entry is charged (derived for finished tasks: nothing extra kept)."""
        data = self._data
        if isinstance(data, _Pack):
            return data.charge(self._number) + _ENTRY_OVERHEAD
        return self._number

    def counted(self, counted: bool) -> None:
        """The store counts this entry's size (or no longer does)."""
        data = self._data
        if isinstance(data, _Pack):
            data.counted(self._number, counted)

    @property
    def task(self) -> Task:
        data = self._data
        if isinstance(data, _Pack):
            return Task.model_validate_json(data.json(self._number))
        return data

    def stored(self) -> StoredTask:
        return StoredTask(self.task, self.version, self.owner)


class CompactMemoryTaskStore(TaskStore, SentMessages):
    """In-process store, bounded by ``max_tasks`` and ``max_bytes``; the ``memory://`` store.

    Past either bound the least recently updated terminal tasks are evicted
    (active and paused tasks never are). When the tasks in progress alone hold
    ``max_bytes``, creating a task, or growing a task in progress, raises a
    retryable ``ServerBusyError`` (``data["reason"]`` is
    ``"task_store_full"``). Sizes are the stored form: for a finished task its
    share of its pack's deflated JSON (its JSON while the pack fills), for a task
    in progress twice its JSON (its length estimated, ``estimated_json_size``).

    Idempotent sends (``SentMessages``) keep at most ``max_sends`` records,
    the oldest dropped first. No run leases: the
    tasks die with the process that runs them.
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
        self._tasks: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._live_bytes = 0
        self._open_pack = _Pack()
        self._finished = 0
        """How many stored tasks are terminal (the ones eviction may take)."""
        self._order: StatusOrder | None = None
        """ListTasks' order, kept from the first listing on (a store never listed keeps none)."""

    def __len__(self) -> int:
        return len(self._tasks)

    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        return self._sends.remember(key, task_id, now, retention)

    async def forget_send(self, key: str, task_id: str) -> None:
        self._sends.forget(key, task_id)

    @property
    def stored_bytes(self) -> int:
        """The bytes charged for every stored task."""
        return self._bytes

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        if task.id in self._tasks:
            raise ConcurrentUpdateError(f"task {task.id} already exists")
        entry = _Entry(task, 1, owner, self._pack)
        if not entry.state.is_terminal:
            self._check_room(entry.size)
        self._put(task.id, entry)
        self._evict()
        return StoredTask(task, 1, owner)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        entry = self._tasks.get(task_id)
        if entry is None or entry.owner != owner:
            return None
        return entry.stored()

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        return self._update(task, owner, expected_version, expected_version + 1)

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (``SavesAtVersion``)."""
        if version <= expected_version:
            raise ValueError("a save must advance the version")
        return self._update(task, owner, expected_version, version)

    def _update(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        current = self._tasks.get(task.id)
        if current is None or current.owner != owner:
            raise ConcurrentUpdateError(f"task {task.id} no longer exists")
        if current.version != expected_version:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current.version}, expected {expected_version}"
            )
        entry = _Entry(task, version, owner, self._pack)
        if not entry.state.is_terminal:
            held = current.size if not current.state.is_terminal else 0
            if entry.size > held:
                self._check_room(entry.size - held)
        self._uncount(current)
        self._tasks[task.id] = entry  # in place, then last: no hash-table churn
        self._tasks.move_to_end(task.id)
        self._count(entry)
        if self._order is not None and entry.ts != current.ts:
            self._order.moved(task.id, entry)
        self._evict()
        return StoredTask(task, version, owner)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        entry = self._tasks.get(task_id)
        if entry is None or entry.owner != owner:
            return False
        self._drop(task_id)
        return True

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        order = self._order
        if order is None:
            order = self._order = StatusOrder(self._tasks)
        return order.page(query, owner)

    # -- accounting ---------------------------------------------------------------------
    def _put(self, task_id: str, entry: _Entry) -> None:
        self._tasks[task_id] = entry  # a new key goes last: most recently updated
        self._count(entry)
        if self._order is not None:
            self._order.created(task_id, entry)

    def _drop(self, task_id: str) -> None:
        entry = self._tasks.pop(task_id)
        self._uncount(entry)
        if self._order is not None:
            self._order.removed(entry)

    def _count(self, entry: _Entry) -> None:
        size = entry.size
        self._bytes += size
        if entry.state.is_terminal:
            self._finished += 1
            entry.counted(True)
        else:
            self._live_bytes += size

    def _uncount(self, entry: _Entry) -> None:
        size = entry.size
        self._bytes -= size
        if entry.state.is_terminal:
            self._finished -= 1
            entry.counted(False)
        else:
            self._live_bytes -= size

    def _pack(self, data: bytes) -> tuple[_Pack, int]:
        """Put a finished task's JSON in the open pack (deflating the full one first)."""
        if len(data) >= _PACK_BYTES:  # alone, deflated at once: nothing counted yet
            pack = _Pack()
            index = pack.add(data)
            pack.seal()
            return pack, index
        pack = self._open_pack
        if not pack.fits(len(data)):
            self._bytes += pack.seal()  # its tasks' charges become their shares
            pack = self._open_pack = _Pack()
        return pack, pack.add(data)

    def _check_room(self, size: int) -> None:
        """Refuse work whose bytes would not fit even once every finished task is evicted.

        (Past ``max_tasks`` with only live tasks the store grows instead, as
        every store does; their bytes still count against ``max_bytes``.)
        """
        if self._live_bytes + size > self.max_bytes:
            raise ServerBusyError(
                "The task store is full of tasks in progress; retry later",
                data={"reason": "task_store_full", "retryable": True, "max_bytes": self.max_bytes},
            )

    def _evict(self) -> None:
        """Evict the least recently updated finished tasks until both bounds hold.

        Tasks in progress met on the way are moved to the end (their place in the
        order matters to nothing: they are never evicted, and a task that finishes
        moves to the end anyway), so a store holding thousands of them does not walk
        past them all again on every write; with no finished task, nothing is walked.
        """
        if len(self._tasks) <= self.max_tasks and self._bytes <= self.max_bytes:
            return
        if not self._finished:
            return
        victims: list[str] = []
        passed: list[str] = []
        count, size, left = len(self._tasks), self._bytes, self._finished
        for task_id, entry in self._tasks.items():  # least recently updated first
            if (count <= self.max_tasks and size <= self.max_bytes) or not left:
                break
            if entry.state.is_terminal:
                victims.append(task_id)
                count -= 1
                size -= entry.size
                left -= 1
            else:
                passed.append(task_id)
        for task_id in victims:
            self._drop(task_id)
        move_to_end = self._tasks.move_to_end
        for task_id in passed:
            move_to_end(task_id)
