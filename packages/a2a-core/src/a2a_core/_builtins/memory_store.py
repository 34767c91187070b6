"""Built-in plugin: the ``memory://`` task store (``memory://?max_tasks=N&max_bytes=B``).

It opens ``CompactMemoryTaskStore``; ``docs/stores.md`` says why it, not the reference
``MemoryTaskStore``, is the default.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ..hookspecs import TaskStoreRegistrar, hookimpl
from ..stores import CompactMemoryTaskStore, TaskStore

_OPTIONS = ("max_tasks", "max_bytes")


def open_memory_store(url: str) -> TaskStore:
    """A ``CompactMemoryTaskStore``; options ``max_tasks`` and ``max_bytes`` (positive integers)."""
    parts = urlsplit(url)
    if parts.netloc or parts.path not in ("", "/") or parts.fragment:
        raise ValueError("memory:// takes no host or path, only ?max_tasks=N&max_bytes=B")
    params = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(params) - set(_OPTIONS))
    if unknown:
        raise ValueError(
            f"unknown memory:// option(s): {', '.join(unknown)} (known: {', '.join(_OPTIONS)})"
        )
    options: dict[str, int] = {}
    for name in _OPTIONS:
        values = params.get(name)
        if values is None:
            continue
        if len(values) != 1 or not values[0].isdigit() or int(values[0]) <= 0:
            raise ValueError(f"{name} must be one positive integer, not {values!r}")
        options[name] = int(values[0])
    return CompactMemoryTaskStore(**options)


@hookimpl
def a2a_register_task_stores(register: TaskStoreRegistrar) -> None:
    register("memory", open_memory_store)
