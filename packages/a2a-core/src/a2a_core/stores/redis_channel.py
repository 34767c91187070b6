"""The ``redis://`` task channel: live events, replay, cancels and push configs in Redis.

What ``RedisTaskStore.event_channel()`` returns (see ``a2a_core.contracts.channel``
for the contract). Keys and channels, under the store's ``<prefix>``::

    <prefix>:events:<task id>   stream: one entry per event, id "<event id>-0"
                                (an end mark "<event id>-1"), fields k (kind),
                                e (the event's JSON), p (the previous entry's id)
    <prefix>:push:<task id>     hash: config id -> the stored push config (JSON)
    <prefix>:pushmark:<task id> string: the task's delivered-up-to mark (push; expires
                                like the stream, ``stream_ttl`` after it was last raised)
    <prefix>:control            pub/sub channel: "cancel <task id>"

Publishing is one Lua script. The instance running a task saves it and
publishes the event the save produced in one script (``save_and_publish``:
one round trip per event, and never a task saved without its event); an
event from elsewhere (a cancel, a settled orphan) is saved, then published.
Publishing drops an event not above the stream's last entry (a late
writer), records the previous entry's id in ``p`` (or the publisher's
``previous`` when that is newer, or the stream is fresh: an event saved by
an instance that died before publishing it leaves a hole there), adds the
entry with approximate ``MAXLEN`` trimming (``stream_max_events``) and refreshes the stream's expiry
(``stream_ttl`` seconds after the task's last event). A follower reads the
retained entries above its id with ``XRANGE``; the first one's ``p`` shows
whether anything older it needs was trimmed (then ``EventsLost``), and any
later entry's ``p`` above the entry read before it marks a hole (the events
before it are delivered, then ``EventsLost``). A missing
stream with the caller's version above ``after`` means the events expired.
Then it waits for newer entries: every follower of the instance waits in one
``XREAD BLOCK`` over all the streams followed, on one connection, re-armed every
``block_ms`` (``StreamWaits``), so connections do not grow with followers.

The channel owns the timeouts of its waiting reads, whatever the URL (or a
client passed in) says about ``socket_timeout``: the followers' read runs on a
pool of its own, made with the same connection settings but a socket read timeout of
``block_ms`` plus ``READ_GRACE_SECONDS``, so a quiet stream is never cut by the
client while Redis holds the read; a read that still times out (a slow Redis)
is re-armed, never taken for the end of the stream. The control subscription
waits ``block_ms`` at a time with an explicit timeout, which the socket timeout
does not apply to.

Cancel requests go to every instance by ``PUBLISH``; each instance holds one
pub/sub connection (opened by ``start``) and hands requests to its manager.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

from ..contracts.channel import (
    ChannelItem,
    ChannelListener,
    EventsLost,
    ListenerSet,
    TaskChannel,
)
from ..contracts.push_configs import PushConfigEntry, PushConfigStore
from ..contracts.task_store import StoredTask
from ..errors import InvalidParamsError
from ..types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from .redis_connection import RedisConnection, as_text
from .redis_waits import StreamWaits, Watch

__all__ = ["RedisPushConfigStore", "RedisTaskChannel", "SaveAndThen"]

logger = logging.getLogger("a2a_core.stores.redis")

READ_GRACE_SECONDS = 5.0
"""How much longer than ``block_ms`` the followers' socket waits for Redis's answer."""

# publish(stream, id ms, id seq (0 event, 1 end mark), kind, body, previous hint ("" none),
#         maxlen, ttl seconds): 1 when added, 0 when not above the last entry.
_PUBLISH_FN = """
local function publish(key, ms, sq, kind, body, hint, maxlen, ttl)
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  ms, sq = tonumber(ms), tonumber(sq)
  local prev
  if #last > 0 then
    prev = last[1][1]
    local lms, lsq = string.match(prev, '(%d+)-(%d+)')
    lms, lsq = tonumber(lms), tonumber(lsq)
    if lms > ms or (lms == ms and lsq >= sq) then return 0 end
    if sq == 0 and hint ~= '' and tonumber(hint) > lms then
      prev = hint .. '-0'  -- an event saved but never published (its writer died): a hole
    end
  elseif hint ~= '' then
    prev = hint .. '-0'
  else
    prev = '?'
  end
  redis.call('XADD', key, 'MAXLEN', '~', maxlen, ms .. '-' .. sq, 'k', kind, 'e', body, 'p', prev)
  redis.call('EXPIRE', key, ttl)
  return 1
