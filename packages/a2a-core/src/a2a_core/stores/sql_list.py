"""ListTasks in SQL: the count and page queries of ``sqlite://`` and ``postgresql://``.

Both keep tasks in a table with the columns ``owner``, ``context_id``,
``state``, ``status_ts`` (NULL when undated) and ``sort_ts`` (``base.sort_key``'s
time) next to ``id`` and ``body``; ascending ``(sort_ts, id)`` is list order
and page tokens (``base.encode_cursor``) point into it. Only the placeholder
and how an owner is compared differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..contracts.task_store import TaskPage, TaskQuery, decode_cursor, encode_cursor
from ..types import Task

__all__ = ["ListStatements", "list_statements", "task_page"]


@dataclass(frozen=True, slots=True)
class ListStatements:
    """The two queries of one ListTasks call: run both in one snapshot."""

    count: str
    """``SELECT count(*)`` of every match (the page's ``total_size``)."""
    count_params: list[Any]
    page: str
    """The matching bodies after the page token, in list order, one more than a page."""
    page_params: list[Any]


def list_statements(
    query: TaskQuery, *, table: str, owner: Any, owner_op: str = "=", mark: str = "?"
) -> ListStatements:
    """The count and page SQL for ``query`` on ``table`` (``owner_op``: ``=`` or ``IS``).

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
        where.append(f"status_ts >= {mark}")  # NULL (undated) never matches
        params.append(query.status_after.timestamp())
    filters = " AND ".join(where)
    page_where, page_params = filters, list(params)
    if query.page_token:
        after_ts, after_id = decode_cursor(query.page_token)
        page_where += f" AND (sort_ts, id) > ({mark}, {mark})"  # a row value: an index range
        page_params += [after_ts, after_id]
    page_params.append(query.page_size + 1)
    return ListStatements(
        count=f"SELECT count(*) FROM {table} WHERE {filters}",
        count_params=params,
        page=f"SELECT body FROM {table} WHERE {page_where} ORDER BY sort_ts, id LIMIT {mark}",
        page_params=page_params,
    )


def task_page(total: int, bodies: list[str], page_size: int) -> TaskPage:
    """The page from the queries' answers (``bodies``: up to one more than ``page_size``)."""
    tasks = [Task.model_validate_json(body) for body in bodies[:page_size]]
    more = len(bodies) > page_size
    token = encode_cursor(tasks[-1]) if more and tasks else ""
    return TaskPage(tasks=tasks, next_page_token=token, total_size=total)
