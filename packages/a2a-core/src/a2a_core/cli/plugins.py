"""``a2a plugins``: which plugins are loaded, where they come from, and the hooks they implement.

The same discovery ``a2a serve`` uses (entry-point group ``a2a_core``, with
``A2A_DISABLE_PLUGIN_AUTOLOAD`` and ``A2A_PLUGINS`` applied), so what is
listed here is what a server started from this environment would load.
Installed entry points the environment leaves out are listed as not loaded.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .common import ExitCode

if TYPE_CHECKING:
    from ..hookspecs import CommandParsers

__all__ = ["PluginRow", "add_parser", "plugin_rows", "run"]

EXAMPLES = """\
examples:
  a2a plugins
  a2a plugins --json | jq -r 'select(.loaded) | .name'
  A2A_PLUGINS=langchain a2a plugins          # what an allowlist leaves loaded
  A2A_TRACE_HOOKS=1 a2a serve agent.py:agent # trace every hook call to stderr
"""


def add_parser(commands: CommandParsers) -> None:
    parser = commands.add_parser(
        "plugins",
        help="list the installed plugins, their entry points and the hooks they implement",
        description=(
            "List the a2a_core plugins this environment loads (built-in and third-party), "
            "their entry points and hooks, and the installed ones it leaves out."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per plugin (one per line)"
    )
    parser.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class PluginRow:
    """One plugin as ``a2a plugins`` shows it."""

    name: str
    loaded: bool
    builtin: bool
    hooks: tuple[str, ...]
    entry_point: str | None
    """``module`` or ``module:attribute`` of its ``a2a_core`` entry point (None: registered
    directly)."""
    distribution: str | None
    version: str | None

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "loaded": self.loaded,
            "builtin": self.builtin,
            "hooks": list(self.hooks),
            "entryPoint": self.entry_point,
            "distribution": self.distribution,
            "version": self.version,
        }


def plugin_rows() -> list[PluginRow]:
    """Loaded plugins in registration order, then installed entry points left out."""
    from importlib import metadata

    from ..hookspecs import PROJECT
    from ..plugins import describe_plugins, get_plugin_manager

    pm = get_plugin_manager()
    points = {ep.name: ep for ep in metadata.entry_points(group=PROJECT)}
    rows: list[PluginRow] = []
    for info in describe_plugins(pm):
        ep = points.get(info.name)
        rows.append(
            PluginRow(
                info.name,
                True,
                info.builtin,
                info.hooks,
                ep.value if ep is not None else None,
                info.distribution,
                info.version,
            )
        )
    for name, ep in sorted(points.items()):
        if pm.is_blocked(name):
            dist = ep.dist
            rows.append(
                PluginRow(
                    name,
                    False,
                    False,
                    (),
                    ep.value,
                    dist.name if dist is not None else None,
                    dist.version if dist is not None else None,
                )
            )
    return rows


async def run(args: argparse.Namespace) -> int:
    from ..plugins import DISABLE_AUTOLOAD_ENV, PLUGINS_ENV
    from .render import Console, json_line

    console = Console()
    rows = plugin_rows()
    if args.json:
        for row in rows:
            console.line(json_line(row.as_json()))
        return ExitCode.OK
    for row in rows:
        origin = ", ".join(
            part
            for part in (
                "built in" if row.builtin else "",
                " ".join(p for p in (row.distribution, row.version) if p),
            )
            if part
        )
        title = console.bold(row.name) + (f" ({origin})" if origin else "")
        if not row.loaded:
            title += console.dim(f" - not loaded ({PLUGINS_ENV} or {DISABLE_AUTOLOAD_ENV})")
        console.line(title)
        if row.entry_point:
            console.line(f"  entry point: {row.entry_point}")
        if row.loaded:
            console.line(f"  hooks: {', '.join(row.hooks) or '(none)'}")
    if not rows:
        console.line("No plugins.")
    return ExitCode.OK
