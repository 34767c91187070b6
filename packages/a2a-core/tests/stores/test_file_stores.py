"""Answer files served by URL live in the task store's backend, bounded the same everywhere.

The bounds (bytes and files in all, bytes per task, expiry) and the owner
rule hold alike in memory, SQLite, Redis and PostgreSQL. Over real sockets:
a URL minted by one instance is served by another on the same Redis or
PostgreSQL store (and, on ``memory://``, only by the instance that made it);
a task's files go with the task (deleted or evicted); beyond a task's quota
a file stays inline.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from a2a_core import running_server
from a2a_core.client import A2AClient
from a2a_core.server import AgentExecutor, FileStore, RequestContext, TaskUpdater
from a2a_core.server.files import FILES_PATH, FileBackend
from a2a_core.server.memory_files import MemoryFileBackend
from a2a_core.stores import MemoryTaskStore, TaskStore
from a2a_core.stores.postgres import PostgresTaskStore
from a2a_core.stores.redis import RedisTaskStore
from a2a_core.stores.sqlite import SqliteTaskStore
from a2a_core.types import Part, TaskState
from store_support import POSTGRES_URL, REDIS_URL

BIG = os.urandom(200_000)


@asynccontextmanager
async def task_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path, **options: int):
    """A fresh task store of ``kind`` (closed afterwards)."""
    store: TaskStore
    if kind == "memory":
        store = MemoryTaskStore(**options)
    elif kind == "sqlite":
        store = SqliteTaskStore(tmp_path / "tasks.db", **options)
    elif kind == "redis":
        store = RedisTaskStore(REDIS_URL, prefix=request.getfixturevalue("redis_prefix"), **options)
    else:
        schema = request.getfixturevalue("postgres_schema")
        store = PostgresTaskStore(POSTGRES_URL, schema=schema, **options)
    try:
        yield store
    finally:
        await store.aclose()


def shared_url(kind: str, request: pytest.FixtureRequest) -> str:
    if kind == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"


KINDS = ["memory", "sqlite", "redis", "postgres"]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_backend_bounds_bytes_files_tasks_and_time_alike(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with task_store(kind, request, tmp_path) as store:
        backend: FileBackend = store.file_backend() or MemoryFileBackend()
        assert isinstance(backend, MemoryFileBackend) == (kind == "memory")
        now = [1000.0]
        files = FileStore(
            inline_limit=0,
            max_bytes=100,
            max_files=3,
            max_task_bytes=60,
            ttl=10,
            backend=backend,
            clock=lambda: now[0],
        )

        async def put(data: bytes, task: str, owner: str | None = None) -> str | None:
            return await files.put(data, media_type="x/y", filename="f", task_id=task, owner=owner)

        first = await put(b"a" * 40, "t1")
        second = await put(b"b" * 40, "t2")
        third = await put(b"c" * 40, "t3", owner="alice")
        assert first
        assert second
        assert third
        assert await files.get(first, None) is None  # evicted: 120 bytes would exceed 100
        assert await files.usage() == (2, 80)
        assert await files.get(third, None) is None  # not the owner
        assert await files.get(third, "bob") is None
        got = await files.get(third, "alice")
        assert got is not None
        assert (got.data, got.media_type, got.filename, got.task_id) == (
            b"c" * 40,
            "x/y",
            "f",
            "t3",
        )
        assert await put(b"z" * 101, "t4") is None  # larger than the whole store
        assert await put(b"q" * 30, "t3") is None  # t3 would hold 70 bytes, its quota is 60
        assert await files.usage() == (2, 80)  # a refused file drops nothing
        for _ in range(3):
            assert await put(b"d", "t5")
        assert await files.usage() == (3, 3)  # max_files: the oldest went first
        now[0] = 1011.0
        assert await files.get(second, None) is None  # expired
        assert await put(b"e", "t6")
        assert await files.usage() == (1, 1)
        assert await files.drop_task("t6") == 1
        assert await files.usage() == (0, 0)
        for wrong in ("", "a/b", "x" * 200, "short"):
            assert await files.get(wrong, None) is None


async def big_file(context: RequestContext) -> list[Part]:
    return [Part(text="report"), Part(raw=BIG, filename="big.bin", media_type="image/png")]


def small_inline() -> FileStore:
    return FileStore(inline_limit=64 * 1024)


@pytest.mark.parametrize("kind", ["redis", "postgres"])
async def test_a_url_minted_on_one_instance_is_served_by_another(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url = shared_url(kind, request)
    async with (
        running_server(big_file, store_url=url, file_store=small_inline()) as a,
        running_server(big_file, store_url=url, file_store=small_inline()) as b,
        await A2AClient.connect(a.url) as client,
    ):
        result = await client.send("report please")
        assert result.state is TaskState.COMPLETED
        assert result.task is not None
        link = result.task.artifacts[0].parts[1].url
        assert link is not None
        assert link.startswith(f"{a.url}{FILES_PATH}")
        through_b = b.url + link[len(a.url) :]
        async with httpx.AsyncClient() as http:
            fetched = await http.get(through_b)
            assert fetched.status_code == 200
            assert fetched.content == BIG
            assert fetched.headers["content-type"] == "image/png"
        # B's own client downloads it too (its own origin)
        async with await A2AClient.connect(b.url) as other:
            part = result.task.artifacts[0].parts[1].model_copy(update={"url": through_b})
            assert (await other.download(part)).raw == BIG


async def test_on_memory_only_the_instance_that_made_the_url_serves_it() -> None:
    async with (
        running_server(big_file, file_store=small_inline()) as a,
        running_server(big_file, file_store=small_inline()) as b,
        await A2AClient.connect(a.url) as client,
    ):
        result = await client.send("x")
        assert result.task is not None
        link = result.task.artifacts[0].parts[1].url
        assert link is not None
        async with httpx.AsyncClient() as http:
            assert (await http.get(link)).status_code == 200
            assert (await http.get(b.url + link[len(a.url) :])).status_code == 404


@pytest.mark.parametrize("kind", KINDS)
async def test_a_deleted_tasks_files_are_gone(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with task_store(kind, request, tmp_path) as store:
        files = small_inline()
        async with (
            running_server(big_file, store=store, file_store=files) as server,
            await A2AClient.connect(server.url) as client,
        ):
            kept = await client.send("keep")
            doomed = await client.send("delete")
            assert kept.task is not None
            assert doomed.task is not None
            kept_url = kept.task.artifacts[0].parts[1].url
            doomed_url = doomed.task.artifacts[0].parts[1].url
            assert kept_url
            assert doomed_url
            assert await files.usage() == (2, 2 * len(BIG))
            assert await store.delete(doomed.task.id, None)
            async with httpx.AsyncClient() as http:
                assert (await http.get(doomed_url)).status_code == 404
                assert (await http.get(kept_url)).content == BIG
            assert await files.usage() == (1, len(BIG))  # the bytes are dropped, not just hidden


@pytest.mark.parametrize("kind", KINDS)
async def test_an_evicted_tasks_files_are_not_served(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with task_store(kind, request, tmp_path, max_tasks=1) as store:
        files = small_inline()
        async with (
            running_server(big_file, store=store, file_store=files) as server,
            await A2AClient.connect(server.url) as client,
        ):
            first = await client.send("first")
            second = await client.send("second")  # evicts the first (terminal) task
            assert first.task is not None
            assert second.task is not None
            first_url = first.task.artifacts[0].parts[1].url
            second_url = second.task.artifacts[0].parts[1].url
            assert first_url
            assert second_url
            async with httpx.AsyncClient() as http:
                assert (await http.get(first_url)).status_code == 404
                assert (await http.get(second_url)).content == BIG
            assert await files.usage() == (1, len(BIG))


async def two_big_files(context: RequestContext) -> list[Part]:
    return [
        Part(raw=BIG, filename="one.bin", media_type="image/png"),
        Part(raw=BIG[::-1], filename="two.bin", media_type="image/png"),
    ]


async def test_beyond_a_tasks_quota_a_file_stays_inline() -> None:
    files = FileStore(inline_limit=64 * 1024, max_task_bytes=len(BIG) + 1000)
    async with (
        running_server(two_big_files, file_store=files) as server,
        await A2AClient.connect(server.url) as client,
    ):
        for _ in range(2):  # the quota is per task: the second task gets its own
            result = await client.send("two files")
            assert result.state is TaskState.COMPLETED
            assert result.task is not None
            one, two = result.task.artifacts[0].parts
            assert one.url is not None
            assert one.raw is None
            assert (two.raw, two.url, two.filename) == (BIG[::-1], None, "two.bin")
            assert (await client.download(one)).raw == BIG
        assert await files.usage() == (2, 2 * len(BIG))


class ReplyWithFile(AgentExecutor):
    """Answers with a direct message (no task is stored) holding a large file."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.reply([Part(text="here"), Part(raw=BIG, filename="b.bin")])


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_direct_replys_file_is_served_though_no_task_is_stored(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    async with (
        task_store(kind, request, tmp_path) as store,
        running_server(ReplyWithFile(), store=store, file_store=small_inline()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        result = await client.send("x")
        assert result.message is not None
        link = result.message.parts[1]
        assert link.url is not None
        assert (await client.download(link)).raw == BIG


@pytest.mark.parametrize("kind", ["redis", "postgres"])
async def test_the_owner_rule_holds_on_every_instance(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url = shared_url(kind, request)
    tokens = {"alice-token": "alice", "bob-token": "bob"}
    alice = {"Authorization": "Bearer alice-token"}
    options = {"store_url": url, "bearer_tokens": tokens}
    async with (
        running_server(big_file, file_store=small_inline(), **options) as a,
        running_server(big_file, file_store=small_inline(), **options) as b,
        await A2AClient.connect(a.url, headers=alice) as client,
    ):
        result = await client.send("mine")
        assert result.task is not None
        link = result.task.artifacts[0].parts[1].url
        assert link is not None
        through_b = b.url + link[len(a.url) :]
        async with httpx.AsyncClient() as http:
            assert (await http.get(through_b)).status_code == 404
            bob = await http.get(through_b, headers={"Authorization": "Bearer bob-token"})
            assert bob.status_code == 404
            ok = await http.get(through_b, headers=alice)
            assert ok.status_code == 200
            assert ok.content == BIG