end
"""

# KEYS: stream. ARGV: publish's arguments after the stream.
_PUBLISH = (
    _PUBLISH_FN
    + """
return publish(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
"""
)

# KEYS: the save's 6, then the stream. ARGV: the save's 10, then kind, body, previous hint,
# maxlen, ttl, the stream's expected last event id ("": any). The task saved at a new
# version and its event added with that version as its id, atomically: returns what the
# save returns (-1, nothing written, when the stream's last id is not the expected one).
_SAVE_PUBLISH = (
    _PUBLISH_FN
    + """
if ARGV[16] ~= '' then
  local last = redis.call('XREVRANGE', KEYS[7], '+', '-', 'COUNT', 1)
  local head = -1
  if #last > 0 then head = tonumber(string.match(last[1][1], '(%d+)-')) end
  if head ~= tonumber(ARGV[16]) then return -1 end
end
local version = save()
if version > 0 then
  publish(KEYS[7], version, 0, ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15])
end
return version
"""
)

# KEYS: mark keys. ARGV: ttl, then one mark per key. Each mark only ever rises.
_RAISE_MARKS = """
for i, key in ipairs(KEYS) do
  local mark = tonumber(ARGV[i + 1])
  local now = tonumber(redis.call('GET', key) or '-1')
  if mark > now then
    redis.call('SET', key, mark, 'EX', ARGV[1])
  end
end
return 1
"""

_KINDS: dict[str, type[TaskStatusUpdateEvent] | type[TaskArtifactUpdateEvent]] = {
    "s": TaskStatusUpdateEvent,
    "a": TaskArtifactUpdateEvent,
}


def _entry(event: StreamEvent) -> tuple[str, str] | None:
    """A task event's stream kind and JSON body (None: not a task event)."""
    if isinstance(event, TaskStatusUpdateEvent):
        return "s", event.model_dump_json(by_alias=True)
    if isinstance(event, TaskArtifactUpdateEvent):
        return "a", event.model_dump_json(by_alias=True)
    return None


def _field(fields: Any, name: str) -> str:
    """A stream entry's field (redis-py gives bytes keys, or str with decode_responses)."""
    value = fields.get(name.encode())
    if value is None:
        value = fields.get(name)
    return "" if value is None else as_text(value)


def _ms(entry_id: str) -> int:
    return int(entry_id.partition("-")[0])


class SaveAndThen(Protocol):
    """``RedisTaskStore.save_and_then``: a task's save, and more work in the same script."""

    async def __call__(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        then: tuple[str, str] | None = None,
        more_keys: Sequence[str] = (),
        more_args: Sequence[Any] = (),
        *,
        version: int | None = None,
    ) -> StoredTask: ...


