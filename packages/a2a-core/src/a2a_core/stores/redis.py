"""A shared store in Redis: several server instances on one key prefix see the same tasks.

Needs the ``redis`` extra (``pip install 'a2a-adapters-core[redis]'``); the
package is imported when a store is made, never by ``import a2a_core``.

Keys, under ``<prefix>`` (one prefix per deployment; ``<o>`` is the owner,
``-`` for anonymous, ``=`` + the percent-quoted name otherwise)::

    <prefix>:task:<id>               hash: owner, version, body (the task's JSON),
                                     ctx, state, ts, and the index keys it is in
    <prefix>:owner:<o>               sorted set: the owner's task ids
    <prefix>:ctx:<o>:<context id>    sorted set: the owner's tasks in one context
    <prefix>:state:<o>:<state>       sorted set: the owner's tasks in one state
    <prefix>:terminal                sorted set: terminal tasks by write order (eviction)
    <prefix>:seq, <prefix>:count     the write counter and the number of tasks

The index scores are ``base.sort_key``'s time (minus the status time, 0 when
undated), so ascending order is list order and ties fall to the id.

Every write is one Lua script: the owner and version check and the write
(task and indexes) are atomic for all instances, so exactly one of several
racing savers wins. ``list`` reads the one index its filter names (context,
else state, else the owner's) from the page token on: O(log n + page).
``status_after`` is a score range on it, and ``total_size`` one ZCARD or
ZCOUNT. Only context and state together (or ``status_after`` at or before
1970) check each task: that walks the owner's tasks in the context, O(its size).

Run leases and idempotent sends (``a2a_core.stores.cluster``)::

    <prefix>:lease:<id>              hash: owner, instance, expires (a running task's lease)
    <prefix>:leases                  sorted set: task ids by lease expiry
    <prefix>:sent:<key>              string: "<task id> <expiry>" (also expires on its own)
    <prefix>:sends                   sorted set: send keys by expiry (bounds their count)

Redis Cluster: the scripts touch keys named in the task hash, so put a hash
tag in the prefix (``?prefix={a2a}``) to keep every key in one slot.

Instances on one prefix also share live events (one stream per task, kept
for ``stream_ttl`` seconds after the task's last event, at most about
``stream_max_events`` entries), cancel requests and push configs: see
``event_channel()`` and ``a2a_core.stores.redis_channel``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..contracts.task_store import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    decode_cursor,
    encode_cursor,
    sort_key,
)
from ..types import Task
from .cluster import Lease, SentMessages, TaskLeases
from .redis_connection import RedisConnection, as_text

if TYPE_CHECKING:
    from .redis_channel import RedisTaskChannel
    from .redis_files import RedisFileBackend

__all__ = ["RedisTaskStore"]

_BATCH = 256
EVICT_BATCH = 500
"""The most tasks one script evicts (a script holds up every client of the server)."""

# Removes the task whose hash is KEYS[1] (or the key in `key`) from every index it is in.
_UNINDEX = """
local function unindex(key, id, terminal, count)
  local found = redis.call('HMGET', key, 'kowner', 'kctx', 'kstate')
  for _, index in ipairs(found) do
    if index then redis.call('ZREM', index, id) end
  end
  redis.call('DEL', key)
  redis.call('ZREM', terminal, id)
  redis.call('DECR', count)
end
"""

# Evicts up to `batch` of the least recently written terminal tasks beyond `max` (0: none);
# returns 1 when more are due. A script blocks every client of the server while it runs,
# so a bound far below the count (lowered) is reached a batch per script.
_EVICT_SOME = """
local function evict(terminal, count, max, batch, prefix)
  if max <= 0 then return 0 end
  local excess = tonumber(redis.call('GET', count) or '0') - max
  if excess <= 0 then return 0 end
  local ids = redis.call('ZRANGE', terminal, 0, math.min(excess, batch) - 1)
  for _, id in ipairs(ids) do unindex(prefix .. id, id, terminal, count) end
  if excess > batch and #ids == batch then return 1 end
  return 0
