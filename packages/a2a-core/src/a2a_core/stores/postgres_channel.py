"""The ``postgresql://`` task channel: live events, replay, cancels and push configs in PostgreSQL.

What ``PostgresTaskStore.event_channel()`` returns (see ``a2a_core.contracts.channel``
for the contract). Tables, in the store's schema (created with the task tables)::

    a2a_event_heads   task id -> last event id and kind, rows kept, last event time,
                      the push delivered-up-to mark (NULL: none written)
    a2a_events        (task id, event id, seq) -> kind, the event's JSON, the id of the
                      entry before it (NULL: unknown); seq 0 an event, 1 an end mark
    a2a_push_configs  (task id, config id) -> the stored push config

Publishing is one call of the ``a2a_publish`` function (one round trip, one
transaction): under the task's head row lock it drops an event not above the
last one (a late writer), records the previous entry's id (or the publisher's
``previous`` when that is newer, or the task has no live record: an event
saved by an instance that died before publishing it leaves a hole there),
inserts the row, trims the
task's oldest rows beyond about ``stream_max_events``, and sends a ``NOTIFY``
whose payload is only ``e <event id> <task key>`` (the task id, or a hash of
a very long one): a payload is capped at 8000 bytes, so followers read the
event itself from the table. A task's record expires ``stream_ttl`` seconds
after its last event (expired records read as missing; every instance's
listener deletes them now and then).

A follower reads the rows above its id (the first row's ``prev`` shows
whether anything it needs was trimmed: then ``EventsLost``; a later row's
``prev`` above the row read before it marks a hole: the events before it
are delivered, then ``EventsLost``; a missing or expired record with the
caller's version above ``after`` means the events expired), then waits
for a wake-up and reads again. No connection is held while waiting: each
instance holds one ``LISTEN`` connection (not one per follower) and wakes
the followers of the notified task; the followers it wakes share one read of
the new rows (``postgres_reads``), not one query each. If that connection
drops, the listener reconnects and wakes every follower, which catches up
from the table; followers also re-read every ``poll_seconds`` in case a
notification was missed.

Cancel requests go to every instance as ``NOTIFY`` ``c <task id>`` on the same
channel; each instance's listener hands them to its manager. Like Redis
pub/sub, a request sent while an instance's listener is reconnecting is not
seen by it (the asking instance then settles the cancel itself after
``remote_cancel_timeout``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from ..contracts.channel import (
    ChannelItem,
    ChannelListener,
    EventsLost,
    ListenerSet,
    TaskChannel,
)
from ..contracts.push_configs import PushConfigEntry, PushConfigStore
from ..contracts.task_store import ConcurrentUpdateError, StoredTask
from ..errors import InvalidParamsError
from ..types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from .postgres_database import PostgresDatabase, quote_ident
from .postgres_reads import SharedReads

__all__ = ["PostgresPushConfigStore", "PostgresTaskChannel", "SaveOn", "channel_schema"]

SaveOn = Callable[[Any, Task, "str | None", int, int], Awaitable[StoredTask]]
"""The store's save on an open connection: ``(conn, task, owner, expected_version, version)``
(``PostgresTaskStore.save_on``): the channel's settling write, in its transaction."""

logger = logging.getLogger("a2a_core.stores.postgres")

_KINDS: dict[str, type[TaskStatusUpdateEvent] | type[TaskArtifactUpdateEvent]] = {
    "s": TaskStatusUpdateEvent,
    "a": TaskArtifactUpdateEvent,
}
_BATCH = 500
"""Rows read per query while a follower catches up."""
_MAX_KEY_BYTES = 200
"""Task ids longer than this are named by a hash in wake-up payloads."""
_MAX_PAYLOAD_BYTES = 7900
"""Below PostgreSQL's NOTIFY payload limit (8000 bytes)."""
_PURGE_BATCH = 1000


