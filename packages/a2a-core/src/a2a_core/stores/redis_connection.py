"""One Redis client and key prefix, shared by a store, its channel and its file backend.

``RedisTaskStore`` makes one ``RedisConnection`` and hands it to the channel
and the file backend it makes: they talk to Redis through it and never reach
into the store.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["EXTRA_HINT", "MAX_CONNECTIONS", "POOL_TIMEOUT_SECONDS", "RedisConnection", "as_text"]

EXTRA_HINT = "pip install 'a2a-adapters-core[redis]'"
MAX_CONNECTIONS = 100
"""Connections a store made from a URL opens at most (its followers wait on one of them)."""
POOL_TIMEOUT_SECONDS = 20.0
"""How long a call waits for a free connection before it fails."""


def as_text(value: bytes | str) -> str:
    """A reply as text: a client made without ``decode_responses`` answers bytes."""
    return value.decode() if isinstance(value, bytes) else value


def _import_redis() -> Any:
    """``redis.asyncio``, or an ImportError that names the extra to install."""
    try:
        return importlib.import_module("redis.asyncio")
    except ImportError as exc:
        raise ImportError(f"The redis:// task store needs the redis package: {EXTRA_HINT}") from exc


class RedisConnection:
    """A client on ``url`` (made on first use) or the ``client`` passed in, and the key ``prefix``.

    A client passed in belongs to the caller: ``aclose`` leaves it open.
    ``name`` is how errors name the owner (``... is closed``).
    """

    def __init__(self, url: str, *, prefix: str, client: Any = None, name: str) -> None:
        self._module: Any = _import_redis() if client is None else None
        self.url = url
        self.prefix = prefix
        """Every key of the deployment starts with ``<prefix>:``."""
        self._client: Any = client
        self._pool: Any = None
        self._owns_client = client is None
        self._scripts: dict[str, Any] = {}
        self._name = name
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether ``aclose`` ran (later calls raise RuntimeError)."""
        return self._closed

    def client(self) -> Any:
        """The ``redis.asyncio.Redis`` client (connected on first use)."""
        if self._closed:
            raise RuntimeError(f"{self._name} is closed")
        if self._client is None:
            # A pool that makes a call wait for a free connection, not fail: many tasks
            # publishing at once past the pool's size (redis-py's default pool raises
            # "Too many connections") are slowed down, not lost. ``max_connections`` and
            # ``timeout`` in the URL's query win over these.
            pool = self._module.BlockingConnectionPool.from_url(
                self.url, max_connections=MAX_CONNECTIONS, timeout=POOL_TIMEOUT_SECONDS
            )
            self._client = self._module.Redis(connection_pool=pool)
            self._pool = pool
        return self._client

    async def script(self, name: str, source: str, keys: list[str], args: list[Any]) -> Any:
        """Run the Lua ``source`` (registered once under ``name``) on ``keys`` and ``args``."""
        client = self.client()
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = client.register_script(source)
        return await script(keys=keys, args=args)

    async def aclose(self) -> None:
        """Close the connection pool (unless the client was passed in); idempotent."""
        self._closed = True
        client, self._client = self._client, None
        pool, self._pool = self._pool, None
        if client is not None and self._owns_client:
            close = getattr(client, "aclose", None) or client.close  # aclose: redis >= 5.0.1
            await close()
        if pool is not None:
            await pool.disconnect()
