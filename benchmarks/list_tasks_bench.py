"""What one ListTasks page costs an in-memory store of 10,000 tasks, ours (both) and the SDK's.

    uv run python benchmarks/list_tasks_bench.py [--tasks 10000] [--runs 3]

Both stores are filled with the same finished tasks (100 contexts, one status time
each), then asked for pages: the first and the second of everything, a context's
(1% of the tasks), and a state nobody is in. Ours are ``CompactMemoryTaskStore`` (what
``memory://`` opens: an order kept between listings) and the reference ``MemoryTaskStore``
(sorts on every call). The call runs on the event loop, so
its time is time every other request of the server waits. ``a2a-sdk`` (the official
SDK, installed with the dev tools) is measured when importable.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a_core.stores import CompactMemoryTaskStore, MemoryTaskStore, TaskQuery
from a2a_core.types import Task, TaskState, TaskStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PAGE = 50
Lister = Callable[[str], Awaitable[None]]
CASES = ("first page", "second page", "one context's first page", "a state nobody is in")


def _when(n: int) -> datetime:
    return T0 + timedelta(milliseconds=n)


async def ours(count: int, kind: type[CompactMemoryTaskStore | MemoryTaskStore]) -> Lister:
    store = kind(max_tasks=count)
    for n in range(count):
        status = TaskStatus(state=TaskState.COMPLETED, timestamp=_when(n))
        await store.create(Task(id=f"task-{n}", context_id=f"ctx-{n % 100}", status=status), None)
    second = (await store.list(TaskQuery(page_size=PAGE), None)).next_page_token
    queries = {
        CASES[0]: TaskQuery(page_size=PAGE),
        CASES[1]: TaskQuery(page_size=PAGE, page_token=second),
        CASES[2]: TaskQuery(page_size=PAGE, context_id="ctx-7"),
        CASES[3]: TaskQuery(page_size=PAGE, state=TaskState.INPUT_REQUIRED),
    }

    async def list_one(case: str) -> None:
        await store.list(queries[case], None)

    return list_one


async def sdk(count: int) -> Lister | None:
    try:
        from a2a.server.context import ServerCallContext
        from a2a.server.tasks import InMemoryTaskStore
        from a2a.types import a2a_pb2
    except ImportError:
        return None
    store: Any = InMemoryTaskStore()
    context = ServerCallContext()
    for n in range(count):
        task = a2a_pb2.Task(id=f"task-{n}", context_id=f"ctx-{n % 100}")
        task.status.state = a2a_pb2.TaskState.TASK_STATE_COMPLETED
        task.status.timestamp.FromDatetime(_when(n))
        await store.save(task, context)
    first = await store.list(a2a_pb2.ListTasksRequest(page_size=PAGE), context)
    queries = {
        CASES[0]: a2a_pb2.ListTasksRequest(page_size=PAGE),
        CASES[1]: a2a_pb2.ListTasksRequest(page_size=PAGE, page_token=first.next_page_token),
        CASES[2]: a2a_pb2.ListTasksRequest(page_size=PAGE, context_id="ctx-7"),
        CASES[3]: a2a_pb2.ListTasksRequest(
            page_size=PAGE, status=a2a_pb2.TaskState.TASK_STATE_INPUT_REQUIRED
        ),
    }

    async def list_one(case: str) -> None:
        await store.list(queries[case], context)

    return list_one


async def milliseconds(list_one: Lister, case: str, calls: int) -> float:
    await list_one(case)  # the first call may build what later ones reuse
    started = time.perf_counter()
    for _ in range(calls):
        await list_one(case)
    return (time.perf_counter() - started) / calls * 1e3


async def measure(count: int, runs: int, calls: int) -> dict[str, dict[str, float]]:
    listers = {
        "compact": await ours(count, CompactMemoryTaskStore),
        "reference": await ours(count, MemoryTaskStore),
        "sdk": await sdk(count),
    }
    out: dict[str, dict[str, float]] = {}
    for name, list_one in listers.items():
        if list_one is None:
            continue
        out[name] = {
            case: statistics.median(
                [await milliseconds(list_one, case, calls) for _ in range(runs)]
            )
            for case in CASES
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="ListTasks page cost, ours and the SDK's.")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    res = asyncio.run(measure(args.tasks, args.runs, args.calls))
    sdk_res = res.get("sdk")
    print(
        f"| ListTasks, {args.tasks:,} tasks, pages of {PAGE} | compact ms | reference ms "
        "| SDK ms | SDK ÷ compact |"
    )
    print("|---|---|---|---|---|")
    for case in CASES:
        mine, reference = res["compact"][case], res["reference"][case]
        theirs = sdk_res[case] if sdk_res else None
        ratio = f"{theirs / mine:.1f}x" if theirs else "-"
        print(
            f"| {case} | {mine:.2f} | {reference:.2f} | "
            f"{f'{theirs:.2f}' if theirs else '-'} | {ratio} |"
        )


if __name__ == "__main__":
    main()
