"""The ``mcp`` plugin: adds ``a2a mcp`` and lets ``a2a serve`` serve an MCP server.

Registered under the ``a2a_core`` entry-point group; nothing heavy is
imported until a hook is called for something this package serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a_core.hookspecs import hookimpl

__all__ = ["a2a_adapt_agent", "a2a_cli_commands"]


@hookimpl
def a2a_cli_commands(commands: Any) -> None:
    from .cli import add_parser

    add_parser(commands)


@hookimpl
def a2a_adapt_agent(agent: Any, options: Mapping[str, Any]) -> Any:
    kind = type(agent)
    if kind.__module__.partition(".")[0] == "a2a_mcp" and kind.__name__ == "MCPServer":
        return agent.resolved()
    return None