def channel_schema(s: str) -> str:
    """The channel's tables and functions in schema ``s`` (already quoted)."""
    return f"""
CREATE TABLE IF NOT EXISTS {s}.a2a_event_heads (
    task_id TEXT COLLATE "C" PRIMARY KEY,
    last_id BIGINT NOT NULL,
    last_seq SMALLINT NOT NULL,
    kept INTEGER NOT NULL,
    touched TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_event_heads_by_touched ON {s}.a2a_event_heads (touched);
ALTER TABLE {s}.a2a_event_heads ADD COLUMN IF NOT EXISTS push_mark BIGINT;
CREATE TABLE IF NOT EXISTS {s}.a2a_events (
    task_id TEXT COLLATE "C" NOT NULL,
    event_id BIGINT NOT NULL,
    seq SMALLINT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    prev_id BIGINT,
    PRIMARY KEY (task_id, event_id, seq)
);
CREATE TABLE IF NOT EXISTS {s}.a2a_push_configs (
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    placed BIGINT GENERATED ALWAYS AS IDENTITY,
    version TEXT NOT NULL,
    created_ns BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, config_id)
);
CREATE OR REPLACE FUNCTION {s}.a2a_publish(
    p_task TEXT, p_id BIGINT, p_seq SMALLINT, p_kind TEXT, p_body TEXT, p_hint BIGINT,
    p_max INTEGER, p_ttl DOUBLE PRECISION, p_channel TEXT, p_wake TEXT
) RETURNS BOOLEAN LANGUAGE plpgsql AS $fn$
DECLARE
    head RECORD;
    v_prev BIGINT;
    v_kept INTEGER;
    v_trimmed INTEGER;
BEGIN
    INSERT INTO {s}.a2a_event_heads AS h VALUES (p_task, -1, 0, 0, '-infinity')
        ON CONFLICT (task_id) DO NOTHING;
    SELECT h.last_id, h.last_seq, h.kept, h.touched INTO head
        FROM {s}.a2a_event_heads h WHERE h.task_id = p_task FOR UPDATE;
    IF head.touched > now() - make_interval(secs => p_ttl) THEN
        IF (head.last_id, head.last_seq) >= (p_id, p_seq) THEN
            RETURN FALSE;  -- a late writer: not above the last event
        END IF;
        v_prev := head.last_id;
        IF p_seq = 0 AND p_hint > head.last_id THEN
            v_prev := p_hint;  -- an event saved but never published (its writer died): a hole
        END IF;
        v_kept := head.kept + 1;
    ELSE  -- no live record: start one (dropping an expired one's rows)
        DELETE FROM {s}.a2a_events e WHERE e.task_id = p_task;
        v_prev := p_hint;
        v_kept := 1;
    END IF;
    INSERT INTO {s}.a2a_events VALUES (p_task, p_id, p_seq, p_kind, p_body, v_prev);
    IF v_kept > p_max + p_max / 8 THEN  -- approximate trimming, like Redis's MAXLEN ~
        DELETE FROM {s}.a2a_events e WHERE e.task_id = p_task AND (e.event_id, e.seq) < (
            SELECT k.event_id, k.seq FROM {s}.a2a_events k WHERE k.task_id = p_task
            ORDER BY k.event_id DESC, k.seq DESC OFFSET p_max - 1 LIMIT 1);
        GET DIAGNOSTICS v_trimmed = ROW_COUNT;
        v_kept := v_kept - v_trimmed;
    END IF;
    UPDATE {s}.a2a_event_heads SET last_id = p_id, last_seq = p_seq, kept = v_kept,
        touched = now() WHERE task_id = p_task;
    PERFORM pg_notify(p_channel, 'e ' || p_id || ' ' || p_wake);
    RETURN TRUE;
END
$fn$;
"""


def wake_key(task_id: str) -> str:
    """How wake-ups name a task: its id, or ``#`` + a hash of a very long one."""
    if len(task_id.encode("utf-8", "surrogatepass")) <= _MAX_KEY_BYTES:
        return task_id
    digest = hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()
    return "#" + digest


