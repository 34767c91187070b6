"""Import httpx without its command-line module, which ``a2a`` never uses.

Only the ``a2a`` command calls this, at its start: it owns its process, and a
library must leave ``sys.meta_path`` alone (importing ``a2a_core.client`` does).

``import httpx`` ends with ``from ._main import main``: httpx's command-line
tool, which imports click, and rich and pygments when installed (a large
share of the client's import). ``skip_httpx_cli`` adds an import
finder that answers that one import, made while httpx itself is being
imported, with a stand-in. When httpx takes ``main`` from it, the stand-in
steps aside (a later ``import httpx._main`` loads the real module) and hands
over a ``main`` that loads the real one when called, so ``httpx.main()``
still works; any other name asked of it loads the real module. The finder
then leaves ``sys.meta_path``. Nothing happens when httpx is already
imported.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast

__all__ = ["skip_httpx_cli"]

_NAME = "httpx._main"


def _real_main(*args: Any, **kwargs: Any) -> Any:
    """httpx's command-line entry point, loaded on the call."""
    from httpx._main import main

    return main(*args, **kwargs)


class _StandIn(ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # the import system probing (``__path__``)
        if sys.modules.get(_NAME) is self:
            del sys.modules[_NAME]
        parent = sys.modules.get("httpx")
        if parent is not None and parent.__dict__.get("_main") is self:
            del parent.__dict__["_main"]
        for finder in [f for f in sys.meta_path if isinstance(f, _Finder)]:
            sys.meta_path.remove(finder)  # its one import is done
        if name == "main":
            return _real_main
        import importlib

        return getattr(importlib.import_module(_NAME), name)


def _initializing(name: str) -> bool:
    module = sys.modules.get(name)
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


class _Finder:
    """Serves the stand-in for ``httpx._main`` while httpx itself is being imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        # Never leaves sys.meta_path from here: the import system is iterating over it.
        if name != _NAME or not _initializing("httpx"):
            return None
        return ModuleSpec(name, cast(Any, self))  # its own loader

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return _StandIn(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        pass


def skip_httpx_cli() -> None:
    """Let the first import of httpx skip ``httpx._main`` (see the module docstring)."""
    if "httpx" in sys.modules or any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
