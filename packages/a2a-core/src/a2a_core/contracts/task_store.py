"""The TaskStore contract: tasks with optimistic versioning and owner scoping."""

from __future__ import annotations

import base64
import binascii
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import InvalidParamsError
from ..types import Task, TaskState

if TYPE_CHECKING:
    from .channel import TaskChannel
    from .files import FileBackend

__all__ = [
    "ConcurrentUpdateError",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "decode_cursor",
    "encode_cursor",
    "numbers_creates",
    "saves_behind",
    "sort_key",
]


class ConcurrentUpdateError(Exception):
    """Another writer saved the task since it was read (optimistic concurrency)."""


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task as stored, with its version (incremented on every save) and owner."""

    task: Task
    version: int
    owner: str | None


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """ListTasks filters and pagination, already validated."""

    context_id: str | None = None
    state: TaskState | None = None
    status_after: datetime | None = None
    page_size: int = 50
    page_token: str | None = None


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of tasks, newest status first."""

    tasks: list[Task]
    next_page_token: str
    total_size: int


class TaskStore(ABC):
    """Where tasks live. Every method is scoped to an owner (None = anonymous scope).

    A task owned by someone else is reported exactly like a missing one.
    """

    @abstractmethod
    async def create(self, task: Task, owner: str | None) -> StoredTask:
        """Store a new task at version 1."""

    @abstractmethod
    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        """The task, or None when missing or not the owner's."""

    @abstractmethod
    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        """Replace the task if it is still at ``expected_version``; else ConcurrentUpdateError."""

    write_behind: bool = False
    """Whether a streaming task's artifact chunks may be saved together, a few milliseconds
    apart, instead of one save each (see ``ManagerConfig.store_coalesce_seconds``): true
    for ``sqlite://`` (a save is a disk write) and ``memory://`` (a save serializes the task
    to size it). Such a store implements ``save_at``. The manager never holds events on a
    store whose channel is shared by several instances, nor on a subclass that overrides
    only ``save`` (``saves_behind``)."""

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (above ``expected_version``).

        Several events applied in memory and saved at once: the stored version is the id
        of the last of them, so event ids stay the versions saves produce. Only called
        when ``write_behind`` is true.
        """
        if version == expected_version + 1:
            return await self.save(task, owner, expected_version)
        raise NotImplementedError(f"{type(self).__name__} does not number saves")

    creates_at_version: bool = False
    """Whether ``create_at`` numbers a new task's first write (true for ``memory://`` and
    ``sqlite://``). Then a new task nobody can know of yet (a blocking send's: no stream
    follows it, no push config names it) has its first artifact chunks held like later
    ones, and is written with its first status change, the end of its run, or the
    coalescing interval, whichever comes first: a blocking send whose agent answers at
    once writes its task once, not twice. A subclass that overrides only ``create``
    keeps every creation going through it (``numbers_creates``)."""

    async def create_at(self, task: Task, owner: str | None, version: int) -> StoredTask:
        """``create``, numbering the new task ``version`` (the id of the last event it
        holds). Only called when ``creates_at_version`` is true."""
        if version == 1:
            return await self.create(task, owner)
        raise NotImplementedError(f"{type(self).__name__} does not number creates")

    @abstractmethod
    async def delete(self, task_id: str, owner: str | None) -> bool:
        """Remove the task; False when missing or not the owner's."""

    @abstractmethod
    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        """Tasks matching ``query``, newest status timestamp first, cursor-paginated."""

    def event_channel(self) -> TaskChannel | None:
        """The channel instances sharing this store use for events, cancels and push configs.

        None (the default): one process serves the store, and the service uses
        an in-process channel per store object (see ``a2a_core.server.memory_channel``).
        A store shared by several processes returns its backend's channel (the
        same object on every call).
        """
        return None

    def file_backend(self) -> FileBackend | None:
        """Where the app keeps answer files it serves by URL (``a2a_core.server.files``).

        None (the default): process memory, for a store one process serves. A
        store shared by several processes returns a backend in the same
        database, so every instance serves the files any instance stored (the
        same object on every call).
        """
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections (called at shutdown, after every agent has stopped)."""


_EPOCH = datetime.fromtimestamp(0).astimezone()


def sort_key(task: Task) -> tuple[float, str]:
    """Newest status first, ties broken by id (as a key for ascending sort: negate time)."""
    ts = task.status.timestamp
    return (-(ts.timestamp() if ts is not None else 0.0), task.id)


def encode_cursor(task: Task) -> str:
    """An opaque page token pointing just after ``task`` in sort order."""
    key = sort_key(task)
    raw = f"{key[0]!r}|{key[1]}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(token: str) -> tuple[float, str]:
    """The sort key a page token points after; InvalidParamsError when malformed."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        neg_ts, task_id = raw.split("|", 1)
        return (float(neg_ts), task_id)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParamsError("Invalid page token") from None


def numbers_creates(store: TaskStore) -> bool:
    """Whether the manager may hold a new task's first write and number it
    (``TaskStore.create_at``): the store says so, and its ``create_at`` is at least as
    specific as its ``create``. A subclass that overrides only ``create`` (to audit it, or
    a test's failing store) keeps every creation going through its ``create``."""
    return store.creates_at_version and _as_specific(store, "create_at", "create")


def saves_behind(store: TaskStore) -> bool:
    """Whether the manager may hold artifact chunks and save several at once, numbered
    (``TaskStore.save_at``): the store says so (``write_behind``), and its ``save_at`` is
    at least as specific as its ``save``. A subclass that overrides only ``save`` (to
    audit it, or a test's failing store) keeps every save going through its ``save``:
    each chunk is then saved on its own."""
    return store.write_behind and _as_specific(store, "save_at", "save")


def _as_specific(store: TaskStore, numbered: str, plain: str) -> bool:
    """Whether the class defining ``store``'s ``numbered`` method is the one defining its
    ``plain`` method or a subclass of it (the numbered one sees what the plain one does)."""
    mro = type(store).__mro__
    numbered_in = next(cls for cls in mro if numbered in cls.__dict__)
    plain_in = next(cls for cls in mro if plain in cls.__dict__)
    return issubclass(numbered_in, plain_in)
