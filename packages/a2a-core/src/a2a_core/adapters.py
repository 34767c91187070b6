"""Turning any agent object into an executor (the task-store registry is ``store_registry``).

Framework packages (LangChain, CrewAI...) are plugins: they register named
``AgentAdapter`` objects and answer ``a2a_adapt_agent`` for objects they know.
``resolve_agent`` asks them, and falls back to what the core serves itself:
``AgentExecutor`` instances, async functions and async generator functions.
``open_task_store`` and the store registrations are re-exported here from
``store_registry``, where they live.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, TypeGuard, cast

import pluggy

from .errors import ConfigurationError
from .hookspecs import AdapterRegistrar, AgentAdapter, ResolvedAgent
from .plugins import (
    PluginError,
    Registration,
    call_hook_impl,
    collect_registrations,
    get_plugin_manager,
    hook_impls,
)
from .server.executor import AgentExecutor, as_executor
from .store_registry import (
    TaskStoreFactory,
    TaskStoreRegistrar,
    open_task_store,
    registered_task_stores,
)
from .types import AgentCard

__all__ = [
    "AdapterRegistrar",
    "AgentAdapter",
    "ResolvedAgent",
    "TaskStoreFactory",
    "TaskStoreRegistrar",
    "default_card",
    "open_task_store",
    "registered_adapters",
    "registered_task_stores",
    "resolve_agent",
]

DEFAULT_MODES = ("text/plain",)


def _is_adapter(value: object) -> TypeGuard[AgentAdapter]:
    return isinstance(value, AgentAdapter)


def _manager(pm: pluggy.PluginManager | None) -> pluggy.PluginManager:
    return pm if pm is not None else get_plugin_manager()


def registered_adapters(
    plugin_manager: pluggy.PluginManager | None = None,
) -> dict[str, Registration[AgentAdapter]]:
    """Every adapter the plugins register, by (case-folded) name."""
    return collect_registrations(
        _manager(plugin_manager),
        "a2a_register_adapters",
        "agent adapter",
        _is_adapter,
        "an object with an adapt(agent, options) method",
    )


# -- agents -------------------------------------------------------------------------


def resolve_agent(
    agent: Any,
    options: Mapping[str, Any] | None = None,
    *,
    adapter: str | None = None,
    plugin_manager: pluggy.PluginManager | None = None,
) -> ResolvedAgent:
    """Make ``agent`` servable: by the named ``adapter``, else the first plugin that claims
    it (``a2a_adapt_agent``), else as an ``AgentExecutor`` / async function / async generator.

    A plugin failing or answering something other than a ``ResolvedAgent`` is a
    ``PluginError`` naming it; an object nobody can serve is a ``TypeError``.
    """
    if isinstance(agent, ResolvedAgent):
        return agent
    pm = _manager(plugin_manager)
    opts: Mapping[str, Any] = MappingProxyType(dict(options or {}))
    if adapter is not None:
        return _adapt_with(pm, adapter, agent, opts)
    for impl in hook_impls(pm, "a2a_adapt_agent"):
        result = call_hook_impl(impl, "a2a_adapt_agent", {"agent": agent, "options": opts})
        if result is None:
            continue
        return _checked(result, impl.plugin_name, "a2a_adapt_agent")
    return _fallback(agent, pm)


def _adapt_with(
    pm: pluggy.PluginManager, name: str, agent: Any, options: Mapping[str, Any]
) -> ResolvedAgent:
    adapters = registered_adapters(pm)
    found = adapters.get(name.strip().lower())
    if found is None:
        raise ConfigurationError(
            f"No agent adapter named {name!r} "
            f"(installed: {', '.join(sorted(adapters)) or 'none'}); "
            "install the package that provides it"
        )
    try:
        result = found.value.adapt(agent, options)
    except Exception as exc:
        raise PluginError(
            f"agent adapter {found.name!r} (plugin {found.plugin!r}) could not serve a "
            f"{type(agent).__name__}: {type(exc).__name__}: {exc}",
            plugin=found.plugin,
        ) from exc
    return _checked(result, found.plugin, f"adapter {found.name!r}", default_adapter=found.name)


def _checked(
    result: object, plugin: str, where: str, *, default_adapter: str | None = None
) -> ResolvedAgent:
    if not isinstance(result, ResolvedAgent):
        hint = ""
        if inspect.iscoroutine(result):
            result.close()
            hint = " (a coroutine: hooks must be plain functions)"
        raise PluginError(
            f"a2a plugin {plugin!r}: {where} returned {type(result).__name__}{hint}; "
            "expected a ResolvedAgent or None",
            plugin=plugin,
        )
    if not isinstance(result.executor, AgentExecutor):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise PluginError(
            f"a2a plugin {plugin!r}: {where} returned a ResolvedAgent whose executor is a "
            f"{type(result.executor).__name__}, not an AgentExecutor",
            plugin=plugin,
        )
    if result.adapter is None:
        result = replace(result, adapter=default_adapter or plugin)
    return result


def _fallback(agent: Any, pm: pluggy.PluginManager) -> ResolvedAgent:
    try:
        executor = as_executor(agent)
    except TypeError:
        plugins = sorted(name for name, plugin in pm.list_name_plugin() if plugin is not None)
        raise TypeError(
            f"Cannot serve a {type(agent).__name__!r}: no a2a_core plugin recognised it "
            f"(plugins loaded: {', '.join(plugins) or 'none'}). Serve an AgentExecutor, an "
            "async function or an async generator function, or install the adapter package "
            "for its framework (e.g. a2a-langchain, a2a-crewai)."
        ) from None
    # A function names itself; an executor or callable object is named by its class.
    target: object = agent if hasattr(agent, "__name__") else cast(object, type(agent))
    name = getattr(target, "__name__", None)
    return ResolvedAgent(
        executor,
        name=name if isinstance(name, str) else None,
        description=_summary(getattr(target, "__doc__", None)),
    )


def _summary(doc: object) -> str | None:
    """The first paragraph of a docstring (its own, never a base class's)."""
    if not isinstance(doc, str) or not doc.strip():
        return None
    first = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(first.split()) or None


def default_card(resolved: ResolvedAgent, options: Mapping[str, Any] | None = None) -> AgentCard:
    """A card from the adapter's defaults; ``name``/``description``/``version`` options win.

    Interfaces (URLs) are left to the app that knows where it is served.
    """
    opts = options or {}
    name = str(opts.get("name") or resolved.name or "Agent")
    description = str(opts.get("description") or resolved.description or f"{name} (A2A agent)")
    version = str(opts.get("version") or resolved.version or "0.1.0")
    return AgentCard(
        name=name,
        description=description,
        version=version,
        default_input_modes=list(resolved.input_modes or DEFAULT_MODES),
        default_output_modes=list(resolved.output_modes or DEFAULT_MODES),
        skills=[skill.model_copy(deep=True) for skill in resolved.skills],
    )
