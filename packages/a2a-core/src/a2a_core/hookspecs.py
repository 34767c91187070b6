"""The hooks a2a_core plugins implement (pluggy project ``"a2a_core"``).

Every hook is synchronous and runs at configuration time (startup), never per
request or per streamed chunk: what a request needs is composed once into
plain async calls (one ``authenticate``, one task observer). A plugin is a
module or object with functions decorated ``@hookimpl`` and named after a hook
below; it is found through the ``a2a_core`` entry-point group::

    [project.entry-points.a2a_core]
    my-plugin = "my_package.plugin"

What plugins hand over through the hooks (an ``AgentAdapter`` and its
``ResolvedAgent``, an ``AuthBackend``, a ``TaskStoreFactory``) is defined here
too, so that the plugin manager, and the registries built on it
(``adapters``, ``auth``, ``store_registry``), sit above this module.

``docs/plugins/hooks.md`` documents each hook with an example. Adding a hook is
a minor release; changing or removing one is a major release announced first
with ``warn_on_impl``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pluggy

if TYPE_CHECKING:
    from argparse import ArgumentParser

    from .contracts.task_store import TaskStore
    from .identity import Principal
    from .server.executor import AgentExecutor
    from .types import AgentCard, AgentSkill, SecurityScheme, Task, TaskState

# The hook specifications are listed too: they are the reference of what a plugin implements.
__all__ = [
    "PROJECT",
    "AdapterRegistrar",
    "AgentAdapter",
    "AuthBackend",
    "AuthBackendFactory",
    "AuthBackendRegistrar",
    "CommandParsers",
    "ResolvedAgent",
    "TaskStoreFactory",
    "TaskStoreRegistrar",
    "a2a_adapt_agent",
    "a2a_agent_card",
    "a2a_cli_commands",
    "a2a_lifespan",
    "a2a_register_adapters",
    "a2a_register_auth_backends",
    "a2a_register_task_stores",
    "a2a_task_transition",
    "hookimpl",
    "hookspec",
]

PROJECT = "a2a_core"
"""The pluggy project name, also the entry-point group plugins register under."""

hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks the hook specifications below (for plugin authors: use ``hookimpl``)."""
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Decorate a plugin's hook functions with this (``@hookimpl``, ``@hookimpl(tryfirst=True)``)."""


# --- what plugins hand over through the hooks -----------------------------------------------


@dataclass(frozen=True, slots=True)
class ResolvedAgent:
    """An agent ready to serve: its executor and what its card should say by default."""

    executor: AgentExecutor
    name: str | None = None
    description: str | None = None
    version: str | None = None
    skills: Sequence[AgentSkill] = ()
    input_modes: Sequence[str] = ()
    output_modes: Sequence[str] = ()
    adapter: str | None = None
    """Which adapter (or plugin) produced it; None for the core's own fallback."""


@runtime_checkable
class AgentAdapter(Protocol):
    """Serves one framework's agent objects (a LangChain Runnable, a CrewAI Crew...)."""

    def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
        """Wrap ``agent``; raise ``TypeError`` when it is not an object of this framework."""
        ...


AdapterRegistrar = Callable[[str, AgentAdapter], None]
"""The ``register`` callback of ``a2a_register_adapters``: ``register(name, adapter)``."""


