"""The cluster suite on ``redis://``: each instance has its own store (and pool) on one prefix."""

from __future__ import annotations

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance
from store_support import REDIS_URL


class TestRedisCluster(ClusterConformance):
    @pytest.fixture(autouse=True)
    def _prefix(self, redis_prefix: str) -> None:
        self.prefix = redis_prefix

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{REDIS_URL}?prefix={self.prefix}")
