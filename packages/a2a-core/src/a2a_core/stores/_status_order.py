"""ListTasks' order for the compact memory store, kept between listings instead of sorted per call.

Sorting every stored task on every ListTasks call stops the event loop (every stream
of the server) for as long as the sort takes, which grows with the store. The order is
built by the first listing and kept from then on: a save that changes a task's status
time appends the task's new place, so a page reads only its own tasks (and the places
left stale).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping
from operator import itemgetter
from typing import Protocol

from ..contracts.task_store import TaskPage, TaskQuery, decode_cursor, encode_cursor
from ..types import Task, TaskState

__all__ = ["StatusOrder"]

_SLACK = 256
"""Stale places tolerated beyond one per stored task before the order is rebuilt."""


class Listed(Protocol):
    """What the order reads of a stored task (the compact store's entry)."""

    owner: str | None
    state: TaskState
    context_id: str
    ts: float | None

    @property
    def task(self) -> Task: ...


def _key(task_id: str, entry: Listed) -> tuple[float, str]:
    """``contracts.task_store.sort_key`` from the entry's metadata: newest status first, then id."""
    return (-(entry.ts or 0.0), task_id)


class StatusOrder:
    """Every stored task's place in ListTasks' order, and how many tasks each owner has.

    The places are kept sorted from the oldest status to the newest, so the newest is
    appended at the end (status times mostly grow). A place goes stale when its task is
    gone or has moved on to a newer status time; stale places are skipped on the walk and
    dropped when they outnumber the tasks. ``entries`` is the store's own mapping, read
    live.
    """

    __slots__ = ("_entries", "_owners", "_places", "_sorted")

    def __init__(self, entries: Mapping[str, Listed]) -> None:
        self._entries = entries
        self._places: list[tuple[float, str]] = []
        self._sorted = True
        self._owners: Counter[str | None] = Counter()
        self._rebuild()

    def _rebuild(self) -> None:
        entries = self._entries
        self._places = sorted((_key(tid, e) for tid, e in entries.items()), reverse=True)
        self._sorted = True
        self._owners = Counter(e.owner for e in entries.values())

    # -- the store's writes ---------------------------------------------------------------
    def created(self, task_id: str, entry: Listed) -> None:
        self._owners[entry.owner] += 1
        self._place(task_id, entry)

    def moved(self, task_id: str, entry: Listed) -> None:
        """The task was saved with a new status time (its old place goes stale)."""
        self._place(task_id, entry)

    def removed(self, entry: Listed) -> None:
        owners = self._owners
        owners[entry.owner] -= 1
        if not owners[entry.owner]:
            del owners[entry.owner]

    def _place(self, task_id: str, entry: Listed) -> None:
        places = self._places
        key = _key(task_id, entry)
        if places and key > places[-1]:
            self._sorted = False  # older than the newest: a clock set back, a given time
        places.append(key)
        if len(places) > 2 * len(self._entries) + _SLACK:
            self._rebuild()

    # -- listing ----------------------------------------------------------------------------
    def page(self, query: TaskQuery, owner: str | None) -> TaskPage:
        """One page of ``owner``'s tasks matching ``query``, as ``TaskStore.list`` says."""
        places = self._places
        if not self._sorted:
            places.sort(reverse=True)  # nearly sorted: about linear
            self._sorted = True
        after = decode_cursor(query.page_token) if query.page_token else None
        context_id, state = query.context_id, query.state
        after_ts = query.status_after.timestamp() if query.status_after is not None else None
        wanted = query.page_size + 1  # one more tells whether a page follows
        if context_id is None and state is None and after_ts is None:
            total = self._owners.get(owner, 0)
            found = self._walk(after, owner, wanted)
        else:
            # Count the matches in one pass; a page of many matches is then found near
            # the cursor in the order, a page of few by sorting just them.
            matching = [
                (tid, e)
                for tid, e in self._entries.items()
                if e.owner == owner
                and (context_id is None or e.context_id == context_id)
                and (state is None or e.state is state)
                and (after_ts is None or (e.ts is not None and e.ts >= after_ts))
            ]
            total = len(matching)
            if total * 8 >= len(places):
                found = self._walk(after, owner, wanted, {tid for tid, _ in matching})
            else:
                keyed = sorted((_key(tid, e), e) for tid, e in matching)  # ids differ: no tie
                start = 0 if after is None else bisect_right(keyed, after, key=itemgetter(0))
                found = [e for _, e in keyed[start : start + wanted]]
        more = len(found) > query.page_size
        tasks = [entry.task for entry in found[: query.page_size]]
        token = encode_cursor(tasks[-1]) if more and tasks else ""
        return TaskPage(tasks=tasks, next_page_token=token, total_size=total)

    def _walk(
        self,
        after: tuple[float, str] | None,
        owner: str | None,
        wanted: int,
        only: set[str] | None = None,
    ) -> list[Listed]:
        """Up to ``wanted`` of ``owner``'s tasks past the cursor ``after``, in ListTasks'
        order; with ``only``, just the tasks of those ids (the ones a filter matched)."""
        places = self._places
        entries = self._entries
        # The places past the cursor are the first ``start`` (the list is descending).
        start = len(places) if after is None else _count_above(places, after)
        found: list[Listed] = []
        previous: tuple[float, str] | None = None
        for index in range(start - 1, -1, -1):
            place = places[index]
            if place == previous:
                continue  # a task back at a status time it had before: listed once
            previous = place
            task_id = place[1]
            if only is not None and task_id not in only:
                continue
            entry = entries.get(task_id)
            if entry is None or entry.owner != owner or _key(task_id, entry) != place:
                continue  # stale, or someone else's
            found.append(entry)
            if len(found) == wanted:
                break
        return found


def _count_above(places: list[tuple[float, str]], after: tuple[float, str]) -> int:
    """How many places (sorted descending) sort after the cursor ``after``."""
    low, high = 0, len(places)
    while low < high:
        middle = (low + high) // 2
        if places[middle] > after:
            low = middle + 1
        else:
            high = middle
    return low
