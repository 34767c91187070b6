"""Stored answer files in process memory: the ``FileBackend`` of ``memory://`` (one instance)."""

from __future__ import annotations

from collections import OrderedDict

from ..contracts.files import FileBackend, FileLimits, StoredFile

__all__ = ["MemoryFileBackend"]


class MemoryFileBackend(FileBackend):
    """Files in a dict, oldest first; bytes counted in all and per task."""

    def __init__(self) -> None:
        self._files: OrderedDict[str, StoredFile] = OrderedDict()
        self._bytes = 0
        self._task_bytes: dict[str, int] = {}

    def _drop(self, token: str) -> None:
        found = self._files.pop(token, None)
        if found is None:
            return
        size = len(found.data)
        self._bytes -= size
        left = self._task_bytes.get(found.task_id, 0) - size
        if left > 0:
            self._task_bytes[found.task_id] = left
        else:
            self._task_bytes.pop(found.task_id, None)

    def _expire(self, now: float) -> None:
        for token in [t for t, f in self._files.items() if f.expires <= now]:
            self._drop(token)

    async def put(self, token: str, file: StoredFile, limits: FileLimits, now: float) -> bool:
        size = len(file.data)
        self._expire(now)
        if self._task_bytes.get(file.task_id, 0) + size > limits.max_task_bytes:
            return False
        while self._files and (
            self._bytes + size > limits.max_bytes or len(self._files) >= limits.max_files
        ):
            self._drop(next(iter(self._files)))
        self._files[token] = file
        self._bytes += size
        self._task_bytes[file.task_id] = self._task_bytes.get(file.task_id, 0) + size
        return True

    async def get(self, token: str, now: float) -> StoredFile | None:
        found = self._files.get(token)
        if found is None:
            return None
        if found.expires <= now:
            self._drop(token)
            return None
        return found

    async def drop_task(self, task_id: str) -> int:
        tokens = [t for t, f in self._files.items() if f.task_id == task_id]
        for token in tokens:
            self._drop(token)
        return len(tokens)

    async def usage(self, now: float) -> tuple[int, int]:
        self._expire(now)
        return len(self._files), self._bytes
