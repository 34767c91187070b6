"""One PostgreSQL schema's connections, shared by a store, its channel and its file backend.

``PostgresTaskStore`` makes one ``PostgresDatabase`` and hands it to the
channel and the file backend it makes: they query through its pool and never
reach into the store. The pool opens on first use, after the store's
migration (``prepare``) has run once.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["EXTRA_HINT", "PostgresDatabase", "quote_ident"]

EXTRA_HINT = "pip install 'a2a-adapters-core[postgres]'"


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _import_driver() -> tuple[Any, Any]:
    """``psycopg`` and ``psycopg_pool``, or an ImportError that names the extra to install."""
    try:
        return importlib.import_module("psycopg"), importlib.import_module("psycopg_pool")
    except ImportError as exc:
        raise ImportError(
            f"The postgresql:// task store needs psycopg and psycopg-pool: {EXTRA_HINT}"
        ) from exc


class PostgresDatabase:
    """A connection pool on ``conninfo`` (``min_size``..``max_size`` connections) for ``schema``.

    ``prepare`` runs once before the pool opens (it creates or migrates the
    tables, on a connection of its own from ``connect``). ``name`` is how
    errors name the owner (``... is closed``). Use it from one event loop.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str,
        min_size: int,
        max_size: int,
        prepare: Callable[[], Awaitable[None]],
        name: str,
    ) -> None:
        self._psycopg, self._pool_module = _import_driver()
        self.conninfo = conninfo
        self.schema = schema
        """The schema's name as given."""
        self.quoted_schema = quote_ident(schema)
        """The schema as it is written in statements."""
        self.min_size = min_size
        self.max_size = max_size
        self._prepare = prepare
        self._name = name
        self._pool: Any = None
        self._opening = asyncio.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether ``aclose`` ran (later calls raise RuntimeError)."""
        return self._closed

    async def connection(self) -> Any:
        """A pooled connection's context manager (the pool opens on first use)."""
        if self._closed:
            raise RuntimeError(f"{self._name} is closed")
        pool = self._pool
        if pool is None:
            async with self._opening:
                pool = self._pool
                if pool is None:
                    pool = await self._open()
                    if self._closed:  # closed while opening
                        await pool.close()
                        raise RuntimeError(f"{self._name} is closed")
                    self._pool = pool
        return pool.connection()

    async def connect(self) -> Any:
        """A new autocommit connection of the caller's own, outside the pool (close it)."""
        return await self._psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)

    async def aclose(self) -> None:
        """Close the pool; idempotent."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _open(self) -> Any:
        await self._prepare()
        pool = self._pool_module.AsyncConnectionPool(
            self.conninfo,
            min_size=self.min_size,
            max_size=self.max_size,
            kwargs={"autocommit": True},
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=30.0)
        except BaseException:
            await pool.close()
            raise
        return pool
