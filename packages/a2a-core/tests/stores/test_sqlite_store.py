"""``sqlite://``: the conformance suite, and what only a file can show (tasks outlive the store)."""

from __future__ import annotations

from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import TaskStoreConformance


class TestSqliteFileStore(TaskStoreConformance):
    supports_eviction = True

    async def make_store(self) -> TaskStore:
        return open_task_store(f"sqlite:///{self.tmp_path / 'tasks.db'}")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"sqlite:///{self.tmp_path / 'tasks.db'}?max_tasks={max_tasks}")