end
"""

# KEYS: task, owner set, ctx set, state set, terminal, seq, count.
# ARGV: id, owner tag, body, ctx, state, ts, score, terminal (0/1), max_tasks (0: none),
#       task key prefix, eviction batch. Returns 0 when the task exists, 1 once created,
#       2 once created with more evictions due (``_EVICT``).
_CREATE = (
    _UNINDEX
    + _EVICT_SOME
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local seq = redis.call('INCR', KEYS[6])
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'version', 1, 'body', ARGV[3],
           'ctx', ARGV[4], 'state', ARGV[5], 'ts', ARGV[6],
           'kowner', KEYS[2], 'kctx', KEYS[3], 'kstate', KEYS[4])
for i = 2, 4 do redis.call('ZADD', KEYS[i], ARGV[7], ARGV[1]) end
if ARGV[8] == '1' then redis.call('ZADD', KEYS[5], seq, ARGV[1]) end
redis.call('INCR', KEYS[7])
return 1 + evict(KEYS[5], KEYS[7], tonumber(ARGV[9]), tonumber(ARGV[11]), ARGV[10])
"""
)

# KEYS: terminal, count. ARGV: max_tasks, eviction batch, task key prefix.
# Returns 1 when more evictions are due.
_EVICT = (
    _UNINDEX
    + _EVICT_SOME
    + """
return evict(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
"""
)

# KEYS: task, owner set, ctx set, state set, terminal, seq.
# ARGV: id, owner tag, expected version, body, ctx, state, ts, score, terminal (0/1),
# the new version ("": expected + 1; above it: ``save_at``).
# Returns the new version, 0 when missing or not the owner's, -current when stale.
_SAVE = """
local current = redis.call('HMGET', KEYS[1], 'owner', 'version', 'kctx', 'kstate')
if not current[1] or current[1] ~= ARGV[2] then return 0 end
if tonumber(current[2]) ~= tonumber(ARGV[3]) then return -tonumber(current[2]) end
if current[3] and current[3] ~= KEYS[3] then redis.call('ZREM', current[3], ARGV[1]) end
if current[4] and current[4] ~= KEYS[4] then redis.call('ZREM', current[4], ARGV[1]) end
local version
if ARGV[10] ~= '' then
  version = tonumber(ARGV[10])
  redis.call('HSET', KEYS[1], 'version', version)
else
  version = redis.call('HINCRBY', KEYS[1], 'version', 1)
end
redis.call('HSET', KEYS[1], 'body', ARGV[4], 'ctx', ARGV[5], 'state', ARGV[6], 'ts', ARGV[7],
           'kctx', KEYS[3], 'kstate', KEYS[4])
for i = 2, 4 do redis.call('ZADD', KEYS[i], ARGV[8], ARGV[1]) end
local seq = redis.call('INCR', KEYS[6])
if ARGV[9] == '1' then
  redis.call('ZADD', KEYS[5], seq, ARGV[1])
else
  redis.call('ZREM', KEYS[5], ARGV[1])
end
return version
"""

# KEYS: task, terminal, count. ARGV: id, owner tag.
_DELETE = (
    _UNINDEX
    + """
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[2] then return 0 end
unindex(KEYS[1], ARGV[1], KEYS[2], KEYS[3])
return 1
"""
)


# KEYS: lease hash, lease set. ARGV: id, owner tag, instance, until, now.
# Returns nil when taken (or extended), else {owner, instance, expires} of the live holder.
_ACQUIRE = """
local held = redis.call('HMGET', KEYS[1], 'owner', 'instance', 'expires')
if held[2] and held[2] ~= ARGV[3] and tonumber(held[3]) > tonumber(ARGV[5]) then
  return held
end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'instance', ARGV[3], 'expires', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return false
"""

