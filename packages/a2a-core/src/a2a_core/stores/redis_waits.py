"""One blocked read for all the followers of a Redis task channel, however many they are.

A follower that has read a task stream's retained entries waits for newer ones.
Waiting in an ``XREAD BLOCK`` of its own held one connection per follower, so an
instance following many tasks for its clients ran out of its pool (redis-py's
default is 100 connections) and their streams failed. ``StreamWaits`` holds one
connection and one ``XREAD BLOCK`` over every followed stream; the entries found
go to each follower of that stream (those above its position), which takes them
at its own pace. A follower that starts waiting while the read is blocked on the
other streams interrupts it (``CLIENT UNBLOCK`` from another connection), so its
stream is read at once. A follower with ``BUFFER`` entries not yet taken is left
out of the reads until it has taken them: a slow reader costs bounded memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import Any

from .redis_connection import as_text

__all__ = ["BUFFER", "StreamWaits", "Watch"]

logger = logging.getLogger("a2a_core.stores.redis")

BUFFER = 256
"""Entries a follower may have read for it and not taken before its stream is left out."""
_RETRY_PAUSE = 0.5
"""Seconds between a read that failed or timed out and the next."""
_UNBLOCK_PAUSE = 0.002
"""Seconds between two ``CLIENT UNBLOCK`` tries while the read has not reached Redis yet."""
_UNBLOCK_TRIES = 250


def _order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _read_timeout() -> type[Exception]:
    """redis-py's read timeout error (not the built-in ``TimeoutError``)."""
    return importlib.import_module("redis.exceptions").TimeoutError


class Watch:
    """A follower's place in the shared reads: its stream, the last entry read for it,
    the entries read and not yet taken, and what ended its wait."""

    __slots__ = ("error", "key", "position", "rows", "wake")

    def __init__(self, key: str, position: str) -> None:
        self.key = key
        self.position = position
        self.rows: list[Any] = []
        self.wake = asyncio.Event()
        self.error: BaseException | None = None


