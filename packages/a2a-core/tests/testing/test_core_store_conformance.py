"""The core runs the task-store suite against ``memory://`` (opened by URL, as servers do)
and against the reference ``MemoryTaskStore``."""

from __future__ import annotations

from a2a_core.adapters import open_task_store
from a2a_core.stores import MemoryTaskStore, TaskStore
from a2a_core.testing import TaskStoreConformance


class TestMemoryStore(TaskStoreConformance):
    supports_eviction = True

    async def make_store(self) -> TaskStore:
        return open_task_store("memory://")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"memory://?max_tasks={max_tasks}")


class TestReferenceMemoryStore(TaskStoreConformance):
    """The reference ``MemoryTaskStore`` keeps the same contract as the one ``memory://`` opens."""

    supports_eviction = True

    async def make_store(self) -> TaskStore:
        return MemoryTaskStore()

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return MemoryTaskStore(max_tasks=max_tasks)
