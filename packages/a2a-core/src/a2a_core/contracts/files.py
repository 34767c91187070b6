"""What a file store keeps and where: ``StoredFile``, ``FileLimits``, the ``FileBackend`` contract.

A backend holds the bytes (process memory, or the task store's database);
``a2a_core.server.files.FileStore`` mints the tokens, applies the access
rules and rewrites answers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["FileBackend", "FileLimits", "StoredFile"]


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file the store serves.

    ``owner``: the principal who may fetch it (None: anyone holding the URL);
    ``task_owner``: the task store's owner key of its task (to check that the
    task still exists); ``expires``: epoch seconds; ``task_bound``: False for a
    file of a direct message reply (no task is stored, so none is checked).
    """

    data: bytes
    media_type: str
    filename: str | None
    task_id: str
    owner: str | None
    expires: float
    task_owner: str | None = None
    task_bound: bool = True

    COLUMNS: ClassVar[str] = (
        "data, media_type, filename, task_id, owner, expires_at, task_owner, task_bound"
    )
    """The ``a2a_files`` columns ``from_row`` reads, in its order (the SQL backends')."""

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> StoredFile:
        """A file from an ``a2a_files`` row selected as ``COLUMNS``."""
        data, media, name, task_id, owner, expires, task_owner, bound = row
        return cls(
            bytes(data),
            media,
            name,
            task_id,
            owner,
            expires,
            task_owner=task_owner,
            task_bound=bool(bound),
        )


@dataclass(frozen=True, slots=True)
class FileLimits:
    """What a backend keeps at most: bytes and files in all, bytes per task."""

    max_bytes: int
    max_files: int
    max_task_bytes: int


class FileBackend(ABC):
    """Where stored files live; each call is atomic for every instance sharing the backend."""

    @abstractmethod
    async def put(self, token: str, file: StoredFile, limits: FileLimits, now: float) -> bool:
        """Keep ``file`` under ``token`` within ``limits``: drop expired files, refuse it
        (False) when its task would hold more than ``max_task_bytes``, else drop the
        oldest files until it fits ``max_bytes`` and ``max_files``, and keep it."""

    @abstractmethod
    async def get(self, token: str, now: float) -> StoredFile | None:
        """The file under ``token`` unless missing or expired at ``now``."""

    @abstractmethod
    async def drop_task(self, task_id: str) -> int:
        """Forget every file of a task; how many there were."""

    @abstractmethod
    async def usage(self, now: float) -> tuple[int, int]:
        """Files and bytes held at ``now`` (expired files dropped first)."""
