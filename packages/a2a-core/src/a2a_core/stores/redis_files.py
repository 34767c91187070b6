"""Stored answer files in Redis: what ``RedisTaskStore.file_backend()`` returns.

Every instance on the store's prefix serves the files any of them stored.
Keys, under ``<prefix>``::

    <prefix>:file:<token>        hash: data, media, name, task, owner, towner, expires,
                                 bound
                                 (also expires on its own a minute after the file)
    <prefix>:files               sorted set: tokens by expiry
    <prefix>:fileorder           sorted set: tokens by arrival (the oldest go first)
    <prefix>:fileseq             the arrival counter
    <prefix>:filemeta            hash: token -> "<size> <task id>" (for the counts)
    <prefix>:filebytes           the bytes held
    <prefix>:taskfiles:<task>    hash: token -> size, one task's files

Each operation is one Lua script, so the bounds hold for every instance at
once. Optional strings are tagged: ``-`` for None, ``=`` + the value. The
scripts name keys from the prefix, so on Redis Cluster the prefix needs a
hash tag (``?prefix={a2a}``), as for the task keys.
"""

from __future__ import annotations

from typing import Any

from ..contracts.files import FileBackend, FileLimits, StoredFile
from .redis_connection import RedisConnection

__all__ = ["RedisFileBackend"]

_GRACE_MS = 60_000

_DROP = """
local p = ARGV[1]
local zset, meta, total = p .. ':files', p .. ':filemeta', p .. ':filebytes'
local function drop(token)
  local m = redis.call('HGET', meta, token)
  redis.call('DEL', p .. ':file:' .. token)
  redis.call('ZREM', zset, token)
  redis.call('ZREM', p .. ':fileorder', token)
  if m then
    local size, task = string.match(m, '^(%d+) (.*)$')
    redis.call('HDEL', meta, token)
    redis.call('DECRBY', total, size)
    redis.call('HDEL', p .. ':taskfiles:' .. task, token)
  end
end
local function expire(now)
  for _, token in ipairs(redis.call('ZRANGEBYSCORE', zset, '-inf', now)) do drop(token) end
end
"""

# ARGV: prefix, token, data, media, name tag, task, owner tag, task owner tag, now, expires,
#       key ttl (ms), max bytes, max files, max task bytes, task bound (1/0).
# Returns 1 when kept, 0 when refused.
_PUT = (
    _DROP
    + """
expire(ARGV[9])
local size = string.len(ARGV[3])
local taskkey = p .. ':taskfiles:' .. ARGV[6]
local held = 0
for _, v in ipairs(redis.call('HVALS', taskkey)) do held = held + tonumber(v) end
if held + size > tonumber(ARGV[14]) then return 0 end
while redis.call('ZCARD', zset) > 0 and (
    tonumber(redis.call('GET', total) or '0') + size > tonumber(ARGV[12])
    or redis.call('ZCARD', zset) >= tonumber(ARGV[13])) do
  drop(redis.call('ZRANGE', p .. ':fileorder', 0, 0)[1])
end
local key = p .. ':file:' .. ARGV[2]
redis.call('HSET', key, 'data', ARGV[3], 'media', ARGV[4], 'name', ARGV[5], 'task', ARGV[6],
           'owner', ARGV[7], 'towner', ARGV[8], 'expires', ARGV[10], 'bound', ARGV[15])
redis.call('PEXPIRE', key, ARGV[11])
redis.call('ZADD', zset, ARGV[10], ARGV[2])
redis.call('ZADD', p .. ':fileorder', redis.call('INCR', p .. ':fileseq'), ARGV[2])
redis.call('HSET', meta, ARGV[2], size .. ' ' .. ARGV[6])
redis.call('INCRBY', total, size)
redis.call('HSET', taskkey, ARGV[2], size)
return 1
"""
)

# ARGV: prefix, task id. Returns how many files the task had.
_DROP_TASK = (
    _DROP
    + """
local tokens = redis.call('HKEYS', p .. ':taskfiles:' .. ARGV[2])
for _, token in ipairs(tokens) do drop(token) end
return #tokens
"""
)

# ARGV: prefix, now. Returns {files, bytes}.
_USAGE = (
    _DROP
    + """
expire(ARGV[2])
return {redis.call('ZCARD', zset), tonumber(redis.call('GET', total) or '0')}
"""
)


def _tag(value: str | None) -> str:
    return "-" if value is None else f"={value}"


def _untag(value: bytes | None) -> str | None:
    text = (value or b"-").decode()
    return None if text == "-" else text[1:]


class RedisFileBackend(FileBackend):
    """Files in the store's Redis, under its prefix (made by ``RedisTaskStore``, on its
    ``connection``)."""

    def __init__(self, connection: RedisConnection) -> None:
        self.connection = connection

    async def _run(self, name: str, source: str, args: list[Any]) -> Any:
        return await self.connection.script(name, source, [], [self.connection.prefix, *args])

    async def put(self, token: str, file: StoredFile, limits: FileLimits, now: float) -> bool:
        key_ttl = int((file.expires - now) * 1000) + _GRACE_MS
        args = [
            token,
            file.data,
            file.media_type,
            _tag(file.filename),
            file.task_id,
            _tag(file.owner),
            _tag(file.task_owner),
            repr(now),
            repr(file.expires),
            key_ttl,
            limits.max_bytes,
            limits.max_files,
            limits.max_task_bytes,
            int(file.task_bound),
        ]
        return int(await self._run("file_put", _PUT, args)) == 1

    async def get(self, token: str, now: float) -> StoredFile | None:
        client = self.connection.client()
        key = f"{self.connection.prefix}:file:{token}"
        fields = ("data", "media", "name", "task", "owner", "towner", "expires", "bound")
        data, media, name, task, owner, towner, expires, bound = await client.hmget(key, *fields)
        if data is None or expires is None or float(expires) <= now:
            return None
        return StoredFile(
            bytes(data),
            media.decode(),
            _untag(name),
            task.decode(),
            _untag(owner),
            float(expires),
            task_owner=_untag(towner),
            task_bound=bound != b"0",
        )

    async def drop_task(self, task_id: str) -> int:
        return int(await self._run("file_drop_task", _DROP_TASK, [task_id]))

    async def usage(self, now: float) -> tuple[int, int]:
        files, size = await self._run("file_usage", _USAGE, [repr(now)])
        return int(files), int(size)
