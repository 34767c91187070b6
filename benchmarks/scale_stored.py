"""Scale, stored tasks (issue #40): what a page, a read and retention cost as the store grows.

    uv run --no-sync python benchmarks/scale_stored.py [--quick] [--out FILE.jsonl]
        [--label before|after] [--sizes 10000,100000] [--backends sqlite,postgresql,redis]
        [--no-http]

Each backend is filled with N finished tasks (1,000 contexts, or N/100 below
10^5 so a context's page is full; one task in ten failed, one status time
each), written in bulk through the store's own row encoding (sqlite,
PostgreSQL) or its own create script (Redis), then asked, through the
``TaskStore`` API:

- ListTasks pages of 50: the first, a random context's, a state's
  (failed: a tenth of the tasks), and a deep one (its token points at 90 % of the
  list: the token the walk would have handed back there, made with ``encode_cursor``);
- GetTask of a random task;
- retention: ``max_tasks`` (the stores' only bound on stored tasks; they keep no
  age) is lowered to 90 % of N and one task created, so the store evicts the
  oldest tenth. Measured: how long that takes, and the longest a GetTask or
  ListTasks running meanwhile on the same store object waits (target 100 ms);
- then the cost of a create at the bound (each evicts one task).

At the largest size, the sqlite file is also served by a real server (a
subprocess on 127.0.0.1) and its first page read over HTTP+JSON, to show the
store's figure is what a client sees. The sqlite file is a temp file, the
PostgreSQL schema and the Redis key prefix random; all are removed after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h
from a2a_core.contracts.task_store import encode_cursor
from a2a_core.stores import TaskQuery, TaskStore
from a2a_core.stores.postgres import PostgresTaskStore
from a2a_core.stores.postgres import _row as postgres_row  # pyright: ignore[reportPrivateUsage]
from a2a_core.stores.redis import _CREATE, RedisTaskStore  # pyright: ignore[reportPrivateUsage]
from a2a_core.stores.redis import _fields as redis_fields  # pyright: ignore[reportPrivateUsage]
from a2a_core.stores.redis import _owner_tag as redis_owner  # pyright: ignore[reportPrivateUsage]
from a2a_core.stores.sqlite import SqliteTaskStore
from a2a_core.stores.sqlite import _row as sqlite_row  # pyright: ignore[reportPrivateUsage]
from a2a_core.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

PART = "stored"
SIZES = (10_000, 100_000, 1_000_000)
BACKENDS = ("sqlite", "postgresql", "redis")
CONTEXTS = 1_000
"""Contexts at 10^5 tasks and above; fewer below, so that a context's page is always full."""
PAGE = 50
T0 = datetime(2026, 1, 1, tzinfo=UTC)
PG_URL = os.environ.get("SCALE_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("SCALE_REDIS_URL", "redis://127.0.0.1:6379/0")
BATCH = 5_000
RESULTS = Path(__file__).resolve().parent / "results"


# -- the tasks ------------------------------------------------------------------------------
def contexts_for(n: int) -> int:
    """1,000 contexts, or fewer so that each holds at least 100 tasks (two full pages)."""
    return max(1, min(CONTEXTS, n // 100))


def make_task(i: int, contexts: int = CONTEXTS) -> Task:
    """Task ``i``: status time T0 + i ms (so task N-1 is the newest), a user message and
    an artifact (about 500 bytes of JSON)."""
    state = TaskState.FAILED if i % 10 == 0 else TaskState.COMPLETED
    tid, ctx = f"task-{i:07d}", f"ctx-{i % contexts:04d}"
    text = f"request {i}: summarise the quarterly figures for region {i % 97}"
    return Task(
        id=tid,
        context_id=ctx,
        status=TaskStatus(state=state, timestamp=T0 + timedelta(milliseconds=i)),
        history=[
            Message(
                message_id=f"m-{i}",
                context_id=ctx,
                task_id=tid,
                role=Role.USER,
                parts=[Part(text=text)],
            )
        ],
        artifacts=[Artifact(artifact_id=f"a-{i}", name="answer", parts=[Part(text=text * 2)])],
    )


def batches(n: int, size: int = BATCH) -> Iterator[list[Task]]:
    for start in range(0, n, size):
        yield [make_task(i, contexts_for(n)) for i in range(start, min(n, start + size))]


# -- the backends: open, fill, drop ------------------------------------------------------------
@dataclass
class Backend:
    name: str
    store: TaskStore
    url: str
    drop: Callable[[], Awaitable[None]]


_SQLITE_INSERT = (
    "INSERT INTO a2a_tasks (id, owner, context_id, state, status_ts, sort_ts, terminal, body,"
    " seq, version) VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, 1)"
)


async def open_sqlite(n: int) -> Backend:
    fd, path = tempfile.mkstemp(prefix="scale-stored-", suffix=".db")
    os.close(fd)
    os.unlink(path)
    store = SqliteTaskStore(path)
    await store.get("none", None)  # creates the tables
    seq = 0
    for tasks in batches(n):
        rows = []
        for task in tasks:
            seq += 1
            rows.append((task.id, *sqlite_row(task), seq))

        def insert(conn: sqlite3.Connection, rows: list[Any] = rows) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(_SQLITE_INSERT, rows)
            conn.execute("COMMIT")

        await store.worker.run(insert)

    async def drop() -> None:
        await store.aclose()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path + suffix)

    return Backend("sqlite", store, f"sqlite:///{path}", drop)


async def open_postgres(n: int) -> Backend:
    schema = f"scale_{secrets.token_hex(4)}"
    store = PostgresTaskStore(PG_URL, schema=schema)
    await store.get("none", None)  # creates the schema and tables
    table = f'"{schema}".a2a_tasks'
    columns = "id, owner, context_id, state, status_ts, sort_ts, terminal, body, seq, version"
    seq = 0
    for tasks in batches(n):
        async with (
            await store.database.connection() as conn,
            conn.cursor() as cur,
            cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
        ):
            for task in tasks:
                seq += 1
                await copy.write_row((task.id, "-", *postgres_row(task), seq, 1))
    async with await store.database.connection() as conn:
        await conn.execute(f"SELECT setval('\"{schema}\".a2a_tasks_seq', %s)", (max(seq, 1),))
        await conn.execute(f"VACUUM ANALYZE {table}")

    async def drop() -> None:
        await store.aclose()
        conn = await store.database.connect()
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    return Backend("postgresql", store, f"{PG_URL}?schema={schema}", drop)


async def open_redis(n: int) -> Backend:
    prefix = f"scale-{secrets.token_hex(4)}"
    store = RedisTaskStore(REDIS_URL, prefix=prefix)
    client = store.connection.client()
    create = client.register_script(_CREATE)
    p = prefix
    for tasks in batches(n, 2_000):
        pipe = client.pipeline(transaction=False)
        for task in tasks:
            keys = [
                f"{p}:task:{task.id}",
                f"{p}:owner:-",
                f"{p}:ctx:-:{task.context_id}",
                f"{p}:state:-:{task.status.state.value}",
                f"{p}:terminal",
                f"{p}:seq",
                f"{p}:count",
            ]
            # max_tasks 0 (none); the eviction batch (ignored by scripts before it existed)
            args = [task.id, redis_owner(None), *redis_fields(task), 0, f"{p}:task:", 500]
            await create(keys=keys, args=args, client=pipe)
        await pipe.execute()

    async def drop() -> None:
        async for keys in _scan(client, f"{prefix}:*"):
            await client.unlink(*keys)
        await store.aclose()

    return Backend("redis", store, f"{REDIS_URL}?prefix={prefix}", drop)


async def _scan(client: Any, match: str) -> AsyncIterator[list[Any]]:
    cursor = 0
    while True:
        cursor, keys = await client.scan(cursor, match=match, count=5_000)
        if keys:
            yield keys
        if cursor == 0:
            return


OPENERS: dict[str, Callable[[int], Awaitable[Backend]]] = {
    "sqlite": open_sqlite,
    "postgresql": open_postgres,
    "redis": open_redis,
}


# -- measuring --------------------------------------------------------------------------------
async def timed(calls: int, one: Callable[[int], Awaitable[object]]) -> list[float]:
    await one(-1)  # warm: the first call may open a pool or load a script
    out: list[float] = []
    for k in range(calls):
        started = time.perf_counter()
        await one(k)
        out.append((time.perf_counter() - started) * 1e3)
    return out


def deep_token(n: int) -> str:
    """The token the walk hands back after the task at 90 % of the list (newest first)."""
    position = int(n * 0.9)
    return encode_cursor(make_task(n - 1 - position))


async def reads(store: TaskStore, n: int, calls: int) -> dict[str, list[float]]:
    rng = random.Random(n)
    contexts = [f"ctx-{rng.randrange(contexts_for(n)):04d}" for _ in range(calls + 1)]
    ids = [f"task-{rng.randrange(n):07d}" for _ in range(calls + 1)]
    token = deep_token(n)
    deep = await store.list(TaskQuery(page_size=PAGE, page_token=token), None)
    expected = f"task-{n - 2 - int(n * 0.9):07d}"
    if not deep.tasks or deep.tasks[0].id != expected:
        raise RuntimeError(f"deep page starts at {deep.tasks[:1]}, expected {expected}")
    first = await store.list(TaskQuery(page_size=PAGE), None)
    if first.total_size != n or len(first.tasks) != PAGE:
        raise RuntimeError(f"first page: total {first.total_size}, {len(first.tasks)} tasks")

    async def first_page(_: int) -> object:
        return await store.list(TaskQuery(page_size=PAGE), None)

    async def context_page(k: int) -> object:
        return await store.list(TaskQuery(page_size=PAGE, context_id=contexts[k]), None)

    async def state_page(_: int) -> object:
        return await store.list(TaskQuery(page_size=PAGE, state=TaskState.FAILED), None)

    async def deep_page(_: int) -> object:
        return await store.list(TaskQuery(page_size=PAGE, page_token=token), None)

    async def get(k: int) -> object:
        found = await store.get(ids[k], None)
        if found is None:
            raise RuntimeError(f"{ids[k]} missing")
        return found

    return {
        "ListTasks first page": await timed(calls, first_page),
        "ListTasks context page": await timed(calls, context_page),
        "ListTasks state page": await timed(calls, state_page),
        "ListTasks deep page (90%)": await timed(calls, deep_page),
        "GetTask": await timed(calls, get),
    }


async def retention(store: TaskStore, n: int, calls: int) -> dict[str, Any]:
    """Lower ``max_tasks`` to 90 % of N, create one task; traffic runs meanwhile."""
    rng = random.Random(-n)
    bound = n - n // 10
    store.max_tasks = bound  # type: ignore[attr-defined]  # every store here has it
    done = asyncio.Event()
    waits: list[float] = []

    async def traffic() -> None:
        k = 0
        while not done.is_set():
            started = time.perf_counter()
            if k % 2:
                await store.get(f"task-{rng.randrange(n):07d}", None)
            else:
                await store.list(TaskQuery(page_size=PAGE), None)
            waits.append((time.perf_counter() - started) * 1e3)
            k += 1

    reader = asyncio.create_task(traffic())
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    await store.create(make_task(n), None)
    evict_s = time.perf_counter() - started
    done.set()
    await reader
    total = (await store.list(TaskQuery(page_size=1), None)).total_size
    if total > bound:
        raise RuntimeError(f"{total} tasks left, bound {bound}")

    async def create_at_bound(k: int) -> object:
        return await store.create(make_task(n + 2 + k), None)

    creates = await timed(calls, create_at_bound)
    return {"evict_s": evict_s, "waits": waits, "creates": creates}


# -- the real server, over HTTP -------------------------------------------------------------------
def http_app() -> Any:
    """The server ``--http`` starts (``uvicorn --factory``): echo agent on ``SCALE_STORE_URL``."""
    from a2a_core.server import A2AService
    from a2a_core.server.asgi import create_app
    from a2a_core.store_registry import open_task_store
    from echo_app import EchoAgent, build_card

    port = os.environ.get("ECHO_PORT", "8001")
    store = open_task_store(os.environ["SCALE_STORE_URL"])
    service = A2AService(EchoAgent("task"), build_card(f"http://127.0.0.1:{port}"), store=store)
    return create_app(service)


def http_first_page(url: str, n: int, calls: int) -> list[float]:
    settings = h.Settings.detect(None, Path(tempfile.mkdtemp(prefix="scale-stored-logs-")))
    settings.base_env["SCALE_STORE_URL"] = url  # not in the log file's name
    impl = h.Impl("ours", "benchmarks.scale_stored:http_app", h.REPO)
    with h.Server(settings, impl, {}) as server:
        request = urllib.request.Request(
            server.url + f"tasks?pageSize={PAGE}", headers={"A2A-Version": "1.0"}
        )

        def one() -> dict[str, Any]:
            with urllib.request.urlopen(request, timeout=60) as resp:
                return json.loads(resp.read())

        body = one()
        if int(body.get("totalSize", -1)) != n or len(body.get("tasks", [])) != PAGE:
            raise RuntimeError(f"HTTP first page: {str(body)[:300]}")
        out: list[float] = []
        for _ in range(calls):
            started = time.perf_counter()
            one()
            out.append((time.perf_counter() - started) * 1e3)
        return out


# -- the run ------------------------------------------------------------------------------------
def point(case: str, backend: str | None, n: int, value: float, unit: str, **kw: Any) -> dict:
    return {
        "part": PART,
        "case": case,
        "impl": "ours",
        "backend": backend,
        "n": n,
        "value": round(value, 4),
        "unit": unit,
        "label": kw.get("label"),
        "target": kw.get("target"),
        "note": kw.get("note", ""),
    }


async def measure(
    backend: str, n: int, calls: int, label: str, http: bool, emit: Callable[[dict], None]
) -> None:
    started = time.perf_counter()
    b = await OPENERS[backend](n)
    fill_s = time.perf_counter() - started
    print(f"  {backend} n={n:,}: filled in {fill_s:.1f} s", file=sys.stderr, flush=True)
    note = f"fill {fill_s:.0f} s; {calls} calls; 2 shared cores"
    try:
        for case, values in (await reads(b.store, n, calls)).items():
            emit(
                point(
                    f"{case} p50",
                    backend,
                    n,
                    statistics.median(values),
                    "ms",
                    label=label,
                    note=note,
                )
            )
            emit(point(f"{case} p99", backend, n, h.p99(values), "ms", label=label, note=note))
        if http:
            values = http_first_page(b.url, n, calls)
            note_http = f"HTTP+JSON GET /tasks?pageSize=50 on a uvicorn subprocess; {note}"
            for stat, value in (("p50", statistics.median(values)), ("p99", h.p99(values))):
                emit(
                    point(
                        f"HTTP ListTasks first page {stat}",
                        backend,
                        n,
                        value,
                        "ms",
                        label=label,
                        note=note_http,
                    )
                )
        kept = await retention(b.store, n, calls)
        emit(
            point(
                "retention evict 10%",
                backend,
                n,
                kept["evict_s"],
                "s",
                label=label,
                note=f"max_tasks lowered to 90% of n, then one create; {note}",
            )
        )
        waits = kept["waits"]
        emit(
            point(
                "retention max traffic wait",
                backend,
                n,
                max(waits),
                "ms",
                label=label,
                target=100,
                note=f"{len(waits)} GetTask/ListTasks calls during it; {note}",
            )
        )
        emit(
            point(
                "create at max_tasks p50",
                backend,
                n,
                statistics.median(kept["creates"]),
                "ms",
                label=label,
                note=f"each create evicts one; {note}",
            )
        )
    finally:
        await b.drop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stored-task scale: pages, reads, retention.")
    parser.add_argument("--quick", action="store_true", help="10^4 tasks only")
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    parser.add_argument("--label", default="after", choices=("before", "after"))
    parser.add_argument("--sizes", default=None, help="comma-separated task counts")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP case")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(SIZES)
    if args.quick:
        sizes = [SIZES[0]]
    backends = [b for b in args.backends.split(",") if b]
    points: list[dict] = []

    def emit(p: dict) -> None:
        points.append(p)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with args.out.open("a") as f:
                f.write(json.dumps(p) + "\n")

    for n in sizes:
        for backend in backends:
            http = not args.no_http and backend == "sqlite" and n == max(sizes)
            asyncio.run(measure(backend, n, args.calls, args.label, http, emit))
    print("| case | backend | n | value | unit | label |\n|---|---|---|---|---|---|")
    for p in points:
        print(
            f"| {p['case']} | {p['backend']} | {p['n']:,} | {p['value']:.3f} | {p['unit']} |"
            f" {p['label']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
