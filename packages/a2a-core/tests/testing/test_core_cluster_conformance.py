"""The cluster suite on ``memory://``: several services sharing one in-process store object."""

from __future__ import annotations

from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance


class TestMemoryCluster(ClusterConformance):
    _store: TaskStore | None = None

    async def make_store(self) -> TaskStore:
        if self._store is None:
            self._store = open_task_store("memory://")
        return self._store