class PostgresTaskChannel(ListenerSet, TaskChannel):
    """Events in an event table woken by LISTEN/NOTIFY; cancels by NOTIFY; push configs in a table.

    Made by ``PostgresTaskStore.event_channel()``; it uses the store's
    ``database`` pool for every query and one connection of its own for
    ``LISTEN`` (opened by ``start`` or the first ``follow``, reopened when it
    drops), and ``save_on`` to settle a task in its own transaction.
    ``ping_seconds``: how often an idle listener checks its connection.
    """

    def __init__(
        self,
        database: PostgresDatabase,
        save_on: SaveOn,
        *,
        stream_max_events: int = 1000,
        stream_ttl: int = 3600,
        poll_seconds: float = 30.0,
        ping_seconds: float = 10.0,
    ) -> None:
        if stream_max_events <= 0 or stream_ttl <= 0 or poll_seconds <= 0 or ping_seconds <= 0:
            raise ValueError("stream_max_events, stream_ttl and the intervals must be > 0")
        self.database = database
        self._save_on = save_on
        self.stream_max_events = stream_max_events
        self.stream_ttl = stream_ttl
        self.poll_seconds = poll_seconds
        self.ping_seconds = ping_seconds
        s = database.quoted_schema
        self.notify_channel = "a2a_" + hashlib.sha1(database.schema.encode()).hexdigest()[:24]
        """The NOTIFY channel of this schema's instances (wake-ups and cancel requests)."""
        self._publish = (
            f"SELECT {s}.a2a_publish(%s::text, %s::bigint, %s::smallint, %s::text, %s::text,"
            " %s::bigint, %s::integer, %s::float8, %s::text, %s::text)"
        )
        self._events = f"{s}.a2a_events"
        self._heads = f"{s}.a2a_event_heads"
        live = "h.touched > now() - make_interval(secs => %s)"
        self._since = (
            f"SELECT h.last_id, e.event_id, e.seq, e.kind, e.body, e.prev_id FROM {self._heads} h"
            f" LEFT JOIN {self._events} e ON e.task_id = h.task_id"
            " AND (e.event_id, e.seq) > (%s, 1)"
            f" WHERE h.task_id = %s AND {live} ORDER BY e.event_id, e.seq"
        )
        self._head_row = (
            f"INSERT INTO {self._heads} VALUES (%s, -1, 0, 0, '-infinity')"
            " ON CONFLICT (task_id) DO NOTHING"
        )
        self._lock_head = (
            f"SELECT CASE WHEN {live} THEN h.last_id ELSE -1 END"
            f" FROM {self._heads} h WHERE h.task_id = %s FOR UPDATE"
        )
        self._listeners: list[ChannelListener] = []
        self._handlers: set[asyncio.Task[None]] = set()
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._reads = SharedReads(self._rows, _BATCH)
        self._listener: asyncio.Task[None] | None = None
        self._listen_conn: Any = None
        self._starting = asyncio.Lock()
        self._closed = False
        self._push: PostgresPushConfigStore | None = None
        self.reconnects = 0
        """How many times the listener reconnected after its connection dropped."""

    @property
    def shared(self) -> bool:
        return True

    async def _connection(self) -> Any:
        return await self.database.connection()

    @property
    def listener_pid(self) -> int | None:
        """The server process id of the LISTEN connection (None while not connected)."""
        conn = self._listen_conn
        return None if conn is None else int(conn.info.backend_pid)

    # -- events -------------------------------------------------------------------
    async def publish(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None = None
    ) -> bool:
        if isinstance(event, TaskStatusUpdateEvent):
            kind = "s"
        elif isinstance(event, TaskArtifactUpdateEvent):
            kind = "a"
        else:
            return True  # a direct reply belongs to no task: nothing to share
        body = event.model_dump_json(by_alias=True)
        return await self._add(task_id, event_id, 0, kind, body, previous)

    async def publish_end(self, task_id: str, event_id: int) -> None:
        await self._add(task_id, event_id, 1, "end", "", event_id)

    def _publish_args(
        self, task_id: str, event_id: int, seq: int, kind: str, body: str, previous: int | None
    ) -> tuple[Any, ...]:
        return (
            task_id,
            event_id,
            seq,
            kind,
            body,
            previous,
            self.stream_max_events,
            float(self.stream_ttl),
            self.notify_channel,
            wake_key(task_id),
        )

    async def _add(
        self, task_id: str, event_id: int, seq: int, kind: str, body: str, previous: int | None
    ) -> bool:
        args = self._publish_args(task_id, event_id, seq, kind, body, previous)
        async with await self._connection() as conn:
            cur = await conn.execute(self._publish, args)
            added = await cur.fetchone()
        if not (added and added[0]):
            logger.debug("task %s: event %d-%d is not above the last one", task_id, event_id, seq)
            return False
        return True

    def follow(
        self, task_id: str, after: int, current: int | None = None
    ) -> AsyncIterator[ChannelItem]:
        return _Follower(self, task_id, after, current)

    # -- writing behind -------------------------------------------------------------
    async def since(self, task_id: str, after: int) -> tuple[list[ChannelItem] | None, int]:
        async with await self._connection() as conn:
            cur = await conn.execute(self._since, (after, task_id, float(self.stream_ttl)))
            rows = list(await cur.fetchall())
        if not rows:
            return [], -1
        head = int(rows[0][0])
        reader = _Follower(self, task_id, after, None)
        try:
            reader.replayed([row[1:] for row in rows if row[1] is not None])
        except EventsLost:
            return None, head
        return (None if reader.broken else list(reader.pending)), head

    async def save_after(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        head: int,
        event: StreamEvent,
    ) -> StoredTask:
        if isinstance(event, TaskStatusUpdateEvent):
            kind = "s"
        elif isinstance(event, TaskArtifactUpdateEvent):
            kind = "a"
        else:
            raise TypeError(f"{type(event).__name__} is not a task event")
        version = max(expected_version, head) + 1
        task_id = task.id
        async with await self._connection() as conn, conn.transaction():
            # The head row locked first: a run publishing behind waits, then finds its
            # events not above this one (a late writer).
            await conn.execute(self._head_row, (task_id,))
            cur = await conn.execute(self._lock_head, (float(self.stream_ttl), task_id))
            found = await cur.fetchone()
            if found is None or int(found[0]) != head:
                raise ConcurrentUpdateError(f"task {task_id}: events were published meanwhile")
            saved = await self._save_on(conn, task, owner, expected_version, version)
            body = event.model_dump_json(by_alias=True)
            await conn.execute(
                self._publish, self._publish_args(task_id, version, 0, kind, body, version - 1)
            )
        return saved

    async def read(
        self, task_id: str, after: tuple[int, int], first: bool
    ) -> tuple[bool, list[tuple[Any, ...]]]:
        """Rows above ``after``; on the ``first`` read, also whether the task has a live record."""
        if not first:  # followers woken by one notification share one query
            return True, await self._reads.read(wake_key(task_id), task_id, after)
        async with await self._connection() as conn:
            cur = await conn.execute(
                f"SELECT touched > now() - make_interval(secs => %s) FROM {self._heads}"
                " WHERE task_id = %s",
                (float(self.stream_ttl), task_id),
            )
            head = await cur.fetchone()
            if head is None or not head[0]:
                return False, []
            return True, await self._rows_on(conn, task_id, after)

    async def _rows(self, task_id: str, after: tuple[int, int]) -> list[tuple[Any, ...]]:
        async with await self._connection() as conn:
            return await self._rows_on(conn, task_id, after)

    async def _rows_on(
        self, conn: Any, task_id: str, after: tuple[int, int]
    ) -> list[tuple[Any, ...]]:
        cur = await conn.execute(
            f"SELECT event_id, seq, kind, body, prev_id FROM {self._events}"
            " WHERE task_id = %s AND (event_id, seq) > (%s, %s)"
            " ORDER BY event_id, seq LIMIT %s",
            (task_id, after[0], after[1], _BATCH),
        )
        return list(await cur.fetchall())

    async def purge(self) -> int:
        """Delete the records of tasks whose last event is older than ``stream_ttl``."""
        async with await self._connection() as conn:
            cur = await conn.execute(
                f"WITH gone AS (DELETE FROM {self._heads} WHERE task_id IN"
                f" (SELECT task_id FROM {self._heads}"
                "  WHERE touched <= now() - make_interval(secs => %s) ORDER BY touched LIMIT %s)"
                " AND touched <= now() - make_interval(secs => %s) RETURNING task_id)"
                f" DELETE FROM {self._events} e USING gone WHERE e.task_id = gone.task_id",
                (float(self.stream_ttl), _PURGE_BATCH, float(self.stream_ttl)),
            )
            return int(cur.rowcount)

    # -- wake-ups --------------------------------------------------------------------
    def watch(self, task_id: str, wake: asyncio.Event) -> None:
        """Set ``wake`` whenever the task's events may have changed (its followers' wait)."""
        self._waiters.setdefault(wake_key(task_id), set()).add(wake)

    def unwatch(self, task_id: str, wake: asyncio.Event) -> None:
        """Stop setting ``wake`` (undoes ``watch``)."""
        key = wake_key(task_id)
        found = self._waiters.get(key)
        if found is not None:
            found.discard(wake)
            if not found:
                del self._waiters[key]

    def _wake_all(self) -> None:
        self._reads.notified_all()
        for found in self._waiters.values():
            for wake in found:
                wake.set()

    def _dispatch(self, payload: str) -> None:
        verb, _, rest = payload.partition(" ")
        if verb == "e":
            _, _, key = rest.partition(" ")
            self._reads.notified(key)
            for wake in self._waiters.get(key, ()):
                wake.set()
        elif verb == "c" and rest:
            for listener in tuple(self._listeners):
                handler = asyncio.ensure_future(listener.cancel_requested(rest))
                self._handlers.add(handler)
                handler.add_done_callback(self._handlers.discard)

    # -- the LISTEN connection -----------------------------------------------------------
    async def _listen_connect(self) -> Any:
        conn = await self.database.connect()
        try:
            await conn.execute(f"LISTEN {quote_ident(self.notify_channel)}")
        except BaseException:
            await conn.close()
            raise
        return conn

    async def ensure_listening(self) -> None:
        """Open the LISTEN connection once (raises if the first connect fails)."""
        if self._listener is not None:
            return
        async with self._starting:
            if self._listener is not None:
                return
            if self._closed:
                raise RuntimeError("the PostgreSQL task channel is closed")
            conn = await self._listen_connect()
            self._listen_conn = conn
            self._listener = asyncio.get_running_loop().create_task(
                self._listen(conn), name="a2a-postgres-listen"
            )

    async def _listen(self, conn: Any) -> None:
        """Hand out notifications; when the connection drops, reconnect and wake every follower."""
        loop = asyncio.get_running_loop()
        purge_every = min(60.0, float(self.stream_ttl))
        next_purge = loop.time() + purge_every
        delay = 0.1
        while True:
            try:
                if conn is None:
                    conn = await self._listen_connect()
                    self._listen_conn = conn
                    self.reconnects += 1
                    logger.info("the PostgreSQL listener reconnected")
                    self._wake_all()  # catch up on what happened while not listening
                    delay = 0.1
                async for notify in conn.notifies(timeout=self.ping_seconds):
                    self._dispatch(notify.payload)
                await conn.execute("SELECT 1")  # still alive?
                if loop.time() >= next_purge:
                    next_purge = loop.time() + purge_every
                    await self.purge()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("the PostgreSQL listener failed (%s); reconnecting", exc)
                self._listen_conn = None
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()
                conn = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    # -- cancels --------------------------------------------------------------------
    async def request_cancel(self, task_id: str) -> None:
        payload = f"c {task_id}"
        if len(payload.encode("utf-8", "surrogatepass")) > _MAX_PAYLOAD_BYTES:
            logger.warning("task id too long to send a cancel request through NOTIFY")
            return
        async with await self._connection() as conn:
            await conn.execute("SELECT pg_notify(%s, %s)", (self.notify_channel, payload))

    async def start(self) -> None:
        await self.ensure_listening()

    # -- push configs -----------------------------------------------------------------
    def push_configs(self) -> PushConfigStore | None:
        if self._push is None:
            self._push = PostgresPushConfigStore(self.database, stream_ttl=self.stream_ttl)
        return self._push

    async def aclose(self) -> None:
        """Stop the listener and end every follower; idempotent."""
        self._closed = True
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(BaseException):
                await listener
        conn, self._listen_conn = self._listen_conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        self._wake_all()

    @property
    def closed(self) -> bool:
        """Whether ``aclose`` ran (followers then end)."""
        return self._closed


