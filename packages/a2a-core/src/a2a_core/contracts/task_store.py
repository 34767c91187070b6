"""The TaskStore contract: tasks with optimistic versioning and owner scoping."""

from __future__ import annotations

import base64
import binascii
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import InvalidParamsError
from ..types import Task, TaskState

if TYPE_CHECKING:
    from .channel import TaskChannel
    from .files import FileBackend

__all__ = [
    "ConcurrentUpdateError",
    "SavesAtVersion",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "decode_cursor",
    "encode_cursor",
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


@runtime_checkable
class SavesAtVersion(Protocol):
    """A store that can number a save: ``save_at`` stores the task at a version above the
    expected one (sqlite, memory, redis, postgresql do).

    Several events applied in memory and saved at once then keep their ids: the stored
    version is the id of the last of them. A store without it has each event saved on
    its own. Checked with ``isinstance`` on the store object: a subclass inherits the
    capability with the method.
    """

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (above ``expected_version``); else
        ``ConcurrentUpdateError`` as ``save``."""
        ...


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