@runtime_checkable
class AuthBackend(Protocol):
    """One way of authenticating callers, declared on the card as one security scheme."""

    @property
    def scheme_name(self) -> str:
        """The name of its security scheme in the card (``securitySchemes`` key)."""
        ...

    @property
    def security_scheme(self) -> SecurityScheme:
        """How clients present credentials, published in the card."""
        ...

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The caller, None without credentials of this scheme; raise
        ``AuthenticationRequiredError`` for credentials of this scheme that are invalid."""
        ...


AuthBackendFactory = Callable[[Mapping[str, Any]], "AuthBackend | None"]
"""Builds a backend from the server options, or None when they do not configure it."""

AuthBackendRegistrar = Callable[[str, AuthBackendFactory], None]
"""The ``register`` callback of ``a2a_register_auth_backends``: ``register(name, factory)``."""


TaskStoreFactory = Callable[[str], "TaskStore"]
"""Builds a store from its full URL; cheap and without I/O (connect on first use)."""

TaskStoreRegistrar = Callable[[str, TaskStoreFactory], None]
"""The ``register`` callback of ``a2a_register_task_stores``: ``register(scheme, factory)``."""


class CommandParsers(Protocol):
    """The ``a2a`` sub-commands table ``a2a_cli_commands`` adds to (what
    ``ArgumentParser.add_subparsers()`` returns)."""

    def add_parser(self, name: str, **kwargs: Any) -> ArgumentParser:
        """A new sub-command ``name`` (``help``, ``description``... as for its parser)."""
        ...


@hookspec
def a2a_register_adapters(register: AdapterRegistrar) -> None:
    """Register agent adapters by name, e.g. ``register("langchain", LangChainAdapter())``.

    Called once per configuration (``resolve_agent``/``configure_service``), so
    the adapter can be chosen explicitly (``adapter="langchain"``, the CLI's
    ``--adapter``). Every plugin's registrations are collected; two plugins
    registering the same name is a ``PluginError`` naming both.
    """


@hookspec(firstresult=True)
def a2a_adapt_agent(agent: Any, options: Mapping[str, Any]) -> ResolvedAgent | None:
    """Is this foreign agent object yours? Return a ``ResolvedAgent`` or None.

    Called once when an object is served without naming an adapter
    (``serve(obj)``, ``a2a serve module:obj``). The first non-None answer
    wins, so answer None quickly for objects you do not know (check types
    without importing heavy frameworks when possible); a more specific plugin
    can use ``@hookimpl(tryfirst=True)``. Plain async functions, async
    generators and ``AgentExecutor`` instances need no plugin. Must not be
    ``async def``: a coroutine would count as an answer.
    """


@hookspec
def a2a_register_task_stores(register: TaskStoreRegistrar) -> None:
    """Register task store factories by URL scheme: ``register("sqlite", factory)``.

    Called when a store is opened by URL at startup
    (``open_task_store("sqlite:///tasks.db")``, ``configure_service(store_url=...)``);
    then the scheme's ``factory(url) -> TaskStore`` builds the store. The
    factory must be cheap and must not do I/O (connect lazily, on first use).
    ``memory`` is a built-in plugin. Two plugins registering the same scheme
    is a ``PluginError``.
    """


@hookspec
def a2a_agent_card(card: AgentCard, options: Mapping[str, Any]) -> AgentCard | None:
    """Adjust the agent card: return a modified copy (``card.model_copy(update=...)``) or None.

    Called once when a service is configured, after the adapter's defaults
    and the auth backends' security schemes are in the card. Every plugin
    runs, in call order (``tryfirst`` first, then the most recently
    registered first); each sees the card as left by the previous one.
    """


@hookspec
def a2a_register_auth_backends(register: AuthBackendRegistrar) -> None:
    """Register auth backend factories by name: ``register("jwt", factory)``.

    ``factory(options) -> AuthBackend | None`` builds a backend from the
    server options, or returns None when the options do not configure it.
    Called at startup; the configured backends are composed into one
    ``authenticate(headers)`` (the first principal wins) and each adds its
    security scheme to the card.
    """


@hookspec
def a2a_lifespan(app: Any) -> AbstractAsyncContextManager[object] | None:
    """Return an async context manager to run for the server's lifetime, or None.

    Called at startup with the ASGI app; the context managers are entered in
    call order before the first request and exited in reverse at shutdown
    (open connection pools, start metrics exporters, flush on exit).
    """


@hookspec
def a2a_task_transition(task: Task, old: TaskState | None, new: TaskState) -> None:
    """Observe a task's state change (audit, metrics): notify only, return nothing.

    Called on the event path each time a task's state actually changes
    (never for artifacts or same-state updates), after the change is stored.
    It must be cheap and must not block: hand slow work to a queue. An
    exception is logged and does not affect the task.
    """


@hookspec
def a2a_cli_commands(commands: CommandParsers) -> None:
    """Add sub-commands to the ``a2a`` command line: ``commands.add_parser("mcp", ...)``.

    Called when ``a2a`` runs a command that is not built in (or prints its
    overall help), so a package's command exists only while the package is
    installed and built-in commands never pay for loading plugins. Each
    parser sets ``run``: ``parser.set_defaults(run=handler)``, where
    ``async def handler(args) -> int`` returns the exit status. A plugin
    adding a name that is already taken is a ``PluginError``.
    """
