"""What one write costs a full in-memory store, by how many of its tasks are in progress.

    uv run python benchmarks/store_eviction_bench.py [--writes 2000]

The store is filled to its ``max_tasks`` (10,000) with tasks waiting for input and
finished ones; then each new finished task makes it evict the oldest finished one.
Tasks in progress are never evicted: a store that walked past them on every write
would pay for each of them on every write.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from a2a_core.stores import CompactMemoryTaskStore
from a2a_core.types import Task, TaskState, TaskStatus

MAX_TASKS = 10_000


def _task(n: int, state: TaskState) -> Task:
    return Task(id=f"task-{n}", context_id="ctx", status=TaskStatus(state=state))


async def write_cost(waiting: int, writes: int) -> float:
    """Microseconds per ``create`` of a finished task once the store is full."""
    store = CompactMemoryTaskStore(max_tasks=MAX_TASKS)
    for n in range(MAX_TASKS):
        state = TaskState.INPUT_REQUIRED if n < waiting else TaskState.COMPLETED
        await store.create(_task(n, state), None)
    fresh = [_task(MAX_TASKS + n, TaskState.COMPLETED) for n in range(writes)]
    started = time.perf_counter()
    for task in fresh:
        await store.create(task, None)
    return (time.perf_counter() - started) / writes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description="Cost of a write to a full in-memory store.")
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"| tasks waiting for input (of {MAX_TASKS:,}) | µs per write (median of {args.runs}) |")
    print("|---|---|")
    for waiting in (0, 1_000, 9_000):
        costs = [asyncio.run(write_cost(waiting, args.writes)) for _ in range(args.runs)]
        print(f"| {waiting:,} | {statistics.median(costs):.1f} |")


if __name__ == "__main__":
    main()
