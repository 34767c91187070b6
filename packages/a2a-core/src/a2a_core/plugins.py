"""The plugin manager: discovery, safety checks and typed calls of the a2a_core hooks.

``get_plugin_manager()`` builds the manager on first use (never at import):
the hook specs, then the core's own built-in plugins, then third-party
plugins, all found through the ``a2a_core`` entry-point group, then
``check_pending()`` (a typo in a hook name is an error). Environment:

- ``A2A_DISABLE_PLUGIN_AUTOLOAD=1``: load no third-party plugin (built-ins still load);
- ``A2A_PLUGINS=name1,name2``: load only these third-party entry points;
- ``A2A_TRACE_HOOKS=1``: write every hook call (plugin, arguments, result) to stderr,
  through pluggy's tracer (``A2APluginManager.trace_hooks``).

Hooks are called here, at configuration time, one implementation at a time so
that a failure names its plugin (``PluginError``). What requests need is
composed once into plain callables: ``transition_observer`` (one
``TaskObserver``), ``auth.compose_authenticator`` (one ``authenticate``).
``compose.builder`` ties it all together into a service and an app.

A plugin that reads server options (``serve(agent, my_option=...)``) lists
their names in an ``A2A_OPTIONS`` attribute (``declared_options``): other
names are refused as typos.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar, cast

import pluggy

from . import hookspecs
from .errors import ConfigurationError
from .hookspecs import PROJECT, hookimpl
from .types import AgentCard, StreamEvent, Task, TaskState

if TYPE_CHECKING:
    from .server.observers import TaskObserver

__all__ = [
    "DISABLE_AUTOLOAD_ENV",
    "PLUGINS_ENV",
    "TRACE_HOOKS_ENV",
    "A2APluginManager",
    "PluginError",
    "PluginInfo",
    "Registration",
    "apply_card_hooks",
    "call_hook_impl",
    "collect_registrations",
    "create_plugin_manager",
    "declared_options",
    "describe_plugins",
    "get_plugin_manager",
    "hook_impls",
    "hookimpl",
    "plugin_lifespan",
    "reset_plugin_manager",
    "transition_observer",
]

logger = logging.getLogger("a2a_core.plugins")

DISABLE_AUTOLOAD_ENV = "A2A_DISABLE_PLUGIN_AUTOLOAD"
"""Set to 1/true/yes/on to load no third-party plugin (built-ins still load)."""
PLUGINS_ENV = "A2A_PLUGINS"
"""Comma-separated allowlist of third-party entry-point names (empty: none)."""
TRACE_HOOKS_ENV = "A2A_TRACE_HOOKS"
"""Set to 1/true/yes/on to trace every hook call to stderr (debugging plugins)."""

_CORE_DISTRIBUTION = "a2a-adapters-core"
_BUILTIN_MODULE_PREFIX = "a2a_core._builtins"
_TRUE = frozenset({"1", "true", "yes", "on"})

T = TypeVar("T")


class PluginError(ConfigurationError):
    """A plugin failed to load, is invalid, or failed in a hook at configuration time.

    ``plugin`` names the culprit (the entry-point or registration name) and
    ``hook`` the hook it failed in, when known.
    """

    def __init__(self, message: str, *, plugin: str | None = None, hook: str | None = None):
        super().__init__(message)
        self.plugin = plugin
        self.hook = hook


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One registered plugin, for listings (``a2a plugins``) and diagnostics."""

    name: str
    hooks: tuple[str, ...]
    builtin: bool
    distribution: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class _Origin:
    distribution: str | None
    version: str | None
    builtin: bool


