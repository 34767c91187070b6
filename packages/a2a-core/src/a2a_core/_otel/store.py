"""A task store whose operations are timed (``a2a.server.store.duration``)."""

from __future__ import annotations

import time
from typing import Any, cast

from ..contracts.task_store import (
    SavesAtVersion,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from ..types import Task

__all__ = ["TimedStore"]


class TimedStore(TaskStore):
    """Wraps a store; every operation's latency goes to the ``a2a_core`` meter."""

    def __init__(self, inner: TaskStore, hooks: Any) -> None:
        self.inner = inner
        self._hooks = hooks
        self._name = type(inner).__name__

    def __getattr__(self, name: str) -> Any:  # the wrapped store's own extras
        return getattr(self.inner, name)

    def _done(self, operation: str, started: float) -> None:
        self._hooks.store_time(operation, self._name, time.perf_counter() - started)

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        started = time.perf_counter()
        try:
            return await self.inner.create(task, owner)
        finally:
            self._done("create", started)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        started = time.perf_counter()
        try:
            return await self.inner.get(task_id, owner)
        finally:
            self._done("get", started)

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        started = time.perf_counter()
        try:
            return await self.inner.save(task, owner, expected_version)
        finally:
            self._done("save", started)

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        started = time.perf_counter()
        try:
            # called only when the inner store is one (the manager read it once, as a protocol)
            inner = cast("SavesAtVersion", self.inner)
            return await inner.save_at(task, owner, expected_version, version)
        finally:
            self._done("save", started)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        started = time.perf_counter()
        try:
            return await self.inner.delete(task_id, owner)
        finally:
            self._done("delete", started)

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        started = time.perf_counter()
        try:
            return await self.inner.list(query, owner)
        finally:
            self._done("list", started)

    async def aclose(self) -> None:
        await self.inner.aclose()
