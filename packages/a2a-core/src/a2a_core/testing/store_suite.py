"""The task-store conformance suite: the ``TaskStore`` contract, for every backend.

A store package subclasses ``TaskStoreConformance`` and supplies fresh,
empty stores::

    class TestSqliteStore(TaskStoreConformance):
        async def make_store(self) -> TaskStore:
            return SqliteTaskStore(self.tmp_path / "tasks.db")

Every test opens its own store and closes it (``aclose``) at the end.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import ClassVar, TypeVar

import pytest

from ..errors import InvalidParamsError
from ..stores import ConcurrentUpdateError, StoredTask, TaskQuery, TaskStore
from ..types import Task, TaskState, TaskStatus
from ._suite import ConformanceSuite
from .fakes import make_task

__all__ = ["TaskStoreConformance"]

ALICE = "alice"
BOB = "bob"
T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
_T = TypeVar("_T")


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class TaskStoreConformance(ConformanceSuite):
    """Subclass it (``class TestMyStore(TaskStoreConformance)``) and implement ``make_store``."""

    _a2a_suite_root: ClassVar[bool] = True
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]

    supports_eviction: ClassVar[bool] = False
    """Whether the store bounds itself by evicting terminal tasks (``make_bounded_store``)."""

    capability_gates: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "test_eviction_spares_active_and_paused_tasks": ("supports_eviction",),
    }
    capability_docs: ClassVar[Mapping[str, str]] = {
        "supports_eviction": "the store keeps every task until it is deleted",
    }

    # -- what the subclass implements ------------------------------------------------
    async def make_store(self) -> TaskStore:
        """A fresh, empty store (``self.tmp_path`` is a per-test directory for files)."""
        raise NotImplementedError(
            f"{type(self).__qualname__} must implement `async def make_store(self) -> TaskStore`"
        )

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        """A fresh store holding at most ``max_tasks`` tasks (needed with ``supports_eviction``)."""
        raise NotImplementedError(
            f"{type(self).__qualname__}.supports_eviction is True: implement "
            "`async def make_bounded_store(self, max_tasks: int) -> TaskStore`"
        )

    @property
    def tmp_path(self) -> Path:
        """pytest's ``tmp_path`` for the running test."""
        return self.request.getfixturevalue("tmp_path")

    # -- harness ---------------------------------------------------------------------
    @asynccontextmanager
    async def open_store(self, max_tasks: int | None = None) -> AsyncGenerator[TaskStore]:
        """A new store for one test, closed afterwards; the test is bounded by ``timeout``."""
        async with self._deadline(self.request.function.__name__):
            if max_tasks is None:
                store = await self.make_store()
            else:
                store = await self.make_bounded_store(max_tasks)
            assert isinstance(store, TaskStore), (
                f"make_store() returned a {type(store).__name__}, not a TaskStore"
            )
            try:
                yield store
            finally:
                await store.aclose()

    # -- the tests -------------------------------------------------------------------
    async def test_create_and_get_round_trip(self) -> None:
        """``create`` stores version 1 for its owner; ``get`` returns an equal task.

        History, artifacts, metadata and the status timestamp survive unchanged;
        an unknown id is None.

        Troubleshooting:
        - fields lost or changed: serialise with ``task.model_dump(mode="json",
          by_alias=True)`` and read back with ``Task.model_validate``;
        - timestamp differs: keep the timezone (store UTC with its offset) and
          microseconds;
        - version not 1: the first stored version is 1, not 0.
        """
        async with self.open_store() as store:
            task = make_task(
                "round-trip",
                text="the result",
                metadata={"nested": {"list": [1, 2.5, "three", None, True]}},
                timestamp=datetime(
                    2025, 6, 7, 8, 9, 10, 123456, tzinfo=timezone(timedelta(hours=2))
                ),
            )
            created = await store.create(task, ALICE)
            assert (created.version, created.owner) == (1, ALICE), created
            assert created.task == task
            got = await store.get(task.id, ALICE)
            assert got is not None, "get() did not find the task just created"
            assert got.task == task, _diff(task, got.task)
            assert (got.version, got.owner) == (1, ALICE), got
            assert await store.get("no-such-task", ALICE) is None

    async def test_create_refuses_an_existing_id(self) -> None:
        """Creating a task whose id exists raises ``ConcurrentUpdateError`` and changes nothing.

        Troubleshooting:
        - no error: ``create`` must not overwrite (use INSERT, not UPSERT; SETNX...);
        - the stored task changed: check for the id before writing, atomically.
        """
        async with self.open_store() as store:
            task = make_task("taken", text="first")
            await store.create(task, ALICE)
            for owner in (ALICE, BOB):
                with pytest.raises(ConcurrentUpdateError):
                    await store.create(make_task("taken", text="second"), owner)
            got = await store.get("taken", ALICE)
            assert got is not None, "the existing task is gone"
            assert got.task == task, _diff(task, got.task)
            assert got.version == 1

    async def test_save_bumps_the_version(self) -> None:
        """``save`` at the current version replaces the task and returns version + 1.

        Troubleshooting:
        - version unchanged: increment it in the same write as the task;
        - old content returned by ``get``: the write went to another row/key.
        """
        async with self.open_store() as store:
            task = make_task("versions", state=TaskState.SUBMITTED)
            await store.create(task, ALICE)
            working = _with_state(task, TaskState.WORKING, _at(1))
            saved = await store.save(working, ALICE, 1)
            assert (saved.version, saved.owner) == (2, ALICE), saved
            done = _with_state(working, TaskState.COMPLETED, _at(2))
            saved = await store.save(done, ALICE, 2)
            assert saved.version == 3
            got = await store.get("versions", ALICE)
            assert got is not None
            assert got.version == 3
            assert got.task == done, _diff(done, got.task)

    async def test_stale_version_is_refused(self) -> None:
        """``save`` with a stale ``expected_version``, or of a missing task, is refused.

        Troubleshooting:
        - no error: compare the version in the same atomic write
          (``UPDATE ... WHERE id = ? AND version = ?``, a transaction, WATCH/MULTI);
        - a missing task got created: ``save`` never creates.
        """
        async with self.open_store() as store:
            task = make_task("stale")
            await store.create(task, ALICE)
            fresh = _with_state(task, TaskState.INPUT_REQUIRED, _at(1))
            await store.save(fresh, ALICE, 1)
            with pytest.raises(ConcurrentUpdateError):
                await store.save(_with_state(task, TaskState.FAILED, _at(2)), ALICE, 1)
            with pytest.raises(ConcurrentUpdateError):
                await store.save(_with_state(task, TaskState.FAILED, _at(2)), ALICE, 5)
            got = await store.get("stale", ALICE)
            assert got is not None
            assert got.version == 2
            assert got.task == fresh, _diff(fresh, got.task)
            with pytest.raises(ConcurrentUpdateError):
                await store.save(make_task("never-created"), ALICE, 1)
            assert await store.get("never-created", ALICE) is None

    async def test_concurrent_saves_exactly_one_wins(self) -> None:
        """Savers racing from the same version: exactly one succeeds, the others are refused.

        Troubleshooting:
        - several winners: read-compare-write is not atomic; do the version check
          inside the write (conditional update, transaction, Lua script...);
        - other exceptions: map the backend's conflict error to ``ConcurrentUpdateError``.
        """
        async with self.open_store() as store:
            task = make_task("race")
            stored = await store.create(task, ALICE)
            racers = 8

            async def save(i: int) -> StoredTask:
                update = task.model_copy(update={"metadata": {"writer": i}})
                return await store.save(update, ALICE, stored.version)

            results = await asyncio.gather(
                *(save(i) for i in range(racers)), return_exceptions=True
            )
            winners = [r for r in results if isinstance(r, StoredTask)]
            refused = [r for r in results if isinstance(r, ConcurrentUpdateError)]
            others = [r for r in results if not isinstance(r, StoredTask | ConcurrentUpdateError)]
            assert not others, f"unexpected outcomes: {others!r}"
            assert len(winners) == 1, f"{len(winners)} of {racers} racing saves succeeded"
            assert len(refused) == racers - 1
            got = await store.get("race", ALICE)
            assert got is not None
            assert got.version == 2
            assert got.task.metadata == winners[0].task.metadata

    async def test_delete(self) -> None:
        """``delete`` removes the task (True), then reports it missing (False).

        Troubleshooting:
        - still listed after delete: remove the list index entry as well as the task;
        - True for a missing task: report whether something was actually deleted.
        """
        async with self.open_store() as store:
            await store.create(make_task("doomed"), ALICE)
            await store.create(make_task("kept"), ALICE)
            assert await store.delete("doomed", ALICE) is True
            assert await store.get("doomed", ALICE) is None
            assert await store.delete("doomed", ALICE) is False
            page = await store.list(TaskQuery(), ALICE)
            assert [t.id for t in page.tasks] == ["kept"]
            assert page.total_size == 1

    async def test_owner_scoping(self) -> None:
        """Another owner (or the anonymous scope) cannot see, list, save or delete a task.

        Troubleshooting:
        - visible to others: filter every read by owner, including ``list`` and its
          ``total_size``;
        - anonymous sees owned tasks: None is a scope of its own, not "any owner";
        - foreign save accepted: check the owner in the same write as the version.
        """
        async with self.open_store() as store:
            task = make_task("private", text="alice's")
            await store.create(task, ALICE)
            await store.create(make_task("anonymous"), None)
            assert await store.get("private", BOB) is None
            assert await store.get("private", None) is None
            assert await store.get("anonymous", ALICE) is None
            for owner, expected in ((BOB, []), (None, ["anonymous"]), (ALICE, ["private"])):
                page = await store.list(TaskQuery(), owner)
                assert [t.id for t in page.tasks] == expected, f"owner {owner!r} sees {page.tasks}"
                assert page.total_size == len(expected), f"owner {owner!r}: total_size"
            assert await store.delete("private", BOB) is False
            with pytest.raises(ConcurrentUpdateError):
                await store.save(_with_state(task, TaskState.CANCELED, _at(1)), BOB, 1)
            with pytest.raises(ConcurrentUpdateError):
                await store.save(_with_state(task, TaskState.CANCELED, _at(1)), None, 1)
            got = await store.get("private", ALICE)
            assert got is not None
            assert got.task == task, _diff(task, got.task)
            assert got.version == 1

    async def test_list_newest_status_first(self) -> None:
        """``list`` orders by status time, newest first (by instant, whatever the offset);
        equal times by id; tasks without a timestamp last; the same order every time.

        Troubleshooting:
        - wrong order across offsets: compare instants (store UTC), not text;
        - ties in random order: add the id as a second sort key (ascending);
        - timestamp-less tasks first: NULLs sort first in many databases
          (``NULLS LAST`` / coalesce to the epoch).
        """
        async with self.open_store() as store:
            plus_five = timezone(timedelta(hours=5))
            specs = [
                ("old", _at(0)),
                ("newest", (T0 + timedelta(hours=1)).astimezone(plus_five)),
                ("tie-b", _at(60)),
                ("tie-a", _at(60).astimezone(plus_five)),
                ("tie-c", _at(60)),
                ("middle", _at(30).astimezone(timezone(timedelta(hours=-8)))),
                ("undated", None),
            ]
            for task_id, when in _shuffled(specs):
                await store.create(make_task(task_id, timestamp=when), ALICE)
            expected = ["newest", "tie-a", "tie-b", "tie-c", "middle", "old", "undated"]
            for _ in range(2):
                page = await store.list(TaskQuery(), ALICE)
                assert [t.id for t in page.tasks] == expected
                assert page.total_size == len(expected)
                assert page.next_page_token == ""

    async def test_pagination_walks_every_task_once(self) -> None:
        """Walking the pages yields every task once, in order, with the right total_size.

        Troubleshooting:
        - duplicates or gaps at page edges: the token must point after the last task
          of the page in the full sort order (time, then id), not be an offset
          into a list that changes;
        - a token on the last page: return "" when nothing follows;
        - total_size per page: it counts every matching task, not the page.
        """
        async with self.open_store() as store:
            ids = [f"page-task-{i:02d}" for i in range(23)]
            for i, task_id in _shuffled(list(enumerate(ids))):
                await store.create(make_task(task_id, timestamp=_at(i // 3)), ALICE)
            for i in range(4):  # someone else's tasks interleave in time
                await store.create(make_task(f"bob-{i}", timestamp=_at(i * 2)), BOB)
            everything = await store.list(TaskQuery(page_size=100), ALICE)
            in_order = sorted(ids, key=lambda task_id: (-(int(task_id[-2:]) // 3), task_id))
            assert [t.id for t in everything.tasks] == in_order
            assert everything.next_page_token == ""
            walked: list[str] = []
            token: str | None = None
            for _ in range(10):
                page = await store.list(TaskQuery(page_size=5, page_token=token), ALICE)
                assert len(page.tasks) <= 5, f"page of {len(page.tasks)} tasks, asked for 5"
                assert page.total_size == 23, f"total_size {page.total_size} on a page"
                walked.extend(t.id for t in page.tasks)
                token = page.next_page_token
                if not token:
                    break
            assert len(walked) == len(set(walked)), f"duplicates across pages: {walked}"
            assert walked == [t.id for t in everything.tasks], "pages differ from the full list"
            assert sorted(walked) == sorted(ids), "tasks missing from the pages"
            last = await store.list(TaskQuery(page_size=23), ALICE)
            assert len(last.tasks) == 23
            assert last.next_page_token == ""

    async def test_invalid_page_token(self) -> None:
        """A malformed page token raises ``InvalidParamsError`` (never a crash or an empty page).

        Troubleshooting:
        - ``ValueError``/``binascii.Error`` escaping: catch decoding errors and raise
          ``InvalidParamsError("Invalid page token")`` (``contracts.task_store.decode_cursor``
          does this for the core's token format).
        """
        async with self.open_store() as store:
            await store.create(make_task("one"), ALICE)
            for token in ("not a token", "%%%%", "YWJj", "\x00\xff"):
                with pytest.raises(InvalidParamsError):
                    await store.list(TaskQuery(page_token=token), ALICE)

    async def test_list_filters(self) -> None:
        """Filters by context, state and status time combine, and total_size counts matches.

        Troubleshooting:
        - status_after returns older tasks: compare instants; tasks without a
          timestamp never match it;
        - state filter: compare the enum value (``TASK_STATE_COMPLETED``), not its index;
        - total_size counts the unfiltered tasks: count with the same filters.
        """
        async with self.open_store() as store:
            specs = [
                ("c1-working", "c1", TaskState.WORKING, _at(1)),
                ("c1-done", "c1", TaskState.COMPLETED, _at(2)),
                ("c1-asking", "c1", TaskState.INPUT_REQUIRED, _at(3)),
                ("c2-done", "c2", TaskState.COMPLETED, _at(4)),
                ("c2-failed", "c2", TaskState.FAILED, _at(5)),
                ("c2-undated", "c2", TaskState.WORKING, None),
            ]
            for task_id, context, state, when in specs:
                task = make_task(task_id, context_id=context, state=state, timestamp=when)
                await store.create(task, ALICE)
            await store.create(make_task("bob-c1", context_id="c1"), BOB)
            cases: list[tuple[TaskQuery, list[str]]] = [
                (TaskQuery(context_id="c1"), ["c1-asking", "c1-done", "c1-working"]),
                (TaskQuery(state=TaskState.COMPLETED), ["c2-done", "c1-done"]),
                (TaskQuery(status_after=_at(2.5)), ["c2-failed", "c2-done", "c1-asking"]),
                (TaskQuery(context_id="c2", state=TaskState.COMPLETED), ["c2-done"]),
                (TaskQuery(context_id="c1", status_after=_at(1.5)), ["c1-asking", "c1-done"]),
                (
                    TaskQuery(status_after=_at(2.5).astimezone(timezone(timedelta(hours=-3)))),
                    ["c2-failed", "c2-done", "c1-asking"],
                ),
                (TaskQuery(context_id="nowhere"), []),
            ]
            for query, expected in cases:
                page = await store.list(query, ALICE)
                assert [t.id for t in page.tasks] == expected, f"{query}"
                assert page.total_size == len(expected), f"total_size for {query}"
            first = await store.list(TaskQuery(state=TaskState.COMPLETED, page_size=1), ALICE)
            assert [t.id for t in first.tasks] == ["c2-done"]
            assert first.total_size == 2
            rest = await store.list(
                TaskQuery(state=TaskState.COMPLETED, page_size=1, page_token=first.next_page_token),
                ALICE,
            )
            assert [t.id for t in rest.tasks] == ["c1-done"]
            assert rest.next_page_token == ""

    async def test_eviction_spares_active_and_paused_tasks(self) -> None:
        """Over ``max_tasks``, terminal tasks are evicted; active and paused ones never are.

        Troubleshooting:
        - an active or input-required task vanished: evict only tasks whose state
          is terminal (COMPLETED, FAILED, CANCELED, REJECTED);
        - nothing evicted: evict when ``create`` takes the store past the bound;
        - still over the bound with terminal tasks left: evict as many as needed.
        """
        async with self.open_store(max_tasks=4) as store:
            live = {
                "working": TaskState.WORKING,
                "submitted": TaskState.SUBMITTED,
                "asking": TaskState.INPUT_REQUIRED,
                "auth": TaskState.AUTH_REQUIRED,
            }
            for i, (task_id, state) in enumerate(live.items()):
                await store.create(make_task(task_id, state=state, timestamp=_at(i)), ALICE)
            extra = make_task("extra", state=TaskState.SUBMITTED, timestamp=_at(10))
            await store.create(extra, ALICE)
            await _assert_present(store, [*live, "extra"])  # nothing terminal to evict
            await store.save(_with_state(extra, TaskState.COMPLETED, _at(11)), ALICE, 1)
            await store.create(make_task("later", state=TaskState.SUBMITTED), ALICE)
            await _assert_present(store, [*live, "later"])
            assert await store.get("extra", ALICE) is None, "the terminal task was not evicted"
            for task_id, when in (("working", 20), ("submitted", 21)):
                got = await store.get(task_id, ALICE)
                assert got is not None
                done = _with_state(got.task, TaskState.FAILED, _at(when))
                await store.save(done, ALICE, got.version)
            await store.create(make_task("newest", state=TaskState.WORKING), ALICE)
            await _assert_present(store, ["asking", "auth", "later", "newest"])
            page = await store.list(TaskQuery(), ALICE)
            assert page.total_size == 4, f"{page.total_size} tasks kept, the bound is 4"

    async def test_aclose_is_idempotent(self) -> None:
        """``aclose`` may be called more than once (shutdown paths overlap).

        Troubleshooting:
        - the second call raises: remember the store is closed and return early.
        """
        async with self.open_store() as store:
            await store.create(make_task("closing"), ALICE)
            await store.aclose()
            await store.aclose()
        fresh = await self.make_store()
        await fresh.aclose()
        await fresh.aclose()


# -- helpers ----------------------------------------------------------------------------


def _with_state(task: Task, state: TaskState, when: datetime) -> Task:
    return task.model_copy(update={"status": TaskStatus(state=state, timestamp=when)})


def _shuffled(items: Iterable[_T]) -> list[_T]:
    out = list(items)
    random.Random(20250102).shuffle(out)
    return out


def _diff(expected: Task, got: Task) -> str:
    want = expected.model_dump(mode="json", by_alias=True)
    have = got.model_dump(mode="json", by_alias=True)
    keys = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
    return "stored task differs in " + ", ".join(
        f"{k}: expected {want.get(k)!r}, got {have.get(k)!r}" for k in keys
    )


async def _assert_present(store: TaskStore, ids: Iterable[str]) -> None:
    missing = [task_id for task_id in ids if await store.get(task_id, ALICE) is None]
    assert not missing, f"evicted although not terminal: {missing}"
