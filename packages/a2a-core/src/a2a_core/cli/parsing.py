"""What the ``a2a`` command line needs from ``argparse``, named with public types.

``argparse`` keeps the types of its sub-command table and argument groups,
and the list of a parser's options, private. The commands need them: each
adds its parser to the table, and ``a2a serve`` reads its options from files
and the environment too. So they are named here once: a protocol for what
options are added to (the sub-commands table is ``hookspecs.CommandParsers``,
which plugins use as well), and a parser class that lists its options.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol

__all__ = [
    "ArgumentAdder",
    "CommandLineParser",
    "accumulates",
    "options_of",
    "prints_help",
]


class ArgumentAdder(Protocol):
    """A parser or an argument group: what options are added to."""

    def add_argument(self, *name_or_flags: str, **kwargs: Any) -> argparse.Action:
        """Add one option (as ``ArgumentParser.add_argument``)."""
        ...


class CommandLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that lists its options (give it as a command's parent:
    ``commands.add_parser(name, parents=[options])`` shares the same option objects)."""

    @property
    def actions(self) -> tuple[argparse.Action, ...]:
        """Every option and positional argument, in the order they were added."""
        return tuple(self._actions)


def options_of(parser: argparse.ArgumentParser) -> tuple[argparse.Action, ...]:
    """``parser``'s options; it must be a ``CommandLineParser``."""
    if not isinstance(parser, CommandLineParser):
        raise TypeError(f"expected a CommandLineParser, got {type(parser).__name__}")
    return parser.actions


def _action_class(action: str) -> type[argparse.Action]:
    """The class ``argparse`` makes for ``action=...``, found through the public API."""
    return type(argparse.ArgumentParser(add_help=False).add_argument("-x", action=action))


_APPEND = _action_class("append")
_HELP = _action_class("help")


def accumulates(action: argparse.Action) -> bool:
    """Whether the option collects each use into a list (``action="append"``)."""
    return isinstance(action, _APPEND)


def prints_help(action: argparse.Action) -> bool:
    """Whether the option is ``-h/--help``."""
    return isinstance(action, _HELP)
