"""Built-in plugin: the durable ``sqlite://``, the shared ``redis://`` and ``postgresql://`` stores.

- ``sqlite:///relative/tasks.db``, ``sqlite:////absolute/tasks.db`` (the
  SQLAlchemy convention: the path follows the third slash), ``sqlite://:memory:``;
  option ``?max_tasks=N``.
- ``redis://[:password@]host:port/db`` (``rediss://`` for TLS); options
  ``?prefix=NAME`` (default ``a2a``), ``?max_tasks=N``, and the event
  retention ``?stream_max_events=N`` (default 1000 per task) and
  ``?stream_ttl=SECONDS`` (default 3600 after a task's last event); other
  query options go to redis-py (``socket_timeout``...).
- ``postgresql://user[:password]@host:port/db`` (or ``postgres://``); options
  ``?schema=NAME`` (default ``public``), ``?max_tasks=N``, ``?max_sends=N``,
  ``?pool_min=N``, ``?pool_max=N``, and the event retention ``?stream_max_events=N``
  and ``?stream_ttl=SECONDS`` (as for Redis); other query options go to libpq
  (``sslmode``, ``connect_timeout``...).

Both factories only parse: the database is opened on first use.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ..hookspecs import TaskStoreRegistrar, hookimpl
from ..stores import TaskStore
from ..stores.postgres import PostgresTaskStore
from ..stores.redis import RedisTaskStore
from ..stores.sqlite import SqliteTaskStore

__all__ = ["open_postgres_store", "open_redis_store", "open_sqlite_store"]

_MEMORY = frozenset({":memory:", "/:memory:"})


def open_sqlite_store(url: str) -> TaskStore:
    """A ``SqliteTaskStore`` for ``sqlite:///path`` (relative), ``sqlite:////path`` (absolute)."""
    rest = url.split("://", 1)[1]
    location, _, query = rest.partition("?")
    options = _options(query, "sqlite", {"max_tasks"})
    max_tasks = _positive(options, "max_tasks")
    if location in _MEMORY:
        return SqliteTaskStore(":memory:", max_tasks=max_tasks)
    if not location.startswith("/") or location == "/" or "#" in location:
        raise ValueError(
            "expected sqlite:///relative/path.db, sqlite:////absolute/path.db or "
            "sqlite://:memory: (a host is not allowed)"
        )
    path = unquote(location[1:])
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):  # a typo should fail at startup, not on the first request
        raise ValueError(f"the directory {parent!r} for the task database does not exist")
    return SqliteTaskStore(path, max_tasks=max_tasks)


def open_redis_store(url: str) -> TaskStore:
    """A ``RedisTaskStore``; ``prefix`` and ``max_tasks`` are ours, other options redis-py's."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    names = ("prefix", "max_tasks", "stream_max_events", "stream_ttl")
    ours = {k: [v for key, v in pairs if key == k] for k in names}
    for name, values in ours.items():
        if len(values) > 1:
            raise ValueError(f"{name} is given {len(values)} times")
    prefix = ours["prefix"][0] if ours["prefix"] else "a2a"
    if not prefix:
        raise ValueError("prefix must not be empty")
    given = {k: v for k, v in ours.items() if v}
    max_tasks = _positive(given, "max_tasks")
    retention: dict[str, int] = {}
    for name in ("stream_max_events", "stream_ttl"):
        value = _positive(given, name)
        if value is not None:
            retention[name] = value
    rest = urlencode([(k, v) for k, v in pairs if k not in ours])
    client_url = urlunsplit(parts._replace(query=rest))
    return RedisTaskStore(client_url, prefix=prefix, max_tasks=max_tasks, **retention)


_POSTGRES_OPTIONS = (
    "schema",
    "max_tasks",
    "max_sends",
    "pool_min",
    "pool_max",
    "stream_max_events",
    "stream_ttl",
)


def open_postgres_store(url: str) -> TaskStore:
    """A ``PostgresTaskStore``; the options above are ours, other query options libpq's."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    ours: dict[str, list[str]] = {}
    for key, value in pairs:
        if key in _POSTGRES_OPTIONS:
            ours.setdefault(key, []).append(value)
    for name, values in ours.items():
        if len(values) > 1:
            raise ValueError(f"{name} is given {len(values)} times")
    schema = ours["schema"][0] if "schema" in ours else "public"
    if not schema:
        raise ValueError("schema must not be empty")
    pool_min = ours.get("pool_min")
    if pool_min is not None and not pool_min[0].isdigit():
        raise ValueError(f"pool_min must be one integer >= 0, not {pool_min!r}")
    rest = urlencode([(k, v) for k, v in pairs if k not in _POSTGRES_OPTIONS])
    scheme = "postgresql" if parts.scheme.lower() == "postgres" else parts.scheme
    conninfo = urlunsplit(parts._replace(scheme=scheme, query=rest))
    return PostgresTaskStore(
        conninfo,
        schema=schema,
        max_tasks=_positive(ours, "max_tasks"),
        max_sends=_positive(ours, "max_sends") or 100_000,
        min_size=int(pool_min[0]) if pool_min is not None else 1,
        max_size=_positive(ours, "pool_max") or 10,
        stream_max_events=_positive(ours, "stream_max_events") or 1000,
        stream_ttl=_positive(ours, "stream_ttl") or 3600,
    )


def _options(query: str, scheme: str, known: set[str]) -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        options.setdefault(key, []).append(value)
    unknown = sorted(set(options) - known)
    if unknown:
        listed = ", ".join(sorted(known))
        raise ValueError(f"unknown {scheme}:// option(s): {', '.join(unknown)} (known: {listed})")
    return options


def _positive(options: dict[str, list[str]], name: str) -> int | None:
    values = options.get(name)
    if values is None:
        return None
    if len(values) != 1 or not values[0].isdigit() or int(values[0]) <= 0:
        raise ValueError(f"{name} must be one positive integer, not {values!r}")
    return int(values[0])


@hookimpl
def a2a_register_task_stores(register: TaskStoreRegistrar) -> None:
    register("sqlite", open_sqlite_store)
    register("redis", open_redis_store)
    register("rediss", open_redis_store)
    register("postgresql", open_postgres_store)
    register("postgres", open_postgres_store)
