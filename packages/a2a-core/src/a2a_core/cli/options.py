"""``a2a serve -o NAME=VALUE``: adapter options from the command line, checked by name.

Values are JSON when they parse as JSON (``stream=false``, ``max_parallel=2``,
``skills=[...]``) and strings otherwise (``input_key=question``). They reach the
adapter the way ``serve(obj, **options)`` options do, through the
``a2a_adapt_agent(agent, options)`` hook (or ``--adapter NAME``). The valid
names are the adapter's real ones: the keyword parameters of the executor class
the adapter built (``LangChainAgent``, ``CrewAgent``...), so a misspelt name is
refused with the list instead of being ignored.
"""

from __future__ import annotations

import argparse
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .common import UsageError

if TYPE_CHECKING:
    from ..adapters import ResolvedAgent

__all__ = ["accepted_options", "check_adapter_options", "parse_option"]


def parse_option(text: str) -> tuple[str, Any]:
    """``"NAME=VALUE"`` -> (name, value): VALUE as JSON when it parses, else the string."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"-o expects NAME=VALUE, not {text!r}")
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return name, value


def accepted_options(executor_class: type) -> tuple[str, ...] | None:
    """The keyword options of ``executor_class(agent, ...)``; None when it takes ``**kwargs``.

    The first positional parameter is the wrapped object, not an option.
    """
    try:
        signature = inspect.signature(executor_class.__init__)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return None
    names: list[str] = []
    positional = 0
    for parameter in list(signature.parameters.values())[1:]:  # self
        kind = parameter.kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            positional += 1
            continue
        if kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and positional == 0:
            positional += 1  # the agent object itself
            continue
        names.append(parameter.name)
    return tuple(sorted(names))


def check_adapter_options(resolved: ResolvedAgent, given: Mapping[str, Any]) -> None:
    """Refuse (``UsageError``, exit 2) ``-o`` names the adapter that served the object lacks."""
    if not given:
        return
    executor_class = type(resolved.executor)
    if resolved.adapter is None:
        raise UsageError(
            f"-o {_names(given)}: options are for framework adapters, and this "
            f"{executor_class.__name__} is served without one (configure it in Python instead)"
        )
    valid = accepted_options(executor_class)
    if valid is None:
        return
    unknown = sorted(set(given) - set(valid))
    if unknown:
        from ..server.options import closest  # not on the CLI's import path

        hinted = [
            f"{name} (did you mean {hint!r}?)" if (hint := closest(name, valid)) else name
            for name in unknown
        ]
        raise UsageError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(hinted)} for the "
            f"{resolved.adapter} adapter ({executor_class.__name__}); valid options: "
            f"{', '.join(valid) or 'none'}"
        )


def _names(names: Mapping[str, Any] | Sequence[str]) -> str:
    return ", ".join(sorted(names))