class RedisTaskChannel(ListenerSet, TaskChannel):
    """Events in one Redis stream per task; cancels by pub/sub; push configs in hashes.

    Made by ``RedisTaskStore.event_channel()``; it shares the store's
    ``connection`` and saves a task with its event through ``save_and_then``.
    """

    def __init__(
        self,
        connection: RedisConnection,
        save_and_then: SaveAndThen,
        *,
        stream_max_events: int = 1000,
        stream_ttl: int = 3600,
        block_ms: int = 5000,
    ) -> None:
        if stream_max_events <= 0 or stream_ttl <= 0 or block_ms <= 0:
            raise ValueError("stream_max_events, stream_ttl and block_ms must be > 0")
        self.connection = connection
        self._save_and_then = save_and_then
        self.prefix = connection.prefix
        self.stream_max_events = stream_max_events
        self.stream_ttl = stream_ttl
        self.block_ms = block_ms
        self._listeners: list[ChannelListener] = []
        self._reads: Any = None
        self._reads_pool: Any = None
        self._script: Any = None
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._push: RedisPushConfigStore | None = None
        self._waits: StreamWaits | None = None

    @property
    def shared(self) -> bool:
        return True

    @property
    def waits(self) -> StreamWaits:
        """The one read every follower of this channel waits in."""
        if self._waits is None:
            self._waits = StreamWaits(self.waiting_client, self._client, self.block_ms)
        return self._waits

    def _client(self) -> Any:
        return self.connection.client()

    def waiting_client(self) -> Any:
        """The client followers wait on: the store's settings, the channel's read timeout."""
        if self._reads is None:
            self._reads, self._reads_pool = _waiting_client(
                self._client(), self.block_ms / 1000 + READ_GRACE_SECONDS
            )
        return self._reads

    def stream_key(self, task_id: str) -> str:
        """The key of a task's event stream."""
        return f"{self.prefix}:events:{task_id}"

    @property
    def control_channel(self) -> str:
        """The pub/sub channel cancel requests travel on."""
        return f"{self.prefix}:control"

    # -- events -------------------------------------------------------------------
    async def publish(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None = None
    ) -> bool:
        entry = _entry(event)
        if entry is None:
            return True  # a direct reply belongs to no task: nothing to share
        return await self._add(task_id, event_id, 0, *entry, previous)

    async def save_and_publish(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        event: StreamEvent,
        previous: int | None,
        *,
        version: int | None = None,
    ) -> StoredTask:
        return await self._save_publish(task, owner, expected_version, event, previous, version)

    async def _save_publish(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        event: StreamEvent,
        previous: int | None,
        version: int | None,
        head: int | None = None,
    ) -> StoredTask:
        entry = _entry(event)
        if entry is None:
            if version is None:
                return await self._save_and_then(task, owner, expected_version)
            return await self._save_and_then(task, owner, expected_version, version=version)
        hint = "" if previous is None else str(previous)
        expect = "" if head is None else str(head)
        more_args = [*entry, hint, self.stream_max_events, self.stream_ttl, expect]
        return await self._save_and_then(
            task,
            owner,
            expected_version,
            ("save_publish", _SAVE_PUBLISH),
            [self.stream_key(task.id)],
            more_args,
            version=version,
        )

    # -- writing behind -------------------------------------------------------------
    async def since(self, task_id: str, after: int) -> tuple[list[ChannelItem] | None, int]:
        key = self.stream_key(task_id)
        async with self._client().pipeline(transaction=True) as pipe:
            pipe.xrange(key, f"({after}-1", "+")
            pipe.xrevrange(key, "+", "-", count=1)
            rows, last = await pipe.execute()
        head = _ms(as_text(last[0][0])) if last else -1
        reader = _Follower(self, task_id, after, None)
        try:
            reader.replayed(rows)
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
        version = max(expected_version, head) + 1
        return await self._save_publish(
            task, owner, expected_version, event, version - 1, version, head
        )

    async def publish_end(self, task_id: str, event_id: int) -> None:
        await self._add(task_id, event_id, 1, "end", "", event_id)

    async def _add(
        self, task_id: str, ms: int, seq: int, kind: str, body: str, previous: int | None
    ) -> bool:
        if self._script is None:
            self._script = self._client().register_script(_PUBLISH)
        hint = "" if previous is None else str(previous)
        args = [ms, seq, kind, body, hint, self.stream_max_events, self.stream_ttl]
        if not await self._script(keys=[self.stream_key(task_id)], args=args):
            logger.debug("task %s: event %d-%d is not above the stream's last", task_id, ms, seq)
            return False
        return True

    def follow(
        self, task_id: str, after: int, current: int | None = None
    ) -> AsyncIterator[ChannelItem]:
        return _Follower(self, task_id, after, current)

    # -- cancels --------------------------------------------------------------------
    async def request_cancel(self, task_id: str) -> None:
        await self._client().publish(self.control_channel, f"cancel {task_id}")

    async def start(self) -> None:
        if self._reader is not None:
            return
        pubsub = self._client().pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self.control_channel)  # confirmed: requests arrive from now on
        self._pubsub = pubsub
        self._reader = asyncio.get_running_loop().create_task(
            self._read_control(pubsub), name="a2a-redis-control"
        )

    async def _read_control(self, pubsub: Any) -> None:
        wait = self.block_ms / 1000  # explicit: the URL's socket timeout does not apply
        while True:
            try:
                message = await pubsub.get_message(timeout=wait)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("the Redis control channel failed; reconnecting")
                await asyncio.sleep(1.0)
                continue
            if not message or message.get("type") != "message":
                continue
            verb, _, task_id = as_text(message["data"]).partition(" ")
            if verb != "cancel" or not task_id:
                continue
            for listener in tuple(self._listeners):
                handler = asyncio.ensure_future(listener.cancel_requested(task_id))
                self._handlers.add(handler)
                handler.add_done_callback(self._handlers.discard)

    # -- push configs -----------------------------------------------------------------
    def push_configs(self) -> PushConfigStore | None:
        if self._push is None:
            self._push = RedisPushConfigStore(self.connection, stream_ttl=self.stream_ttl)
        return self._push

    async def aclose(self) -> None:
        waits, self._waits = self._waits, None
        if waits is not None:
            await waits.aclose()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
        pool, self._reads_pool, self._reads = self._reads_pool, None, None
        if pool is not None:
            with contextlib.suppress(Exception):
                await pool.disconnect()