# KEYS: lease set, then one lease hash per id. ARGV: instance, until, then the ids.
# Returns the ids whose lease this instance no longer holds.
_RENEW = """
local lost = {}
for i = 2, #KEYS do
  local id = ARGV[i + 1]
  if redis.call('HGET', KEYS[i], 'instance') == ARGV[1] then
    redis.call('HSET', KEYS[i], 'expires', ARGV[2])
    redis.call('ZADD', KEYS[1], ARGV[2], id)
  else
    table.insert(lost, id)
  end
end
return lost
"""

# KEYS: lease hash, lease set. ARGV: id, instance.
_RELEASE = """
if redis.call('HGET', KEYS[1], 'instance') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""

# KEYS: lease hash, lease set. ARGV: id, instance, now, new holder, until.
_TAKE = """
local held = redis.call('HMGET', KEYS[1], 'instance', 'expires')
if held[1] ~= ARGV[2] or tonumber(held[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'instance', ARGV[4], 'expires', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
return 1
"""

# KEYS: record, record set. ARGV: key, task id, retention in ms, expiry, now, max records,
# record key prefix. Returns the task id of a live record, or nil once recorded.
_REMEMBER = """
local existing = redis.call('GET', KEYS[1])
if existing then
  local task, expires = string.match(existing, '^(.*) ([^ ]*)$')
  if tonumber(expires) > tonumber(ARGV[5]) then return task end
end
redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. ARGV[4], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
if excess > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[2], excess)
  for i = 1, #popped, 2 do redis.call('DEL', ARGV[7] .. popped[i]) end
end
return false
"""

# KEYS: record, record set. ARGV: key, task id.
_FORGET = """
local existing = redis.call('GET', KEYS[1])
if existing and string.match(existing, '^(.*) [^ ]*$') == ARGV[2] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 0
"""


class RedisTaskStore(TaskStore, TaskLeases, SentMessages):
    """Tasks in Redis under ``prefix``, shared by every store (and process) using that prefix.

    ``url`` is a redis-py URL (``redis://[:password@]host:port/db``,
    ``rediss://`` for TLS); the client connects on first use. Pass ``client``
    (a ``redis.asyncio.Redis``) to share one you own: the store then never
    closes it. ``max_tasks`` (default: unbounded) evicts the least recently
    updated terminal tasks of the whole prefix on ``create``. Use a store from
    one event loop: redis-py binds its connections to the loop that opened them.
    ``stream_max_events`` and ``stream_ttl`` bound each task's event stream
    (the replay a resubscribe with ``Last-Event-ID`` can get).
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "a2a",
        max_tasks: int | None = None,
        max_sends: int = 100_000,
        client: Any = None,
        stream_max_events: int = 1000,
        stream_ttl: int = 3600,
    ) -> None:
        if max_sends <= 0:
            raise ValueError("max_sends must be > 0")
        self.max_sends = max_sends
        if not prefix:
            raise ValueError("the key prefix must not be empty")
        if max_tasks is not None and max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        self.url = url
        self.prefix = prefix
        self.max_tasks = max_tasks
        self.connection = RedisConnection(url, prefix=prefix, client=client, name=repr(self))
        """The client and prefix, shared with the event channel and the file backend."""
        if stream_max_events <= 0 or stream_ttl <= 0:
            raise ValueError("stream_max_events and stream_ttl must be > 0")
        self.stream_max_events = stream_max_events
        self.stream_ttl = stream_ttl
        self._channel: RedisTaskChannel | None = None
        self._files: RedisFileBackend | None = None

    def event_channel(self) -> RedisTaskChannel:
        """The channel every instance on this prefix shares (events, cancels, push configs)."""
        if self._channel is None:
            from .redis_channel import RedisTaskChannel

            self._channel = RedisTaskChannel(
                self.connection,
                self.save_and_then,
                stream_max_events=self.stream_max_events,
                stream_ttl=self.stream_ttl,
            )
        return self._channel

    def file_backend(self) -> RedisFileBackend:
        """Answer files served by URL, shared by every instance on this prefix."""
        if self._files is None:
            from .redis_files import RedisFileBackend

            self._files = RedisFileBackend(self.connection)
        return self._files

    def __repr__(self) -> str:
        return f"RedisTaskStore(prefix={self.prefix!r}, max_tasks={self.max_tasks!r})"

    # -- keys ---------------------------------------------------------------------------
    def _task_key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _owner_key(self, owner: str | None) -> str:
        return f"{self.prefix}:owner:{_owner_part(owner)}"

    def _context_key(self, owner: str | None, context_id: str) -> str:
        return f"{self.prefix}:ctx:{_owner_part(owner)}:{quote(context_id, safe='')}"

    def _state_key(self, owner: str | None, state: str) -> str:
        return f"{self.prefix}:state:{_owner_part(owner)}:{state}"

    def _index_keys(self, task: Task, owner: str | None) -> list[str]:
        """The task's hash, then the owner, context and state indexes it belongs in."""
        return [
            self._task_key(task.id),
            self._owner_key(owner),
            self._context_key(owner, task.context_id),
            self._state_key(owner, task.status.state.value),
        ]

    # -- the TaskStore contract ---------------------------------------------------------
    async def create(self, task: Task, owner: str | None) -> StoredTask:
        p = self.prefix
        keys = [*self._index_keys(task, owner), f"{p}:terminal", f"{p}:seq", f"{p}:count"]
        bound, prefix = self.max_tasks or 0, f"{p}:task:"
        args = [task.id, _owner_tag(owner), *_fields(task), bound, prefix, EVICT_BATCH]
        created = await self.connection.script("create", _CREATE, keys, args)
        if created == 0:
            raise ConcurrentUpdateError(f"task {task.id} already exists")
        more = created == 2
        while more:  # far over the bound (it was lowered): a batch per script
            keys = [f"{p}:terminal", f"{p}:count"]
            args = [bound, EVICT_BATCH, prefix]
            more = await self.connection.script("evict", _EVICT, keys, args) == 1
        return StoredTask(task, 1, owner)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        client = self.connection.client()
        found = await client.hmget(self._task_key(task_id), "owner", "version", "body")
        tag, version, body = found
        if tag is None or as_text(tag) != _owner_tag(owner) or body is None:
            return None
        return StoredTask(Task.model_validate_json(body), int(version), owner)

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        return await self.save_and_then(task, owner, expected_version)

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (``SavesAtVersion``)."""
        return await self.save_and_then(task, owner, expected_version, version=version)

    async def save_and_then(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        then: tuple[str, str] | None = None,
        more_keys: Sequence[str] = (),
        more_args: Sequence[Any] = (),
        *,
        version: int | None = None,
    ) -> StoredTask:
        """``save``, and in the same script (one round trip, atomic) more work.

        ``then`` is (a name, a Lua chunk): the chunk runs after ``local function
        save()`` (the save, returning what ``save`` would: the new version, 0 or
        minus the current one) is defined, calls it and returns its result. It gets
        the save's KEYS (1-6) and ARGV (1-10), then ``more_keys`` and ``more_args``
        (the task channel adds the event's stream entry this way). ``version``: the
        version to save at (``save_at``; default the expected one plus one).
        """
        name, source = ("save", _SAVE) if then is None else then
        if then is not None:
            source = "local function save()\n" + _SAVE + "\nend\n" + source
        p = self.prefix
        keys = [*self._index_keys(task, owner), f"{p}:terminal", f"{p}:seq", *more_keys]
        target = "" if version is None else version
        args = [task.id, _owner_tag(owner), expected_version, *_fields(task), target, *more_args]
        result = int(await self.connection.script(name, source, keys, args))
        if result == 0:
            raise ConcurrentUpdateError(f"task {task.id} no longer exists")
        if result < 0:
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {-result}, expected {expected_version}"
            )
        return StoredTask(task, result, owner)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        p = self.prefix
        keys = [self._task_key(task_id), f"{p}:terminal", f"{p}:count"]
        return (
            await self.connection.script("delete", _DELETE, keys, [task_id, _owner_tag(owner)]) == 1
        )

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        cursor = decode_cursor(query.page_token) if query.page_token else None
        client = self.connection.client()
        if query.context_id is not None:
            key = self._context_key(owner, query.context_id)
        elif query.state is not None:
            key = self._state_key(owner, query.state.value)
        else:
            key = self._owner_key(owner)
        after = query.status_after.timestamp() if query.status_after is not None else None
        # Scores are minus the status time (0 when undated): status >= after is score <= -after,
        # and for after > 0 that range already leaves undated tasks out.
        high = "+inf" if after is None else repr(-after)
        per_task = query.context_id is not None and query.state is not None
        per_task = per_task or (after is not None and after <= 0)
        want = query.page_size + 1
        page: list[str] = []
        if not per_task:
            if after is None:
                total = int(await client.zcard(key))
            else:
                total = int(await client.zcount(key, "-inf", high))
            low = "-inf" if cursor is None else repr(cursor[0])
            async for batch in _walk(client, key, low, high, want):
                page.extend(i for i, s in batch if _after(s, i, cursor))
                if len(page) >= want:
                    break
        else:  # count every match: walk the whole index once
            total = 0
            async for batch in _walk(client, key, "-inf", high):
                matches = await self._matches(batch, query, after)
                for (task_id, score), ok in zip(batch, matches, strict=True):
                    if ok:
                        total += 1
                        if len(page) < want and _after(score, task_id, cursor):
                            page.append(task_id)
        tasks = await self._bodies(page[: query.page_size])
        more = len(page) > query.page_size
        token = encode_cursor(tasks[-1]) if more and tasks else ""
        return TaskPage(tasks=tasks, next_page_token=token, total_size=total)

    # -- leases (TaskLeases) ------------------------------------------------------------
    def _lease_key(self, task_id: str) -> str:
        return f"{self.prefix}:lease:{task_id}"

    async def acquire_lease(
        self, task_id: str, owner: str | None, instance: str, until: float, now: float
    ) -> Lease | None:
        keys = [self._lease_key(task_id), f"{self.prefix}:leases"]
        args = [task_id, _owner_tag(owner), instance, repr(until), repr(now)]
        held = await self.connection.script("acquire", _ACQUIRE, keys, args)
        if not held:
            return None
        return Lease(task_id, _owner_of(as_text(held[0])), as_text(held[1]), float(held[2]))

    async def renew_leases(self, instance: str, task_ids: list[str], until: float) -> list[str]:
        if not task_ids:
            return []
        keys = [f"{self.prefix}:leases", *(self._lease_key(t) for t in task_ids)]
        lost = await self.connection.script(
            "renew", _RENEW, keys, [instance, repr(until), *task_ids]
        )
        return [as_text(t) for t in lost]

    async def release_lease(self, task_id: str, instance: str) -> None:
        keys = [self._lease_key(task_id), f"{self.prefix}:leases"]
        await self.connection.script("release", _RELEASE, keys, [task_id, instance])

    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        client = self.connection.client()
        high = "+inf" if now == float("inf") else repr(now)
        ids = [
            as_text(i)
            for i in await client.zrangebyscore(f"{self.prefix}:leases", "-inf", high, 0, limit)
        ]
        if not ids:
            return []
        pipe = client.pipeline(transaction=False)
        for task_id in ids:
            pipe.hmget(self._lease_key(task_id), "owner", "instance", "expires")
        found: list[Lease] = []
        for task_id, (owner, instance, expires) in zip(ids, await pipe.execute(), strict=True):
            if instance is not None:
                found.append(
                    Lease(task_id, _owner_of(as_text(owner)), as_text(instance), float(expires))
                )
        return found

    async def take_expired_lease(self, lease: Lease, now: float, holder: str, until: float) -> bool:
        keys = [self._lease_key(lease.task_id), f"{self.prefix}:leases"]
        when = "1e308" if now == float("inf") else repr(now)
        args = [lease.task_id, lease.instance, when, holder, repr(until)]
        return int(await self.connection.script("take", _TAKE, keys, args)) == 1

    async def lease_of(self, task_id: str) -> Lease | None:
        owner, instance, expires = await self.connection.client().hmget(
            self._lease_key(task_id), "owner", "instance", "expires"
        )
        if instance is None:
            return None
        return Lease(task_id, _owner_of(as_text(owner)), as_text(instance), float(expires))

    # -- idempotent sends (SentMessages) -------------------------------------------------
    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        p = self.prefix
        keys = [f"{p}:sent:{key}", f"{p}:sends"]
        args = [
            key,
            task_id,
            max(1, int(retention * 1000)),
            repr(now + retention),
            repr(now),
            self.max_sends,
            f"{p}:sent:",
        ]
        existing = await self.connection.script("remember", _REMEMBER, keys, args)
        return None if not existing else as_text(existing)

    async def forget_send(self, key: str, task_id: str) -> None:
        p = self.prefix
        await self.connection.script(
            "forget", _FORGET, [f"{p}:sent:{key}", f"{p}:sends"], [key, task_id]
        )

    async def aclose(self) -> None:
        """Close the connection pool (unless the client was passed in); idempotent."""
        if self.connection.closed:
            return
        if self._channel is not None:
            await self._channel.aclose()
        await self.connection.aclose()

    # -- helpers ------------------------------------------------------------------------
    async def _matches(
        self, batch: Sequence[tuple[str, float]], query: TaskQuery, after: float | None
    ) -> list[bool]:
        pipe = self.connection.client().pipeline(transaction=False)
        for task_id, _ in batch:
            pipe.hmget(self._task_key(task_id), "ctx", "state", "ts")
        out: list[bool] = []
        for ctx, state, ts in await pipe.execute():
            ok = ctx is not None
            if ok and query.context_id is not None:
                ok = as_text(ctx) == query.context_id
            if ok and query.state is not None:
                ok = as_text(state) == query.state.value
            if ok and after is not None:
                ok = bool(ts) and float(ts) >= after
            out.append(ok)
        return out

    async def _bodies(self, ids: Sequence[str]) -> list[Task]:
        if not ids:
            return []
        pipe = self.connection.client().pipeline(transaction=False)
        for task_id in ids:
            pipe.hget(self._task_key(task_id), "body")
        # A task deleted since the walk is simply left out of the page.
        return [Task.model_validate_json(b) for b in await pipe.execute() if b is not None]


def _owner_tag(owner: str | None) -> str:
    """The owner as stored in the task hash: None and every string stay distinct."""
    return "-" if owner is None else f"={owner}"


def _owner_of(tag: str) -> str | None:
    return None if tag == "-" else tag[1:]


def _owner_part(owner: str | None) -> str:
    """The owner as a key part: no ``:`` inside, so keys cannot collide."""
    return "-" if owner is None else "=" + quote(owner, safe="")


def _fields(task: Task) -> tuple[str, str, str, str, str, str]:
    """body, ctx, state, ts ("" when undated), score, terminal flag: as script arguments."""
    ts = task.status.timestamp
    return (
        task.model_dump_json(by_alias=True),
        task.context_id,
        task.status.state.value,
        repr(ts.timestamp()) if ts is not None else "",
        repr(sort_key(task)[0]),
        "1" if task.status.state.is_terminal else "0",
    )


def _after(score: float, task_id: str, cursor: tuple[float, str] | None) -> bool:
    """Whether (score, id) comes after the page token's position in list order."""
    return cursor is None or score > cursor[0] or (score == cursor[0] and task_id > cursor[1])


async def _walk(
    client: Any, key: str, low: str, high: str, first: int = _BATCH
) -> AsyncIterator[list[tuple[str, float]]]:
    """The sorted set's (id, score) from ``low`` to ``high`` (inclusive), in growing batches."""
    offset, size = 0, max(1, min(first, _BATCH))
    while True:
        rows = await client.zrangebyscore(key, low, high, start=offset, num=size, withscores=True)
        if not rows:
            return
        yield [(as_text(member), float(score)) for member, score in rows]
        if len(rows) < size:
            return
        offset += len(rows)
        size = min(size * 2, _BATCH)
