"""The cluster suite on ``sqlite://``, where it applies: several services on one store object.

SQLite is a single-process backend. Its store has no event channel
(``event_channel()`` is None), so services share live events, cancels and
push configs only through the in-process channel of one ``SqliteTaskStore``
object; that is what this runs (like ``memory://``). Two processes, or two
store objects, on one file share stored tasks but not live events: a stream
through one never hears the other's events, and a cancel through one cannot
stop the other's agent. Run several instances on ``redis://`` or
``postgresql://`` instead; ``test_two_store_objects_on_one_file_share_no_channel``
pins down that limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.server.memory_channel import channel_for
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance


class TestSqliteCluster(ClusterConformance):
    _store: TaskStore | None = None

    @pytest.fixture(autouse=True)
    def _database(self, tmp_path: Path) -> None:
        self.path = tmp_path / "tasks.db"
        self._store = None

    async def make_store(self) -> TaskStore:
        if self._store is None:
            self._store = open_task_store(f"sqlite:///{self.path}")
        return self._store

    async def cleanup(self) -> None:
        self._store = None  # the services closed it: the next cluster opens the file again


async def test_two_store_objects_on_one_file_share_no_channel(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    first = open_task_store(f"sqlite:///{path}")
    second = open_task_store(f"sqlite:///{path}")
    try:
        assert first.event_channel() is None, "no backend channel: live events stay in-process"
        assert channel_for(first) is channel_for(first)
        assert channel_for(first) is not channel_for(second)
    finally:
        await first.aclose()
        await second.aclose()
