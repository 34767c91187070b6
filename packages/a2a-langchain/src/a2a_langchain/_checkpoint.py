"""Durable LangGraph checkpointers: a graph paused on one server instance resumes on another.

A graph that calls ``interrupt()`` keeps its paused state in its
checkpointer. ``InMemorySaver`` keeps it in one process, so only the instance
that asked can resume it (and a restart forgets it). A checkpointer in a
database shared by every instance lets any of them resume the graph:

- ``open_checkpointer(url)``: an async context manager that opens LangGraph's
  async SQLite or PostgreSQL saver for a URL and creates its tables;
- ``with_checkpointer(runnable, saver)``: the graph with ``saver`` attached
  (what ``LangChainAgent(graph, checkpointer=saver)`` does);
- ``CheckpointerURL``: what ``LangChainAgent(graph, checkpointer="sqlite:///x.db")``
  and ``a2a serve -o checkpointer=...`` use: the URL is checked at once, the
  saver opened in the serving event loop at the first run and closed when the
  app stops.

The savers come from LangGraph's own packages (extras
``a2a-langchain[checkpoint-sqlite]`` and ``a2a-langchain[checkpoint-postgres]``);
any other ``BaseCheckpointSaver`` (Redis...) can be given directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from langchain_core.runnables import Runnable, RunnableBinding

from ._card import is_graph
from ._input import unwrap

__all__ = ["CheckpointerURL", "open_checkpointer", "with_checkpointer"]

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


def check_checkpointer_url(url: str) -> None:
    """Refuse a checkpointer URL that ``open_checkpointer`` could not open, before serving:
    an unknown scheme, a malformed SQLite path or a missing package."""
    scheme = url.partition("://")[0].lower()
    if scheme == "sqlite":
        _sqlite_path(url)
        module, hint = "langgraph.checkpoint.sqlite", _SQLITE_HINT
    elif scheme in ("postgresql", "postgres"):
        _postgres_conninfo(url)
        module, hint = "langgraph.checkpoint.postgres", _POSTGRES_HINT
    else:
        raise ValueError(
            f"no durable checkpointer for {scheme or url!r}: expected sqlite:///path.db or "
            "postgresql://... (or pass any LangGraph BaseCheckpointSaver as checkpointer=)"
        )
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise ImportError(f"{scheme}:// checkpointers need {hint}")


class CheckpointerURL:
    """A durable checkpointer given by URL, opened in the serving event loop when needed.

    A saver belongs to the event loop it was opened in, which does not exist yet
    when an agent is built (``a2a serve -o checkpointer=...``, ``serve(graph,
    checkpointer="sqlite:///x.db")``). So the URL is checked at once, the saver
    opened at the first run and closed when the serving app stops (the plugin's
    lifespan); a later run in another loop opens it again.
    """

    def __init__(self, url: str) -> None:
        check_checkpointer_url(url)
        self.url = url
        self._stack: contextlib.AsyncExitStack | None = None
        self._saver: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        parts = urlsplit(self.url)
        if parts.password is not None:  # never show a password
            host = parts.netloc.rpartition("@")[2]
            user = parts.username or ""
            parts = parts._replace(netloc=f"{user}:***@{host}")
        return f"CheckpointerURL({urlunsplit(parts)!r})"

    @property
    def opened(self) -> bool:
        """Whether a saver is open (in some loop)."""
        return self._saver is not None

    async def saver(self) -> Any:
        """The saver for the running loop, opened (tables created) on first use."""
        loop = asyncio.get_running_loop()
        if self._saver is not None and self._loop is loop:
            return self._saver
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
            self._saver = self._stack = None  # one of a loop that is gone: cannot be closed
        async with self._lock:
            if self._saver is None:
                stack = contextlib.AsyncExitStack()
                self._saver = await stack.enter_async_context(open_checkpointer(self.url))
                self._stack = stack
        return self._saver

    async def aclose(self) -> None:
        """Close the saver opened in the running loop (a later run opens it again)."""
        stack, loop = self._stack, self._loop
        if stack is None or loop is not asyncio.get_running_loop():
            return
        self._stack = self._saver = None
        await stack.aclose()


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
