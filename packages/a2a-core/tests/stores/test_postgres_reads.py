"""``SharedReads``: followers of one task woken together share one query (no database)."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core.stores.postgres_reads import Rows, SharedReads


class Table:
    """A task's rows, read by a query that waits for ``release`` and counts its calls."""

    def __init__(self, rows: Rows, batch: int = 500) -> None:
        self.rows = rows
        self.batch = batch
        self.calls: list[tuple[int, int]] = []
        self.release = asyncio.Event()

    async def query(self, task_id: str, after: tuple[int, int]) -> Rows:
        self.calls.append(after)
        await self.release.wait()
        return [r for r in self.rows if (r[0], r[1]) > after][: self.batch]


def _rows(*ids: int) -> Rows:
    return [(i, 0, "a", f"body {i}", i - 1) for i in ids]


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def _in_turn(reads: SharedReads, *afters: tuple[int, int]) -> list[asyncio.Future[Rows]]:
    """Ask for task ``t``'s rows above each position in turn, each once the last waits."""
    asked: list[asyncio.Future[Rows]] = []
    for after in afters:
        asked.append(asyncio.ensure_future(reads.read("t", "t", after)))
        await _settle()
    return asked


async def test_followers_at_one_position_share_one_query() -> None:
    table = Table(_rows(2, 3))
    reads = SharedReads(table.query, table.batch)
    readers = [asyncio.ensure_future(reads.read("t", "t", (1, 0))) for _ in range(20)]
    await _settle()
    table.release.set()
    results = await asyncio.gather(*readers)
    assert table.calls == [(1, 0)]
    assert all([r[0] for r in rows] == [2, 3] for rows in results)


async def test_a_follower_further_on_takes_only_what_is_above_it() -> None:
    table = Table(_rows(2, 3, 4))
    reads = SharedReads(table.query, table.batch)
    behind, ahead = await _in_turn(reads, (1, 0), (3, 0))
    table.release.set()
    assert [r[0] for r in await behind] == [2, 3, 4]
    assert [r[0] for r in await ahead] == [4]
    assert table.calls == [(1, 0)]


async def test_a_follower_behind_the_read_in_flight_reads_itself() -> None:
    table = Table(_rows(2, 3, 4))
    reads = SharedReads(table.query, table.batch)
    ahead, behind = await _in_turn(reads, (3, 0), (1, 0))
    table.release.set()
    assert [r[0] for r in await ahead] == [4]
    assert [r[0] for r in await behind] == [2, 3, 4]
    assert table.calls == [(3, 0), (1, 0)]


async def test_a_notification_retires_the_read_in_flight() -> None:
    """A read started before a notification may miss its event: later askers read anew."""
    table = Table(_rows(2))
    reads = SharedReads(table.query, table.batch)
    first = asyncio.ensure_future(reads.read("t", "t", (1, 0)))
    await _settle()
    table.rows += _rows(3)  # committed, then notified, while the first read runs
    reads.notified("t")
    second = asyncio.ensure_future(reads.read("t", "t", (1, 0)))
    await _settle()
    reads.notified_all()
    third = asyncio.ensure_future(reads.read("t", "t", (1, 0)))
    await _settle()
    table.release.set()
    await asyncio.gather(first, second, third)
    assert table.calls == [(1, 0), (1, 0), (1, 0)]
    assert [r[0] for r in second.result()] == [2, 3]


async def test_other_tasks_are_not_shared() -> None:
    table = Table(_rows(2))
    reads = SharedReads(table.query, table.batch)
    readers = [asyncio.ensure_future(reads.read(key, key, (1, 0))) for key in ("a", "b")]
    await _settle()
    table.release.set()
    await asyncio.gather(*readers)
    assert len(table.calls) == 2


async def test_a_full_batch_below_a_follower_is_not_an_answer() -> None:
    table = Table(_rows(2, 3, 4, 5), batch=2)
    reads = SharedReads(table.query, table.batch)
    behind, ahead = await _in_turn(reads, (1, 0), (3, 0))
    table.release.set()
    assert [r[0] for r in await behind] == [2, 3]
    assert [r[0] for r in await ahead] == [4, 5]  # read itself: the batch stopped at 3
    assert table.calls == [(1, 0), (3, 0)]


async def test_the_follower_that_started_a_read_may_leave_without_cancelling_it() -> None:
    table = Table(_rows(2))
    reads = SharedReads(table.query, table.batch)
    starter, joiner = await _in_turn(reads, (1, 0), (1, 0))
    starter.cancel()
    await _settle()
    table.release.set()
    assert [r[0] for r in await joiner] == [2]
    assert table.calls == [(1, 0)]


async def test_a_failed_read_fails_every_follower_that_shared_it() -> None:
    async def broken(task_id: str, after: tuple[int, int]) -> Rows:
        await asyncio.sleep(0)
        raise OSError("connection lost")

    reads = SharedReads(broken, 500)
    readers = [asyncio.ensure_future(reads.read("t", "t", (1, 0))) for _ in range(3)]
    for reader in readers:
        with pytest.raises(OSError, match="connection lost"):
            await reader
    # Nothing is left in flight: the next read asks again.
    with pytest.raises(OSError, match="connection lost"):
        await reads.read("t", "t", (1, 0))
