"""The module import graph of a2a_core has no cycle, and the client stands without the server.

The graph is built from the source with ``ast``, so a cycle hidden by an
import inside a function (which only fails when that function first runs,
or half-initialises a module) is found as well as one at the top.

Granularity: one node per module (a package is its ``__init__``). Rules:

- every ``import``/``from ... import`` counts, at module level or inside a
  function or class, except those under ``if TYPE_CHECKING:`` (they never
  run; pyright resolves such cycles itself);
- importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``, so it
  adds edges to those packages, except to the importer's own ancestors (a
  module inside ``a.b`` is only ever imported after ``a.b``'s ``__init__``
  started; a package re-exporting its own modules is not a cycle);
- ``from pkg import name`` is an edge to ``pkg.name`` when that is a module,
  else to ``pkg``;
- lazy attributes resolved with ``importlib`` (``a2a_core.__getattr__``,
  ``a2a_core.client.__getattr__``) are not edges: they load on first use,
  after every module involved finished importing.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from import_graph_support import ROOT, cycles, modules

PACKAGE = "a2a_core"

CLIENT_MAY_IMPORT_SERVER = frozenset(
    {
        "a2a_core.client.remote",  # the gateway executor is an AgentExecutor (lazy in the client)
        "a2a_core.client.transports.inprocess",  # calls an A2AService in the same process
    }
)
"""Client modules that exist to work with server objects; loaded only on first use."""


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (anywhere but under ``if TYPE_CHECKING``)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for node in child.orelse:
                yield from _import_nodes(ast.Module(body=[node], type_ignores=[]))
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _import_nodes(child)


def _imported(name: str, path: Path, is_package: bool, modules: Mapping[str, object]) -> set[str]:
    """The a2a_core modules ``name`` imports (targets as written, before adding packages)."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
            continue
        if node.level:
            base = here[: len(here) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        if target.split(".")[0] != PACKAGE:
            continue
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            out.add(sub if sub in modules else target)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the a2a_core modules importing it runs (see the module doc for the rules)."""
    found = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in found}
    for name, (path, is_package) in found.items():
        for target in _imported(name, path, is_package, found):
            parts = target.split(".")
            for end in range(1, len(parts) + 1):
                node = ".".join(parts[:end])
                if node not in found or node == name:
                    continue
                own_ancestor = f"{name}.".startswith(f"{node}.")
                if own_ancestor and node != target:
                    continue
                graph[name].add(node)
    return graph


def _describe(graph: Mapping[str, set[str]], component: list[str]) -> str:
    members = set(component)
    return "\n".join(f"  {m} -> {', '.join(sorted(graph[m] & members))}" for m in component)


def test_no_import_cycle_between_a2a_core_modules() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n\n".join(_describe(graph, c) for c in found)


def test_the_checker_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The old plugins -> adapters -> plugins cycle, imported inside a function, is found."""
    pkg = tmp_path / PACKAGE
    (pkg / "server").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "server" / "__init__.py").write_text("from .service import A2AService\n")
    (pkg / "server" / "service.py").write_text("class A2AService: ...\n")
    (pkg / "plugins.py").write_text(
        "from .server.service import A2AService\n\n"
        "def configure_service():\n    from .adapters import resolve_agent\n"
    )
    (pkg / "adapters.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .plugins import get_plugin_manager\n"
        "if TYPE_CHECKING:\n    from .server import A2AService\n"
    )
    graph = import_graph(pkg)
    assert cycles(graph) == [["a2a_core.adapters", "a2a_core.plugins"]]
    assert "a2a_core.server" not in graph["a2a_core.adapters"]  # TYPE_CHECKING only
    assert graph["a2a_core.server.service"] == set()  # its own package is no edge


def test_the_client_does_not_import_the_server() -> None:
    """Client modules name no server module (identity types live in ``a2a_core.identity``)."""
    graph = import_graph()
    offenders = {
        name: sorted(t for t in targets if t.startswith("a2a_core.server"))
        for name, targets in graph.items()
        if name.startswith("a2a_core.client") and name not in CLIENT_MAY_IMPORT_SERVER
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    for name in modules():
        if not name.startswith("a2a_core.client") or name in CLIENT_MAY_IMPORT_SERVER:
            continue
        source = modules()[name][0].read_text(encoding="utf-8")
        assert "server." not in "".join(
            line for line in source.splitlines() if line.lstrip().startswith(("from ", "import "))
        ), f"{name} imports the server (even if only for type checking)"


def test_importing_the_client_loads_no_server_module() -> None:
    probe = (
        "import sys, a2a_core.client; "
        "print(sorted(m for m in sys.modules if m.startswith('a2a_core.server')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