def _waiting_client(client: Any, read_timeout: float) -> tuple[Any, Any]:
    """A client on a pool like ``client``'s whose socket read timeout is ``read_timeout``,
    and that pool (None: ``client`` itself is used, its pool being of a kind not copied)."""
    pool: Any = getattr(client, "connection_pool", None)
    redis: Any = importlib.import_module("redis.asyncio")
    if type(pool) not in (redis.ConnectionPool, redis.BlockingConnectionPool):
        return client, None  # a cluster or sentinel client: re-armed reads still hold
    settings = {**pool.connection_kwargs, "socket_timeout": read_timeout}
    own = type(pool)(
        connection_class=pool.connection_class, max_connections=pool.max_connections, **settings
    )
    return redis.Redis(connection_pool=own), own


class _Follower:
    """Replay of a task's retained events above ``after``, then live ones."""

    def __init__(
        self, channel: RedisTaskChannel, task_id: str, after: int, current: int | None
    ) -> None:
        self._channel = channel
        self._key = channel.stream_key(task_id)
        self._after = after
        self._current = current
        self._last: str | None = None  # the last entry id read
        self._items: deque[ChannelItem] = deque()
        self._hole = False  # an entry's previous event was never published: stop there
        self._watch: tuple[StreamWaits, Watch] | None = None  # its place in the shared read

    def __aiter__(self) -> _Follower:
        return self

    async def __anext__(self) -> ChannelItem:
        while not self._items:
            if self._hole:
                raise EventsLost(f"an event before {self._last} was never published")
            if self._last is None:
                await self._replay()
            else:
                await self._wait()
        return self._items.popleft()

    async def _replay(self) -> None:
        client = self._channel.connection.client()
        after = self._after
        # Entries above "<after>-1": an end mark at ``after`` itself is not news.
        rows = await client.xrange(self._key, f"({after}-1", "+")
        if (
            not rows
            and self._current is not None
            and self._current > after
            and not await client.exists(self._key)
        ):
            raise EventsLost(f"events after {after} expired")
        self.replayed(rows)

    def replayed(self, rows: list[Any]) -> None:
        """Take the retained entries above ``after`` (``EventsLost``: some were trimmed)."""
        after = self._after
        if rows:
            first_prev = _field(rows[0][1], "p") or "?"
            if first_prev == "?" or _ms(first_prev) > after:
                raise EventsLost(f"events after {after} were trimmed")
        self._last = f"{after}-1"
        self._take(rows)

    @property
    def pending(self) -> deque[ChannelItem]:
        """The items read and not yet yielded."""
        return self._items

    @property
    def broken(self) -> bool:
        """Whether an entry read names an earlier event that was never published."""
        return self._hole

    async def _wait(self) -> None:
        if self._watch is None:
            waits = self._channel.waits
            self._watch = waits, waits.watch(self._key, self._last or f"{self._after}-1")
        waits, watch = self._watch
        self._take(await waits.next_rows(watch))

    def _take(self, rows: list[Any]) -> None:
        for entry_id, fields in rows:
            entry = as_text(entry_id)
            previous = _field(fields, "p")
            hole = self._last is not None and previous not in ("", "?")
            if hole and _ms(previous) > _ms(self._last or ""):
                self._hole = True
                return
            self._last = entry
            kind = _field(fields, "k")
            ms = _ms(entry)
            if kind == "end":
                self._items.append((ms, None))
                continue
            model = _KINDS.get(kind)
            if model is None:
                continue
            self._items.append((ms, model.model_validate_json(_field(fields, "e"))))

    async def aclose(self) -> None:
        self._items.clear()
        watch, self._watch = self._watch, None
        if watch is not None:
            watch[0].unwatch(watch[1])


