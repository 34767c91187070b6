"""Finding the object ``a2a serve TARGET`` names: ``module:attribute`` or ``file.py:attribute``.

Like uvicorn's ``module:app``, the current directory is importable, so
``a2a serve agent:agent`` works from the folder holding ``agent.py``. A
file path is imported as a module named after the file, with its folder
on ``sys.path`` so that it can import its neighbours. Every failure is a
``UsageError`` with one line saying what to fix.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TypeGuard

from .common import UsageError

__all__ = ["is_url", "load_target"]

_FORM = "module:attribute, path/to/file.py:attribute or an http(s):// URL"


def is_url(target: str) -> bool:
    """Whether ``target`` names a remote agent rather than a local object."""
    return target.startswith(("http://", "https://"))


def load_target(target: str) -> object:
    """The object ``target`` names (an AgentExecutor class, or ``EchoAgent``, is instantiated)."""
    where, sep, attribute = target.rpartition(":")
    if not sep or not where or not attribute:
        raise UsageError(f"TARGET must be {_FORM}, not {target!r}")
    if where.endswith(".py") or "/" in where or os.sep in where:
        module = _load_file(Path(where))
    else:
        module = _import(where)
    value: object = module
    path = module.__name__
    for name in attribute.split("."):
        if not name.isidentifier():
            raise UsageError(f"{attribute!r} is not an attribute name (TARGET is {_FORM})")
        try:
            value = getattr(value, name)
        except AttributeError:
            raise UsageError(f"{path} has no attribute {name!r} (from TARGET {target!r})") from None
        path = f"{path}.{name}"
    return _instantiate(value, path)


def _import(name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise UsageError(
                f"cannot import {name!r}: no module named {exc.name!r} "
                "(run a2a from the folder that holds it, or give path/to/file.py:attribute)"
            ) from None
        raise UsageError(f"importing {name!r} failed: {_describe(exc)}", cause=exc) from None
    except (Exception, SystemExit) as exc:
        raise UsageError(f"importing {name!r} failed: {_describe(exc)}", cause=exc) from None


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"no such file: {str(path)!r}")
    resolved = path.resolve()
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = resolved.stem
    if not name.isidentifier() or name in sys.modules:
        name = "_a2a_target_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses, pickling and typing look modules up by name
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise UsageError(f"importing {str(path)!r} failed: {_describe(exc)}", cause=exc) from None
    return module


def _instantiate(value: object, path: str) -> object:
    from .._builtins.echo import EchoAgent
    from ..server.executor import AgentExecutor

    def is_executor_class(candidate: object) -> TypeGuard[type[AgentExecutor]]:
        return isinstance(candidate, type) and issubclass(candidate, AgentExecutor)

    if value is EchoAgent:
        return EchoAgent()  # ``a2a serve a2a_core:EchoAgent``: the built-in agent, no file needed
    if is_executor_class(value):
        try:
            return value()
        except Exception as exc:
            raise UsageError(
                f"{path} is an AgentExecutor class and creating one without arguments "
                f"failed: {_describe(exc)} (serve an instance instead)",
                cause=exc,
            ) from None
    return value


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
