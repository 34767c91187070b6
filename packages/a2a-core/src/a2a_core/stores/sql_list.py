"""ListTasks in SQL: the count and page queries of ``sqlite://`` and ``postgresql://``.

Both keep tasks in a table with the columns ``owner``, ``context_id``,
``state``, ``status_ts`` (NULL when undated) and ``sort_ts`` (``base.sort_key``'s
time) next to ``id`` and ``body``; ascending ``(sort_ts, id)`` is list order
and page tokens (``base.encode_cursor``) point into it. Only the placeholder
and how an owner is compared differ.

``total_size`` must be exact (A2A 1.0), and counting the matches costs a walk
over all of them: at a million tasks that is most of a page's time. So both
stores keep counts, maintained by triggers in the database (``sql_counts``):
every task, the owner's, a context's, a state's. A query filtered by at most
one of context and state reads one row of them; only the rarer combinations
(context and state, ``status_after``) count, over the one index range they
name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..contracts.task_store import TaskPage, TaskQuery, decode_cursor, encode_cursor
from ..types import Task
from .sql_counts import ALL, CONTEXT, STATE

__all__ = ["ListStatements", "counted", "list_statements", "task_page"]


@dataclass(frozen=True, slots=True)
class ListStatements:
    """The two queries of one ListTasks call: run both in one snapshot."""

    count: str
    """How many tasks match (the page's ``total_size``): one row of the counts, else
    ``SELECT count(*)``."""
    count_params: list[Any]
    page: str
    """The matching bodies after the page token, in list order, one more than a page."""
    page_params: list[Any]


def counted(query: TaskQuery) -> tuple[str, str] | None:
    """The (kind, key) of the kept count that is ``query``'s total, None when none is."""
    if query.status_after is not None:
        return None
    if query.context_id is not None:
        return None if query.state is not None else (CONTEXT, query.context_id)
    if query.state is not None:
        return (STATE, query.state.value)
    return (ALL, "")


def list_statements(
    query: TaskQuery,
    *,
    table: str,
    counts: str,
    owner: Any,
    owner_tag: str,
    owner_op: str = "=",
    mark: str = "?",
) -> ListStatements:
    """The count and page SQL for ``query`` on ``table`` (``owner_op``: ``=`` or ``IS``).

    ``counts`` is the table of kept counts, where the owner is ``owner_tag``.
    ``mark`` is the driver's placeholder (``?`` for sqlite3, ``%s`` for psycopg).
    Raises InvalidParamsError for a malformed page token.
    """
    where = [f"owner {owner_op} {mark}"]
    params: list[Any] = [owner]
    if query.context_id is not None:
        where.append(f"context_id = {mark}")
        params.append(query.context_id)
    if query.state is not None:
        where.append(f"state = {mark}")
        params.append(query.state.value)
    if query.status_after is not None:
        # NULL (undated) never matches; sort_ts is minus the status time, so the same
        # bound on it makes the match one range of the index.
        after = query.status_after.timestamp()
        where.append(f"status_ts >= {mark} AND sort_ts <= {mark}")
        params += [after, -after]
    filters = " AND ".join(where)
    page_where, page_params = filters, list(params)
    if query.page_token:
        after_ts, after_id = decode_cursor(query.page_token)
        page_where += f" AND (sort_ts, id) > ({mark}, {mark})"  # a row value: an index range
        page_params += [after_ts, after_id]
    page_params.append(query.page_size + 1)
    kept = counted(query)
    if kept is None:
        count, count_params = f"SELECT count(*) FROM {table} WHERE {filters}", params
    else:
        count = (
            f"SELECT COALESCE((SELECT n FROM {counts} WHERE owner = {mark} AND kind = {mark}"
            f" AND key = {mark}), 0)"
        )
        count_params = [owner_tag, *kept]
    return ListStatements(
        count=count,
        count_params=count_params,
        page=f"SELECT body FROM {table} WHERE {page_where} ORDER BY sort_ts, id LIMIT {mark}",
        page_params=page_params,
    )


def task_page(total: int, bodies: list[str], page_size: int) -> TaskPage:
    """The page from the queries' answers (``bodies``: up to one more than ``page_size``)."""
    tasks = [Task.model_validate_json(body) for body in bodies[:page_size]]
    more = len(bodies) > page_size
    token = encode_cursor(tasks[-1]) if more and tasks else ""
    return TaskPage(tasks=tasks, next_page_token=token, total_size=total)