class RedisPushConfigStore(PushConfigStore):
    """Push configs in one hash per task, shared by every instance on the prefix.

    Bounded per task (``max_configs_per_task``); Redis's own memory limit bounds the rest.
    """

    def __init__(
        self, connection: RedisConnection, *, stream_ttl: int, max_configs_per_task: int = 16
    ) -> None:
        self.connection = connection
        self.stream_ttl = stream_ttl
        """How long a delivered-up-to mark outlives its last raise (the channel's stream TTL)."""
        self.max_configs_per_task = max_configs_per_task
        self._raise: Any = None

    def _key(self, task_id: str) -> str:
        return f"{self.connection.prefix}:push:{task_id}"

    def mark_key(self, task_id: str) -> str:
        """The key of a task's delivered-up-to mark."""
        return f"{self.connection.prefix}:pushmark:{task_id}"

    @property
    def keeps_marks(self) -> bool:
        return True

    async def read_mark(self, task_id: str) -> int | None:
        raw = await self._client().get(self.mark_key(task_id))
        return None if raw is None else int(raw)

    async def write_marks(self, marks: Mapping[str, int]) -> None:
        if not marks:
            return
        if self._raise is None:
            self._raise = self._client().register_script(_RAISE_MARKS)
        keys = [self.mark_key(task_id) for task_id in marks]
        await self._raise(keys=keys, args=[self.stream_ttl, *marks.values()])

    def _client(self) -> Any:
        return self.connection.client()

    async def put(self, entry: PushConfigEntry) -> None:
        client = self._client()
        key = self._key(entry.task_id)
        full = await client.hlen(key) >= self.max_configs_per_task
        if full and not await client.hexists(key, entry.config_id):
            raise InvalidParamsError(
                f"A task may have at most {self.max_configs_per_task} push notification configs"
            )
        await client.hset(key, entry.config_id, _dump(entry))

    async def get(self, task_id: str, config_id: str) -> PushConfigEntry | None:
        raw = await self._client().hget(self._key(task_id), config_id)
        return _load(raw) if raw is not None else None

    async def list(self, task_id: str) -> list[PushConfigEntry]:
        found = await self._client().hvals(self._key(task_id))
        entries = [_load(raw) for raw in found]
        entries.sort(key=lambda e: (e.created_ns, e.config_id))
        return entries

    async def delete(self, task_id: str, config_id: str) -> bool:
        return bool(await self._client().hdel(self._key(task_id), config_id))

    async def delete_task(self, task_id: str) -> int:
        client = self._client()
        key = self._key(task_id)
        count = int(await client.hlen(key))
        await client.delete(key)
        return count


def _dump(entry: PushConfigEntry) -> str:
    return json.dumps(
        {
            "c": entry.config.model_dump(mode="json", by_alias=True, exclude_none=True),
            "v": entry.version,
            "t": entry.created_ns,
        }
    )


def _load(raw: bytes | str) -> PushConfigEntry:
    doc = json.loads(raw)
    config = TaskPushNotificationConfig.model_validate(doc["c"])
    return PushConfigEntry(config=config, version=str(doc["v"]), created_ns=int(doc["t"]))
