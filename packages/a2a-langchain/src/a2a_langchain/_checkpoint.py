"""Durable LangGraph checkpointers: a graph paused on one server instance resumes on another.

A graph that calls ``interrupt()`` keeps its paused state in its
checkpointer. ``InMemorySaver`` keeps it in one process, so only the instance
that asked can resume it (and a restart forgets it). A checkpointer in a
database shared by every instance lets any of them resume the graph:

- ``open_checkpointer(url)``: an async context manager that opens LangGraph's
  async SQLite or PostgreSQL saver for a URL and creates its tables;
- ``with_checkpointer(runnable, saver)``: the graph with ``saver`` attached
  (what ``LangChainAgent(graph, checkpointer=saver)`` does).

The savers come from LangGraph's own packages (extras
``a2a-langchain[checkpoint-sqlite]`` and ``a2a-langchain[checkpoint-postgres]``);
any other ``BaseCheckpointSaver`` (Redis...) can be given directly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from langchain_core.runnables import Runnable, RunnableBinding

from ._card import is_graph
from ._input import unwrap

__all__ = ["open_checkpointer", "with_checkpointer"]

_SQLITE_HINT = "pip install 'a2a-langchain[checkpoint-sqlite]' (langgraph-checkpoint-sqlite)"
_POSTGRES_HINT = "pip install 'a2a-langchain[checkpoint-postgres]' (langgraph-checkpoint-postgres)"


def with_checkpointer(runnable: Runnable[Any, Any], saver: Any) -> Runnable[Any, Any]:
    """``runnable`` (a compiled graph, possibly under ``with_config``/``bind``) using ``saver``."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    if not isinstance(saver, BaseCheckpointSaver):
        hint = (
            " (for a URL, open the saver in the serving event loop: "
            "async with open_checkpointer(url) as saver: ...)"
            if isinstance(saver, str)
            else ""
        )
        raise TypeError(
            "checkpointer must be a LangGraph BaseCheckpointSaver, not "
            f"{type(saver).__name__}{hint}"
        )
    if not is_graph(runnable):
        raise TypeError("checkpointer= needs a compiled LangGraph graph")
    bindings: list[RunnableBinding[Any, Any]] = []
    current: Runnable[Any, Any] = runnable
    while isinstance(current, RunnableBinding):
        bindings.append(current)
        current = current.bound
    graph: Any = unwrap(runnable)
    rebuilt: Runnable[Any, Any] = graph.copy(update={"checkpointer": saver})
    for binding in reversed(bindings):
        rebuilt = binding.model_copy(update={"bound": rebuilt})
    return rebuilt


@contextlib.asynccontextmanager
async def open_checkpointer(url: str) -> AsyncIterator[Any]:
    """An async LangGraph checkpointer for ``url``, tables created; closed on exit.

    - ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``:
      ``AsyncSqliteSaver`` (instances on one machine sharing the file);
    - ``postgresql://user@host:5432/db`` (``?schema=name`` keeps the tables in
      that schema, created if missing): ``AsyncPostgresSaver``.

    Open it in the serving event loop (``serve_async``, ``running_server``)::

        async with open_checkpointer("postgresql://db/app") as saver:
            await serve_async(graph, checkpointer=saver, store_url="postgresql://db/app")
    """
    scheme = url.partition("://")[0].lower()
    if scheme == "sqlite":
        async with _sqlite(url) as saver:
            yield saver
    elif scheme in ("postgresql", "postgres"):
        async with _postgres(url) as saver:
            yield saver
    else:
        raise ValueError(
            f"no durable checkpointer for {scheme or url!r}: expected sqlite:///path.db or "
            "postgresql://... (or pass any LangGraph BaseCheckpointSaver as checkpointer=)"
        )


def _sqlite_path(url: str) -> str:
    location = url.split("://", 1)[1]
    if not location.startswith("/") or location == "/" or "?" in location or "#" in location:
        raise ValueError(
            "expected sqlite:///relative/path.db or sqlite:////absolute/path.db (no host, "
            "no options)"
        )
    return unquote(location[1:])


@contextlib.asynccontextmanager
async def _sqlite(url: str) -> AsyncIterator[Any]:
    path = _sqlite_path(url)
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError as exc:
        raise ImportError(f"sqlite:// checkpointers need {_SQLITE_HINT}") from exc
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        await saver.setup()
        yield saver


def _postgres_conninfo(url: str) -> tuple[str, str | None]:
    """The libpq URL without our ``schema`` option (its search_path set), and the schema."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in pairs if k == "schema"]
    rest = [(k, v) for k, v in pairs if k != "schema"]
    if not schemas:
        return url, None
    schema = schemas[-1]
    if not schema or any(k == "options" for k, _ in rest):
        raise ValueError("schema must be non-empty and cannot be combined with options=")
    rest.append(("options", f"-csearch_path={schema}"))
    return urlunsplit(parts._replace(query=urlencode(rest))), schema


@contextlib.asynccontextmanager
async def _postgres(url: str) -> AsyncIterator[Any]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import sql
    except ImportError as exc:
        raise ImportError(f"postgresql:// checkpointers need {_POSTGRES_HINT}") from exc
    conninfo, schema = _postgres_conninfo(url)
    if schema is not None:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            with contextlib.suppress(psycopg.errors.UniqueViolation):  # made at the same time
                await conn.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
                )
    async with AsyncPostgresSaver.from_conn_string(conninfo) as saver:
        try:
            await saver.setup()
        except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
            # Another instance created the same tables at the same moment: they exist now.
            await asyncio.sleep(0.2)
            await saver.setup()
        yield saver
