"""The cluster suite on ``postgresql://``: each instance has its own store and pool, one schema."""

from __future__ import annotations

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance
from store_support import POSTGRES_URL, resubscribe_past_retention


class TestPostgresCluster(ClusterConformance):
    @pytest.fixture(autouse=True)
    def _schema(self, postgres_schema: str) -> None:
        self.schema = postgres_schema

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{POSTGRES_URL}?schema={self.schema}")


async def test_resubscribe_past_retention_starts_with_a_snapshot(postgres_schema: str) -> None:
    """Events expired (stream_ttl): a resubscribe with Last-Event-ID gets the Task first."""
    await resubscribe_past_retention(f"{POSTGRES_URL}?schema={postgres_schema}&stream_ttl=1")