class A2APluginManager(pluggy.PluginManager):
    """A pluggy manager for the ``a2a_core`` hooks that refuses unsafe implementations.

    Registration fails with a ``PluginError`` naming the plugin when an
    implementation is ``async def`` (hooks are synchronous; on a firstresult
    hook a coroutine would even count as the answer) or a hook wrapper (each
    implementation is called on its own, so wrappers have nothing to wrap).
    """

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        self._origins: dict[str, _Origin] = {}
        self._hook_trace: Any = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        label = name or self.get_canonical_name(plugin)
        try:
            registered = super().register(plugin, name)
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"a2a plugin {label!r} is invalid: {exc}", plugin=label) from exc
        if registered is None:  # blocked
            return None
        problem = self._impl_problem(plugin, registered)
        if problem is not None:
            self.unregister(plugin)
            raise problem
        if self._hook_trace is not None:
            self._trace_impls(plugin)
        return registered

    def trace_hooks(self, write: Callable[[str], object] | None = None) -> None:
        """Trace every hook call from now on, to ``write`` (default: stderr).

        Uses pluggy's tracer (``pm.trace.root.setwriter`` and ``enable_tracing``,
        for hooks called through ``pm.hook``); since a2a_core calls each
        implementation on its own, each implementation is traced too, with its
        plugin's name. Option values whose names look secret are redacted.
        """
        if self._hook_trace is not None:
            return
        self.trace.root.setwriter(write if write is not None else _write_stderr)
        self.enable_tracing()
        self._hook_trace = self.trace.root.get("hook")
        for _, plugin in self.list_name_plugin():
            if plugin is not None:
                self._trace_impls(plugin)

    def _trace_impls(self, plugin: object) -> None:
        trace = self._hook_trace
        for caller in self.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    # pluggy types HookImpl.function Final; replacing it is how each
                    # implementation (called on its own, not through pm.hook) gets traced.
                    traced = _traced(
                        trace, caller.name, impl.plugin_name, impl.argnames, impl.function
                    )
                    setattr(impl, "function", traced)  # noqa: B010

    def _impl_problem(self, plugin: object, name: str) -> PluginError | None:
        for caller in self.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                function = impl.function
                if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function):
                    firstresult = caller.spec is not None and caller.spec.opts.get("firstresult")
                    why = (
                        f"{caller.name} is a firstresult hook: a coroutine would count as "
                        "the first answer even when it means 'not mine'"
                        if firstresult
                        else "a2a_core hooks are synchronous and run at configuration time"
                    )
                    return PluginError(
                        f"a2a plugin {name!r}: {caller.name} must be a plain `def`, "
                        f"not `async def` ({why}); return async objects instead",
                        plugin=name,
                        hook=caller.name,
                    )
                if impl.wrapper or impl.hookwrapper:
                    return PluginError(
                        f"a2a plugin {name!r}: {caller.name} may not be a hook wrapper "
                        "(a2a_core calls each implementation on its own; use tryfirst/trylast "
                        "to order them)",
                        plugin=name,
                        hook=caller.name,
                    )
        return None

    def check_pending(self) -> None:
        """Like pluggy's, but the error is a ``PluginError`` naming the plugin."""
        try:
            super().check_pending()
        except pluggy.PluginValidationError as exc:
            name = self.get_name(exc.plugin) or repr(exc.plugin)
            raise PluginError(
                f"a2a plugin {name!r}: {exc} (a misspelt hook name? hooks are listed in "
                "a2a_core.hookspecs)",
                plugin=name,
            ) from exc

    def load_plugins(self, environ: Mapping[str, str] | None = None) -> None:
        """Load the built-in plugins, then the third-party ones the environment allows.

        Built-ins are registered first, so third-party implementations are
        called before them; third-party plugins load in entry-point name order.
        Entry points left out by the environment are blocked (``is_blocked``).
        """
        env = os.environ if environ is None else environ
        points = sorted(metadata.entry_points(group=PROJECT), key=lambda ep: ep.name)
        builtins = [ep for ep in points if _is_builtin(ep)]
        builtin_names = {ep.name for ep in builtins}
        third_party = [ep for ep in points if ep.name not in builtin_names]
        selected = _select(third_party, builtin_names, env)
        for ep in third_party:
            if ep.name not in selected:
                self.set_blocked(ep.name)
        for ep in [*builtins, *(ep for ep in third_party if ep.name in selected)]:
            self._load_entry_point(ep, builtin=ep.name in builtin_names)

    def _load_entry_point(self, ep: metadata.EntryPoint, *, builtin: bool) -> None:
        dist = ep.dist
        dist_name = dist.name if dist is not None else None
        try:
            loaded = self.load_setuptools_entrypoints(PROJECT, name=ep.name)
        except PluginError:
            raise
        except Exception as exc:
            where = f" from {dist_name}" if dist_name else ""
            raise PluginError(
                f"a2a plugin {ep.name!r} ({ep.value}{where}) failed to load: "
                f"{type(exc).__name__}: {exc}",
                plugin=ep.name,
            ) from exc
        if loaded:
            version = dist.version if dist is not None else None
            self._origins[ep.name] = _Origin(dist_name, version, builtin)

    def origin(self, name: str) -> tuple[str | None, str | None, bool]:
        """(distribution, version, builtin) of a plugin loaded from an entry point."""
        found = self._origins.get(name)
        if found is None:
            return (None, None, False)
        return (found.distribution, found.version, found.builtin)


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