class _Follower:
    """Replay of a task's retained events above ``after``, then live ones."""

    def __init__(
        self, channel: PostgresTaskChannel, task_id: str, after: int, current: int | None
    ) -> None:
        self._channel = channel
        self._task_id = task_id
        self._after = after
        self._current = current
        self._last: tuple[int, int] | None = None  # the last row read
        self._items: deque[ChannelItem] = deque()
        self._wake = asyncio.Event()
        self._watching = False
        self._hole = False  # a row's previous event was never published: stop there

    def __aiter__(self) -> _Follower:
        return self

    async def __anext__(self) -> ChannelItem:
        channel = self._channel
        while not self._items:
            if self._hole:
                raise EventsLost(f"an event after {self._last} was never published")
            if channel.closed:
                raise StopAsyncIteration
            if self._last is None:
                await self._replay()
                continue
            self._wake.clear()  # a wake-up during the read below is kept for the wait
            _, rows = await channel.read(self._task_id, self._last, False)
            self._take(rows)
            if not self._items and not self._hole:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), channel.poll_seconds)
        return self._items.popleft()

    async def _replay(self) -> None:
        channel = self._channel
        # Listen (and watch) before reading: nothing published after the read is missed.
        await channel.ensure_listening()
        channel.watch(self._task_id, self._wake)
        self._watching = True
        after = self._after
        # Rows above (after, 1): an end mark at ``after`` itself is not news.
        live, rows = await channel.read(self._task_id, (after, 1), True)
        if not rows and not live and self._current is not None and self._current > after:
            raise EventsLost(f"events after {after} expired")
        self.replayed(rows)

    def replayed(self, rows: list[tuple[Any, ...]]) -> None:
        """Take the retained rows above ``after`` (``EventsLost``: some were trimmed)."""
        after = self._after
        if rows:
            first_prev = rows[0][4]
            if first_prev is None or first_prev > after:
                raise EventsLost(f"events after {after} were trimmed")
        self._last = (after, 1)
        self._take(rows)

    @property
    def pending(self) -> deque[ChannelItem]:
        """The items read and not yet yielded."""
        return self._items

    @property
    def broken(self) -> bool:
        """Whether a row read names an earlier event that was never published."""
        return self._hole

    def _take(self, rows: list[tuple[Any, ...]]) -> None:
        for event_id, seq, kind, body, prev in rows:
            if self._last is not None and prev is not None and prev > self._last[0]:
                self._hole = True
                return
            self._last = (int(event_id), int(seq))
            if kind == "end":
                self._items.append((int(event_id), None))
                continue
            model = _KINDS.get(kind)
            if model is not None:
                self._items.append((int(event_id), model.model_validate_json(body)))

    async def aclose(self) -> None:
        self._items.clear()
        if self._watching:
            self._watching = False
            self._channel.unwatch(self._task_id, self._wake)


