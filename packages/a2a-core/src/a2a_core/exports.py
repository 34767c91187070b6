"""The public modules of the packages, and the rule that gives their names public paths.

A class or function is documented, and shown in reprs, ``help()`` and pickles, under the
public module that exports it (``a2a_core.types.Message``), never under the private or
internal module that defines it (``a2a_core.types._messages``). Each public package calls
``publish`` on what it exports; the API reference has one page per module in
``PUBLIC_MODULES`` (tools/docs_hooks.py), and tests/test_public_api.py checks both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import FunctionType
from typing import Any

__all__ = ["INTERNAL_MODULES", "PUBLIC_MODULES", "lazy_exports", "publish"]

PUBLIC_MODULES: tuple[str, ...] = (
    "a2a_core",
    "a2a_core.types",
    "a2a_core.errors",
    "a2a_core.card",
    "a2a_core.files",
    "a2a_core.net",
    "a2a_core.client",
    "a2a_core.client.transports",
    "a2a_core.client.files",
    "a2a_core.client.session",
    "a2a_core.contracts",
    "a2a_core.server",
    "a2a_core.server.named_inputs",
    "a2a_core.server.asgi",
    "a2a_core.server.push",
    "a2a_core.compose.builder",
    "a2a_core.compose.serve",
    "a2a_core.stores",
    "a2a_core.stores.sqlite",
    "a2a_core.stores.redis",
    "a2a_core.stores.postgres",
    "a2a_core.stores.cluster",
    "a2a_core.wire",
    "a2a_core.bindings",
    "a2a_core.grpc",
    "a2a_core.identity",
    "a2a_core.telemetry",
    "a2a_core.auth",
    "a2a_core.oidc",
    "a2a_core.mtls",
    "a2a_core.signing",
    "a2a_core.webhooks",
    "a2a_core.adapters",
    "a2a_core.hookspecs",
    "a2a_core.store_registry",
    "a2a_core.plugins",
    "a2a_core.exports",
    "a2a_core.cli",
    "a2a_core.testing",
    "a2a_langchain",
    "a2a_crewai",
    "a2a_crewai.testing",
    "a2a_mcp",
)
"""Every module whose ``__all__`` is public API, in the order the reference lists them."""

INTERNAL_MODULES: tuple[str, ...] = (
    "a2a_core.compose",
    "a2a_langchain.agent",
    "a2a_langchain.plugin",
    "a2a_langchain.runnable",
    "a2a_langchain.serving",
    "a2a_langchain.tools",
    "a2a_langchain.tracing",
    "a2a_crewai.executor",
    "a2a_crewai.member",
    "a2a_crewai.plugin",
    "a2a_crewai.serving",
    "a2a_crewai.tools",
    "a2a_crewai.tracing",
    "a2a_mcp.agents",
    "a2a_mcp.bridge",
    "a2a_mcp.calls",
    "a2a_mcp.cli",
    "a2a_mcp.content",
    "a2a_mcp.plugin",
    "a2a_mcp.server_agent",
    "a2a_mcp.tooldefs",
)
"""Packages and top-level modules that are implementation: their package exports what counts.

Every package, and every module at a package's top level, is in one of the two lists
(tests/test_public_api.py checks it), so a new one is placed on purpose.
"""

_PUBLIC = frozenset(PUBLIC_MODULES)


def publish(package: str, values: Iterable[object]) -> None:
    """Give each class and function defined inside ``package`` the package's public path.

    Only objects from a module below ``package`` that is not itself public are renamed, so
    a subpackage's own public path (``a2a_core.client.transports``) is kept. Call it once
    the objects are fully built: pydantic resolves deferred annotations by module name.
    """
    prefix = package + "."
    for value in values:
        if not isinstance(value, type | FunctionType):
            continue
        module = value.__module__
        if module.startswith(prefix) and module not in _PUBLIC:
            value.__module__ = package


def lazy_exports(
    package: str,
    table: Mapping[str, Iterable[str]],
    prepare: Callable[[str], object] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` that load each name on first use.

    ``table`` is the package's export table: each module defining public names (relative
    to ``package``; ``"."`` for names the package defines itself) and those names.
    The first access imports the name's module (after ``prepare(module)``, when given),
    publishes the value under ``package`` and caches it in the package's namespace, so
    later lookups never come back here. A package pays for its heavy modules (httpx,
    the pydantic models) only when a name that needs them is asked for.
    """
    origin = {name: module for module, names in table.items() if module != "." for name in names}
    names = frozenset(name for group in table.values() for name in group)

    def __getattr__(name: str) -> Any:
        module = origin.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib
        import sys

        if prepare is not None:
            prepare(module)
        value = getattr(importlib.import_module(module, package), name)
        publish(package, [value])
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        import sys

        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