_SECRET_WORDS = ("token", "secret", "password", "key", "credential")


def _redacted(value: object) -> object:
    if isinstance(value, Mapping):
        items = cast(Mapping[object, object], value).items()
        return {
            k: "***" if any(w in str(k).lower() for w in _SECRET_WORDS) else v for k, v in items
        }
    return value


def _traced(
    trace: Any,
    hook_name: str,
    plugin: str,
    argnames: Sequence[str],
    function: Callable[..., object],
) -> Callable[..., object]:
    """``function`` writing its call and result to pluggy's hook tracer."""

    @functools.wraps(function)
    def call(*args: object) -> object:
        trace.root.indent += 1
        try:
            trace(
                f"{hook_name} -> {plugin}",
                {n: _redacted(v) for n, v in zip(argnames, args, strict=False)},
            )
            result = function(*args)
            trace("finish", hook_name, plugin, "-->", result)
            return result
        except BaseException as exc:
            trace("failed", hook_name, plugin, "-->", repr(exc))
            raise
        finally:
            trace.root.indent -= 1

    return call


def _is_builtin(ep: metadata.EntryPoint) -> bool:
    dist = ep.dist
    if dist is not None and _normalize(dist.name) == _CORE_DISTRIBUTION:
        return True
    return ep.value.startswith(_BUILTIN_MODULE_PREFIX)


def _normalize(dist_name: str) -> str:
    return dist_name.lower().replace("_", "-").replace(".", "-")


def _select(
    third_party: Sequence[metadata.EntryPoint], builtin_names: set[str], env: Mapping[str, str]
) -> set[str]:
    if env.get(DISABLE_AUTOLOAD_ENV, "").strip().lower() in _TRUE:
        return set()
    names = {ep.name for ep in third_party}
    raw = env.get(PLUGINS_ENV)
    if raw is None:
        return names
    wanted = {part.strip() for part in raw.split(",") if part.strip()}
    unknown = wanted - names - builtin_names
    if unknown:
        raise PluginError(
            f"{PLUGINS_ENV} names plugins that are not installed: {', '.join(sorted(unknown))} "
            f"(installed: {', '.join(sorted(names)) or 'none'})",
            plugin=sorted(unknown)[0],
        )
    return wanted & names


def create_plugin_manager(
    environ: Mapping[str, str] | None = None, *, entry_points: bool = True
) -> A2APluginManager:
    """A new, uncached manager (tests, embedding); ``entry_points=False`` gives specs only."""
    pm = A2APluginManager()
    env = os.environ if environ is None else environ
    if env.get(TRACE_HOOKS_ENV, "").strip().lower() in _TRUE:
        pm.trace_hooks()
    if entry_points:
        pm.load_plugins(environ)
        pm.check_pending()
    return pm


_lock = threading.Lock()
_manager: A2APluginManager | None = None


def get_plugin_manager() -> A2APluginManager:
    """The process's plugin manager, built on first call from the environment, then cached."""
    global _manager
    with _lock:
        if _manager is None:
            _manager = create_plugin_manager()
        return _manager


def reset_plugin_manager() -> None:
    """Forget the cached manager (tests; after changing the environment)."""
    global _manager
    with _lock:
        _manager = None