class PostgresPushConfigStore(PushConfigStore):
    """Push configs in one table, shared by every instance on the schema.

    Bounded per task (``max_configs_per_task``); list order is creation order.
    """

    def __init__(
        self, database: PostgresDatabase, *, stream_ttl: int, max_configs_per_task: int = 16
    ) -> None:
        self.database = database
        self.stream_ttl = stream_ttl
        """How long the channel keeps a task's event head (and the push mark on it)."""
        self.max_configs_per_task = max_configs_per_task
        s = database.quoted_schema
        t = f"{s}.a2a_push_configs"
        self._put = (
            f"INSERT INTO {t} AS p (task_id, config_id, version, created_ns, body)"
            " SELECT %(t)s, %(c)s, %(v)s, %(n)s, %(b)s"
            f" WHERE (SELECT count(*) FROM {t} WHERE task_id = %(t)s) < %(max)s"
            f" OR EXISTS (SELECT 1 FROM {t} WHERE task_id = %(t)s AND config_id = %(c)s)"
            " ON CONFLICT (task_id, config_id) DO UPDATE SET version = EXCLUDED.version,"
            " created_ns = EXCLUDED.created_ns, body = EXCLUDED.body"
        )
        self._get = (
            f"SELECT version, created_ns, body FROM {t} WHERE task_id = %s AND config_id = %s"
        )
        self._list = f"SELECT version, created_ns, body FROM {t} WHERE task_id = %s ORDER BY placed"
        self._delete = f"DELETE FROM {t} WHERE task_id = %s AND config_id = %s"
        self._delete_task = f"DELETE FROM {t} WHERE task_id = %s"
        h = f"{s}.a2a_event_heads"
        self._read_mark = (
            f"SELECT push_mark FROM {h} WHERE task_id = %s"
            " AND touched > now() - make_interval(secs => %s)"
        )
        self._write_marks = (
            f"UPDATE {h} AS h SET push_mark = GREATEST(COALESCE(h.push_mark, -1), v.m)"
            " FROM unnest(%s::text[], %s::bigint[]) AS v(t, m) WHERE h.task_id = v.t"
        )

    async def put(self, entry: PushConfigEntry) -> None:
        if _nul(entry.task_id, entry.config_id):
            raise InvalidParamsError("A push notification config id may not contain NUL")
        body = entry.config.model_dump_json(by_alias=True, exclude_none=True)
        params = {
            "t": entry.task_id,
            "c": entry.config_id,
            "v": entry.version,
            "n": entry.created_ns,
            "b": body,
            "max": self.max_configs_per_task,
        }
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._put, params)
            if cur.rowcount != 1:
                raise InvalidParamsError(
                    f"A task may have at most {self.max_configs_per_task} push notification configs"
                )

    async def get(self, task_id: str, config_id: str) -> PushConfigEntry | None:
        if _nul(task_id, config_id):
            return None
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._get, (task_id, config_id))
            row = await cur.fetchone()
        return None if row is None else _entry(row)

    async def list(self, task_id: str) -> list[PushConfigEntry]:
        if _nul(task_id):
            return []
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._list, (task_id,))
            rows = await cur.fetchall()
        return [_entry(row) for row in rows]

    async def delete(self, task_id: str, config_id: str) -> bool:
        if _nul(task_id, config_id):
            return False
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._delete, (task_id, config_id))
            return cur.rowcount == 1

    async def delete_task(self, task_id: str) -> int:
        if _nul(task_id):
            return 0
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._delete_task, (task_id,))
            return int(cur.rowcount)

    @property
    def keeps_marks(self) -> bool:
        return True

    async def read_mark(self, task_id: str) -> int | None:
        if _nul(task_id):
            return None
        ttl = float(self.stream_ttl)
        async with await self.database.connection() as conn:
            cur = await conn.execute(self._read_mark, (task_id, ttl))
            row = await cur.fetchone()
        return None if row is None or row[0] is None else int(row[0])

    async def write_marks(self, marks: Mapping[str, int]) -> None:
        """Raise the marks on the tasks' event heads (a task without events keeps none)."""
        marks = {t: m for t, m in marks.items() if not _nul(t)}
        if not marks:
            return
        async with await self.database.connection() as conn:
            await conn.execute(self._write_marks, (list(marks), list(marks.values())))


def _nul(*values: str) -> bool:
    return any("\x00" in v for v in values)


def _entry(row: tuple[Any, ...]) -> PushConfigEntry:
    version, created_ns, body = row
    config = TaskPushNotificationConfig.model_validate_json(body)
    return PushConfigEntry(config=config, version=str(version), created_ns=int(created_ns))
