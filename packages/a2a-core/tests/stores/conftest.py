"""Store test fixtures: a reachable local Redis or PostgreSQL (or a skip saying why), cleaned up.

Redis tests use 127.0.0.1:6379 only. Each test gets its own key prefix under
one random prefix per run, and every key under it is deleted afterwards.
PostgreSQL tests use 127.0.0.1:5432 (database ``test``): each test gets its
own schema, dropped afterwards.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = Path(__file__).parent
for folder in (_HERE, _HERE.parent / "cli"):  # store_support; the CLI tests' ServeProcess
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from store_support import (  # noqa: E402
    POSTGRES_URL,
    REDIS_URL,
    RUN_PREFIX,
    delete_keys,
    drop_schema,
    postgres_unreachable,
    redis_unreachable,
)


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A fresh key prefix for one test (its keys are deleted afterwards); skips without Redis."""
    reason = redis_unreachable()
    if reason is not None:
        pytest.skip(f"Redis tests need a Redis server: {reason}")
    prefix = f"{RUN_PREFIX}:{uuid.uuid4().hex[:8]}"
    try:
        yield prefix
    finally:
        delete_keys(prefix)


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """A fresh schema for one test (dropped afterwards); skips without PostgreSQL."""
    reason = postgres_unreachable()
    if reason is not None:
        pytest.skip(f"PostgreSQL tests need a PostgreSQL server: {reason}")
    schema = f"a2a_test_{uuid.uuid4().hex[:16]}"
    try:
        yield schema
    finally:
        drop_schema(schema)


@pytest.fixture(params=["redis", "postgres"])
def cluster_url(request: pytest.FixtureRequest) -> str:
    """The default URL of each shared backend, on a fresh prefix or schema."""
    if request.param == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"
