"""Layers that point one way: no import cycle between the units of a2a_core, in a stated order.

A *unit* is a subpackage (its ``__init__`` and the modules directly in it, not its own
subpackages: ``a2a_core.server``, ``a2a_core.server.asgi``, ``a2a_core.server.push`` are
three units) or a module at the top of ``a2a_core`` (``a2a_core.errors``). The graph is
read from the source with ``ast`` and is stricter than ``test_import_graph.py``'s:

- every import counts: at module level, inside a function, and under
  ``if TYPE_CHECKING:`` too (a type named across a layer is a dependency on it, even
  if it never runs);
- relative imports are resolved; importing ``a.b.c`` also runs ``a/__init__`` and
  ``a/b/__init__``, so it is an edge to those packages too, except to the importer's own
  ancestors (a package re-exporting its own modules is not a cycle);
- ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.

The root package ``a2a_core`` (the facade re-exporting the public API) is the top of
the library: only the command line, an application on it, imports it. The picture is in
docs/architecture.md.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from import_graph_support import ROOT, cycles, modules

PACKAGE = "a2a_core"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "a2a_core.types",
        "a2a_core.errors",
        "a2a_core.wire",
        "a2a_core.identity",
        "a2a_core.exports",
        "a2a_core.net",
    ),
    ("a2a_core.contracts",),
    ("a2a_core.stores",),
    ("a2a_core.server", "a2a_core.server.push", "a2a_core.server.asgi"),
    ("a2a_core.hookspecs", "a2a_core.plugins"),
    ("a2a_core.adapters", "a2a_core.auth", "a2a_core.store_registry"),
    ("a2a_core.compose",),
    ("a2a_core",),
    ("a2a_core.cli",),
)
"""The main units, bottom to top: a unit imports nothing from a unit in a layer above its own.
Units not listed (the client, bindings, telemetry, grpc, testing...) are held only by the
no-cycle rule and the client's own rules in test_import_graph.py."""

WITHIN_LAYER_ORDER: tuple[tuple[str, str], ...] = (
    ("a2a_core.server.push", "a2a_core.server"),  # push uses the contracts, not the engine
    ("a2a_core.server", "a2a_core.server.asgi"),  # the engine knows no HTTP
    ("a2a_core.hookspecs", "a2a_core.plugins"),  # the specs are what the manager loads
)
"""``(lower, upper)`` pairs inside one layer: ``lower`` never imports ``upper``."""


def _targets(name: str, path: Path, is_package: bool, known: Mapping[str, object]) -> set[str]:
    """The a2a_core modules ``name``'s import statements name, wherever they stand."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
    return out


@functools.cache
def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the a2a_core modules it depends on (every import; see the module doc)."""
    known = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, (path, is_package) in known.items():
        for target in _targets(name, path, is_package, known):
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                node = ".".join(parts[:end])
                if node not in known or node == name:
                    continue
                if f"{name}.".startswith(f"{node}.") and node != target:
                    continue  # one of the importer's own packages, already running
                graph[name].add(node)
    return graph


def unit_of(module: str, packages: Iterable[str]) -> str:
    """The unit a module belongs to: itself when a package, else its package (or itself at top)."""
    if module in packages:
        return module
    parent = module.rpartition(".")[0]
    return module if parent == PACKAGE else parent


@functools.cache
def unit_graph(root: Path = ROOT) -> tuple[dict[str, set[str]], dict[tuple[str, str], set[str]]]:
    """Unit -> the units it depends on, and for each edge the module imports behind it."""
    known = modules(root)
    packages = {name for name, (_, is_package) in known.items() if is_package}
    units: dict[str, set[str]] = {}
    why: dict[tuple[str, str], set[str]] = {}
    for name, targets in module_graph(root).items():
        source = unit_of(name, packages)
        units.setdefault(source, set())
        for target in targets:
            unit = unit_of(target, packages)
            if unit != source:
                units[source].add(unit)
                why.setdefault((source, unit), set()).add(f"{name} -> {target}")
    return units, why


def describe(
    graph: Mapping[str, set[str]], component: list[str], why: Mapping[tuple[str, str], set[str]]
) -> str:
    """A cycle, edge by edge, with the imports that make each edge."""
    members = set(component)
    lines: list[str] = []
    for source in component:
        for target in sorted(graph[source] & members):
            lines.append(f"  {source} -> {target}")
            lines.extend(f"      {edge}" for edge in sorted(why.get((source, target), ())))
    return "\n".join(lines)


def test_no_import_cycle_between_units() -> None:
    graph, why = unit_graph()
    found = cycles(graph)
    assert not found, "import cycles between units:\n" + "\n\n".join(
        describe(graph, c, why) for c in found
    )


def test_the_layers_point_one_way() -> None:
    graph, why = unit_graph()
    listed = [unit for layer in LAYERS for unit in layer]
    assert not set(listed) - set(graph), f"unknown units in LAYERS: {set(listed) - set(graph)}"
    level = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
    upward = sorted(
        f"{source} -> {target}: {sorted(why[(source, target)])}"
        for source, targets in graph.items()
        for target in targets
        if source in level and target in level and level[target] > level[source]
    )
    upward += [
        f"{lower} -> {upper}: {sorted(why[(lower, upper)])}"
        for lower, upper in WITHIN_LAYER_ORDER
        if upper in graph[lower]
    ]
    assert not upward, "imports from a lower layer into a higher one:\n" + "\n".join(upward)


def test_only_the_command_line_imports_the_facade() -> None:
    graph, why = unit_graph()
    users = {
        unit: sorted(why[(unit, PACKAGE)]) for unit, targets in graph.items() if PACKAGE in targets
    }
    assert set(users) <= {"a2a_core.cli"}, users


@pytest.mark.parametrize(
    "package",
    ["a2a_core.server.push", "a2a_core.stores"],
)
def test_no_module_cycle_inside(package: str) -> None:
    """Inside these packages the modules form no cycle either (type-only imports included)."""
    graph = module_graph()
    inside = {
        name: {t for t in targets if t.startswith(package + ".")}
        for name, targets in graph.items()
        if name.startswith(package + ".")
    }
    found = cycles(inside)
    assert not found, "\n\n".join(describe(inside, c, {}) for c in found)


def test_the_checker_sees_a_type_only_cycle_between_subpackages(tmp_path: Path) -> None:
    """Two subpackages naming each other only for type checking are still a cycle."""
    pkg = tmp_path / PACKAGE
    for sub in ("server", "stores"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "stores" / "base.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from ..server.channel import TaskChannel\n"
    )
    (pkg / "server" / "channel.py").write_text("def f():\n    from ..stores import base\n")
    graph, why = unit_graph(pkg)
    assert cycles(graph) == [["a2a_core.server", "a2a_core.stores"]]
    assert why[("a2a_core.stores", "a2a_core.server")] == {
        "a2a_core.stores.base -> a2a_core.server.channel",
        "a2a_core.stores.base -> a2a_core.server",
    }
