"""Opening task stores by URL: the scheme picks a factory that a plugin registered.

``memory://`` is built in; ``sqlite://`` and ``redis://`` come from the core's
built-in store plugin, others from third-party plugins
(``a2a_register_task_stores``).
"""

from __future__ import annotations

from typing import TypeGuard
from urllib.parse import urlsplit, urlunsplit

import pluggy

from .contracts.task_store import TaskStore
from .errors import ConfigurationError
from .hookspecs import TaskStoreFactory, TaskStoreRegistrar
from .plugins import PluginError, Registration, collect_registrations, get_plugin_manager

__all__ = [
    "TaskStoreFactory",
    "TaskStoreRegistrar",
    "open_task_store",
    "redact_url",
    "registered_task_stores",
]


def _is_factory(value: object) -> TypeGuard[TaskStoreFactory]:
    return callable(value)


def registered_task_stores(
    plugin_manager: pluggy.PluginManager | None = None,
) -> dict[str, Registration[TaskStoreFactory]]:
    """Every task store factory the plugins register, by (lower-case) URL scheme."""
    return collect_registrations(
        plugin_manager if plugin_manager is not None else get_plugin_manager(),
        "a2a_register_task_stores",
        "task store scheme",
        _is_factory,
        "a callable factory(url) -> TaskStore",
    )


def open_task_store(url: str, *, plugin_manager: pluggy.PluginManager | None = None) -> TaskStore:
    """The task store for ``url`` (``memory://``, ``sqlite:///tasks.db``...), by its scheme."""
    scheme, sep, _ = url.partition("://")
    if not sep or not scheme:
        raise ConfigurationError(
            f"Task store URL {redact_url(url)!r} has no scheme "
            "(expected e.g. memory://, sqlite:///tasks.db, redis://localhost:6379/0)"
        )
    key = scheme.strip().lower()
    stores = registered_task_stores(plugin_manager)
    found = stores.get(key)
    if found is None:
        available = ", ".join(f"{s}://" for s in sorted(stores)) or "none"
        raise ConfigurationError(
            f"No task store for {key}:// URLs (available: {available}); "
            "install the plugin that provides it"
        )
    try:
        store = found.value(url)
    except Exception as exc:
        raise PluginError(
            f"task store {key}:// (plugin {found.plugin!r}) could not open "
            f"{redact_url(url)!r}: {type(exc).__name__}: {exc}",
            plugin=found.plugin,
        ) from exc
    if not isinstance(store, TaskStore):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise PluginError(
            f"task store {key}:// (plugin {found.plugin!r}) returned a "
            f"{type(store).__name__}, not a TaskStore",
            plugin=found.plugin,
        )
    return store


def redact_url(url: str) -> str:
    """The URL without its password (fit for errors, logs and terminals)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        netloc = f"{parts.username or ''}:***@{host}"
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "<unparseable URL>"