def describe_plugins(pm: pluggy.PluginManager | None = None) -> list[PluginInfo]:
    """Every registered plugin with its hooks, in registration order."""
    manager = pm if pm is not None else get_plugin_manager()
    infos: list[PluginInfo] = []
    for name, plugin in manager.list_name_plugin():
        if plugin is None:  # blocked
            continue
        hooks = tuple(sorted(c.name for c in manager.get_hookcallers(plugin) or ()))
        dist, version, builtin = (
            manager.origin(name) if isinstance(manager, A2APluginManager) else (None, None, False)
        )
        infos.append(PluginInfo(name, hooks, builtin, dist, version))
    return infos


def declared_options(pm: pluggy.PluginManager | None = None) -> dict[str, str]:
    """Server option names the loaded plugins read (their ``A2A_OPTIONS``), each to its plugin.

    ``A2A_OPTIONS`` is a plain attribute of the plugin (module or object): a
    collection of option names.
    """
    manager = pm if pm is not None else get_plugin_manager()
    found: dict[str, str] = {}
    for name, plugin in manager.list_name_plugin():
        names: object = getattr(plugin, "A2A_OPTIONS", None) if plugin is not None else None
        if names is None:
            continue
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise PluginError(
                f"a2a plugin {name!r}: A2A_OPTIONS must be a collection of option names",
                plugin=name,
            )
        for option in cast(Iterable[object], names):
            found.setdefault(str(option), name)
    return found


# -- calling hooks one implementation at a time ---------------------------------------


def hook_impls(pm: pluggy.PluginManager, hook_name: str) -> list[pluggy.HookImpl]:
    """A hook's implementations in pluggy's call order (tryfirst, then newest first)."""
    caller = cast(pluggy.HookCaller, getattr(pm.hook, hook_name))
    return list(reversed(caller.get_hookimpls()))


def call_hook_impl(impl: pluggy.HookImpl, hook_name: str, kwargs: Mapping[str, object]) -> object:
    """Call one implementation; any exception becomes a ``PluginError`` naming its plugin."""
    try:
        return impl.function(*(kwargs[arg] for arg in impl.argnames))
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(
            f"a2a plugin {impl.plugin_name!r} failed in {hook_name}: {type(exc).__name__}: {exc}",
            plugin=impl.plugin_name,
            hook=hook_name,
        ) from exc


@dataclass(frozen=True, slots=True)
class Registration(Generic[T]):
    """Something a plugin registered under a name, and which plugin did."""

    name: str
    value: T
    plugin: str


class _Registrar(Generic[T]):
    """The ``register`` callback handed to one plugin's ``register``-style hook."""

    def __init__(
        self,
        found: dict[str, Registration[T]],
        plugin: str,
        hook_name: str,
        what: str,
        accept: Callable[[object], TypeGuard[T]],
        expected: str,
    ) -> None:
        self.found = found
        self.plugin = plugin
        self.hook_name = hook_name
        self.what = what
        self.accept = accept
        self.expected = expected
        self.closed = False

    def _error(self, message: str) -> PluginError:
        return PluginError(message, plugin=self.plugin, hook=self.hook_name)

    def __call__(self, name: str, value: object, /) -> None:
        plugin, what = self.plugin, self.what
        if self.closed:
            raise self._error(
                f"a2a plugin {plugin!r} called register after {self.hook_name} returned"
            )
        if not isinstance(name, str) or not name.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise self._error(f"a2a plugin {plugin!r} registered an unnamed {what} ({name!r})")
        if not self.accept(value):
            raise self._error(
                f"a2a plugin {plugin!r} registered {what} {name!r} as "
                f"{type(value).__name__}; expected {self.expected}"
            )
        key = name.strip().lower()
        previous = self.found.get(key)
        if previous is not None:
            raise self._error(
                f"{what} {key!r} is registered by both {previous.plugin!r} and {plugin!r}"
            )
        self.found[key] = Registration(key, value, plugin)


