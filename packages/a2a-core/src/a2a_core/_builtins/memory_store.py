"""Built-in plugin: the ``memory://`` task store (``memory://?max_tasks=N``)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ..hookspecs import hookimpl
from ..stores import MemoryTaskStore, TaskStore
from ..stores.registry import TaskStoreRegistrar

_OPTIONS = frozenset({"max_tasks"})


def open_memory_store(url: str) -> TaskStore:
    """A ``MemoryTaskStore``; the only option is ``max_tasks`` (old terminal tasks are evicted)."""
    parts = urlsplit(url)
    if parts.netloc or parts.path not in ("", "/") or parts.fragment:
        raise ValueError("memory:// takes no host or path, only ?max_tasks=N")
    params = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(params) - _OPTIONS)
    if unknown:
        raise ValueError(f"unknown memory:// option(s): {', '.join(unknown)} (known: max_tasks)")
    values = params.get("max_tasks")
    if values is None:
        return MemoryTaskStore()
    if len(values) != 1 or not values[0].isdigit() or int(values[0]) <= 0:
        raise ValueError(f"max_tasks must be one positive integer, not {values!r}")
    return MemoryTaskStore(max_tasks=int(values[0]))


@hookimpl
def a2a_register_task_stores(register: TaskStoreRegistrar) -> None:
    register("memory", open_memory_store)