class StreamWaits:
    """Every follower's wait of one channel, in one ``XREAD BLOCK`` on one connection.

    ``waiting_client()``: the client whose pool the read's connection comes from (its
    socket timeout outlasts ``block_ms``); ``commands()``: the client that sends
    ``CLIENT UNBLOCK``.
    """

    def __init__(
        self, waiting_client: Callable[[], Any], commands: Callable[[], Any], block_ms: int
    ) -> None:
        self._waiting_client = waiting_client
        self._commands = commands
        self._block_ms = block_ms
        self._by_key: dict[str, set[Watch]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._conn: Any = None
        self._conn_id: int | None = None
        self._reading: frozenset[Watch] = frozenset()
        """The watches the read under way covers (empty: no read under way)."""
        self._stale = False
        """A watch waits that the read under way does not cover."""
        self._unblocking: asyncio.Task[None] | None = None
        self._closed = False
        self.reads = 0
        """``XREAD`` calls made (for tests: they do not grow with followers)."""

    # -- a follower's side ------------------------------------------------------------
    def watch(self, key: str, position: str) -> Watch:
        """Start following ``key`` above the entry ``position``."""
        found = Watch(key, position)
        self._by_key.setdefault(key, set()).add(found)
        return found

    def unwatch(self, watch: Watch) -> None:
        """Stop following (the follower was closed)."""
        found = self._by_key.get(watch.key)
        if found is not None:
            found.discard(watch)
            if not found:
                del self._by_key[watch.key]

    async def next_rows(self, watch: Watch) -> list[Any]:
        """The entries above the watch's position, waiting for some when there are none."""
        while not watch.rows:
            error, watch.error = watch.error, None
            if error is not None:
                raise error
            if self._closed:
                raise RuntimeError("the Redis task channel is closed")
            watch.wake.clear()
            self._start()
            if watch not in self._reading:
                self._interrupt()
            await watch.wake.wait()
        rows, watch.rows = watch.rows, []
        return rows

    # -- the reader --------------------------------------------------------------------
    def _start(self) -> None:
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(
                self._read(), name="a2a-redis-waits"
            )

    def _interrupt(self) -> None:
        """Make the blocked read return so the next one covers every waiting follower."""
        self._stale = True
        if self._reading and self._unblocking is None:
            self._unblocking = asyncio.get_running_loop().create_task(self._unblock())

    async def _unblock(self) -> None:
        try:
            for _ in range(_UNBLOCK_TRIES):
                if not (self._stale and self._reading and self._conn_id is not None):
                    return
                if await self._commands().client_unblock(self._conn_id):
                    return
                await asyncio.sleep(_UNBLOCK_PAUSE)  # the read has not reached Redis yet
            self._conn_id = None  # a reconnect changed it: asked again before the next read
        except Exception:
            logger.debug("could not interrupt the followers' read", exc_info=True)
        finally:
            self._unblocking = None

    def _covered(self) -> tuple[dict[str, str], frozenset[Watch]]:
        """Each stream at its least advanced follower, of the followers with room left."""
        streams: dict[str, str] = {}
        covered: set[Watch] = set()
        for key, watches in self._by_key.items():
            for w in watches:
                if len(w.rows) >= BUFFER:
                    continue
                covered.add(w)
                here = streams.get(key)
                if here is None or _order(w.position) < _order(here):
                    streams[key] = w.position
        return streams, frozenset(covered)

    async def _connection(self) -> Any:
        if self._conn is None:
            waiting = self._waiting_client()
            redis: Any = importlib.import_module("redis.asyncio")
            self._conn = redis.Redis(
                connection_pool=waiting.connection_pool, single_connection_client=True
            )
        if self._conn_id is None:
            self._conn_id = int(await self._conn.client_id())
        return self._conn

    async def _read(self) -> None:
        try:
            # ``_closed`` too: redis-py may swallow the cancel that ``aclose`` sends.
            while self._by_key and not self._closed:
                try:
                    conn = await self._connection()
                    # What to read is decided here, with no wait before the read is sent:
                    # a follower arriving later sees it under way and interrupts it.
                    streams, covered = self._covered()
                    if not streams:
                        return  # every follower has entries to take first
                    self._stale = False
                    self._reading = covered
                    self.reads += 1
                    found = await conn.xread(streams, block=self._block_ms)
                except asyncio.CancelledError:
                    raise
                except _read_timeout() as exc:
                    # Redis held the read past the socket timeout: slow, not the end. Re-armed.
                    logger.warning("waiting for task events timed out (%s); waiting again", exc)
                    await self._drop_connection()
                    await asyncio.sleep(_RETRY_PAUSE)
                    continue
                except Exception as exc:
                    await self._drop_connection()
                    self._fail(self._reading or self._covered()[1], exc)
                    await asyncio.sleep(_RETRY_PAUSE)
                    continue
                finally:
                    self._reading = frozenset()
                self._hand_out(found or (), covered)
        finally:
            self._reader = None

    @staticmethod
    def _fail(watches: frozenset[Watch], exc: BaseException) -> None:
        """End the waits of ``watches`` with ``exc``, as their own read failing would have."""
        for w in watches:
            w.error = exc
            w.wake.set()

    def _hand_out(self, found: Any, covered: frozenset[Watch]) -> None:
        for key, rows in found:
            for w in self._by_key.get(as_text(key), ()):
                if w not in covered:
                    continue
                above = _order(w.position)
                mine = [row for row in rows if _order(as_text(row[0])) > above]
                if mine:
                    w.rows.extend(mine)
                    w.position = as_text(mine[-1][0])
                    w.wake.set()

    async def _drop_connection(self) -> None:
        """Close the read's connection (after a timeout or an error its answer may still
        come): the next read opens another."""
        conn, self._conn, self._conn_id = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                if conn.connection is not None:
                    await conn.connection.disconnect()
                await conn.aclose()

    async def aclose(self) -> None:
        """Stop reading, give the connection back and end every wait (RuntimeError)."""
        self._closed = True
        for job in (self._unblocking, self._reader):
            if job is not None:
                job.cancel()
                with contextlib.suppress(BaseException):
                    await job
        await self._drop_connection()
        closed = RuntimeError("the Redis task channel is closed")
        for watches in self._by_key.values():
            self._fail(frozenset(watches), closed)