def collect_registrations(
    pm: pluggy.PluginManager,
    hook_name: str,
    what: str,
    accept: Callable[[object], TypeGuard[T]],
    expected: str,
) -> dict[str, Registration[T]]:
    """Call a ``register``-style hook and collect ``name -> value`` (names are case-folded).

    A bad name, a value ``accept`` refuses, or a name registered twice is a
    ``PluginError`` naming the plugin(s); ``expected`` describes a good value.
    """
    found: dict[str, Registration[T]] = {}
    for impl in hook_impls(pm, hook_name):
        register = _Registrar(found, impl.plugin_name, hook_name, what, accept, expected)
        try:
            call_hook_impl(impl, hook_name, {"register": register})
        finally:
            register.closed = True
    return found


def apply_card_hooks(
    pm: pluggy.PluginManager, card: AgentCard, options: Mapping[str, Any]
) -> AgentCard:
    """Run ``a2a_agent_card`` over a copy of ``card``; each plugin sees the previous one's card."""
    current = card.model_copy(deep=True)
    for impl in hook_impls(pm, "a2a_agent_card"):
        result = call_hook_impl(impl, "a2a_agent_card", {"card": current, "options": options})
        if result is None:
            continue
        if not isinstance(result, AgentCard):
            raise PluginError(
                f"a2a plugin {impl.plugin_name!r}: a2a_agent_card returned "
                f"{type(result).__name__}; expected an AgentCard or None",
                plugin=impl.plugin_name,
                hook="a2a_agent_card",
            )
        current = result
    return current


def plugin_lifespan(pm: pluggy.PluginManager, app: Any) -> AbstractAsyncContextManager[None]:
    """One async context manager running every plugin's ``a2a_lifespan`` (exits in reverse)."""
    return _lifespan(pm, app)


@asynccontextmanager
async def _lifespan(pm: pluggy.PluginManager, app: Any) -> AsyncGenerator[None, None]:
    async with AsyncExitStack() as stack:
        for impl in hook_impls(pm, "a2a_lifespan"):
            manager = call_hook_impl(impl, "a2a_lifespan", {"app": app})
            if manager is None:
                continue
            if not (hasattr(manager, "__aenter__") and hasattr(manager, "__aexit__")):
                raise PluginError(
                    f"a2a plugin {impl.plugin_name!r}: a2a_lifespan returned "
                    f"{type(manager).__name__}; expected an async context manager or None",
                    plugin=impl.plugin_name,
                    hook="a2a_lifespan",
                )
            try:
                await stack.enter_async_context(cast(AbstractAsyncContextManager[object], manager))
            except Exception as exc:
                raise PluginError(
                    f"a2a plugin {impl.plugin_name!r} failed starting its lifespan: "
                    f"{type(exc).__name__}: {exc}",
                    plugin=impl.plugin_name,
                    hook="a2a_lifespan",
                ) from exc
        yield


def transition_observer(pm: pluggy.PluginManager) -> TaskObserver | None:
    """Every ``a2a_task_transition`` composed into one ``TaskObserver`` (None: no plugin).

    The implementations are gathered now, once; the observer only calls them
    when the task's state actually changed (and says so: ``transitions_only``,
    so streamed chunks do not build the task for it). A failing plugin is
    logged and does not stop the others.
    """
    targets = [
        (impl.plugin_name, impl.function, tuple(impl.argnames))
        for impl in hook_impls(pm, "a2a_task_transition")
    ]
    if not targets:
        return None
    return _TransitionObserver(targets)


class _TransitionObserver:
    """The plugins' ``a2a_task_transition`` implementations, called on state changes."""

    transitions_only = True

    def __init__(self, targets: list[tuple[str, Callable[..., object], tuple[str, ...]]]) -> None:
        self._targets = targets

    def __call__(self, task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        new = task.status.state
        if previous == new:
            return
        values: dict[str, object] = {"task": task, "old": previous, "new": new}
        for plugin, function, argnames in self._targets:
            try:
                function(*(values[arg] for arg in argnames))
            except Exception:
                logger.exception("a2a plugin %r failed in a2a_task_transition", plugin)
