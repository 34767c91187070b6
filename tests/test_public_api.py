"""The public API of the three packages: one ``__all__`` per public module, public paths, docs.

``a2a_core.exports.PUBLIC_MODULES`` lists the modules whose ``__all__`` is public API (the API
reference has a page for each). These tests keep that list, the ``__all__`` lists, the lazy
loaders' tables, the classes' ``__module__`` and the docstrings in agreement.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pickle
import pkgutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import griffe
import pytest
from a2a_core.exports import INTERNAL_MODULES, PUBLIC_MODULES

PACKAGES = ("a2a_core", "a2a_langchain", "a2a_crewai", "a2a_mcp")
REPO = Path(__file__).resolve().parents[1]
SOURCES = [
    "packages/a2a-core/src",
    "packages/a2a-langchain/src",
    "packages/a2a-crewai/src",
    "packages/a2a-mcp/src",
]


def module(name: str) -> ModuleType:
    return importlib.import_module(name)


def is_code(value: object) -> bool:
    """A class or function (what has a ``__module__`` of its own and a docstring)."""
    return isinstance(value, type | FunctionType)


def ours(value: object) -> bool:
    return is_code(value) and str(getattr(value, "__module__", "")).split(".")[0] in PACKAGES


# --- one __all__ per public module ----------------------------------------------------------


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_name_in_all_imports(name: str) -> None:
    mod = module(name)
    names = list(mod.__all__)
    assert len(names) == len(set(names)), f"duplicates in {name}.__all__"
    for exported in names:
        assert hasattr(mod, exported), f"{name}.__all__ lists {exported!r}, which does not import"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_nothing_public_is_exported_by_accident(name: str) -> None:
    """A class or function reachable without an underscore is in ``__all__``, or it is not ours.

    In a package's ``__init__``, everything imported is there to be exported; in a plain
    module, what it defines itself.
    """
    mod = module(name)
    is_package = hasattr(mod, "__path__")
    stray = sorted(
        attribute
        for attribute, value in vars(mod).items()
        if not attribute.startswith("_")
        and attribute not in mod.__all__
        and ours(value)
        and (is_package or value.__module__ == name)
    )
    assert not stray, f"{name}: add to __all__ or rename with a leading underscore: {stray}"


def walk(package: str) -> list[str]:
    """Every module of a package, imported or not."""
    root = module(package)
    return [info.name for info in pkgutil.walk_packages(root.__path__, f"{package}.")]


def test_every_module_is_declared_public_or_internal() -> None:
    """A new package, or a new module at a package's top level, must be placed on purpose."""
    unplaced: list[str] = []
    for package in PACKAGES:
        for name in walk(package):
            if any(part.startswith("_") for part in name.split(".")):
                continue
            is_package = hasattr(module(name), "__path__")
            top_level = name.count(".") == 1
            if (is_package or top_level) and name not in {*PUBLIC_MODULES, *INTERNAL_MODULES}:
                unplaced.append(name)
    assert not unplaced, (
        "add to PUBLIC_MODULES (with an __all__, documented in the API reference) or "
        f"INTERNAL_MODULES in a2a_core/exports.py: {unplaced}"
    )
    assert not set(PUBLIC_MODULES) & set(INTERNAL_MODULES)


LAZY_PACKAGES = (
    "a2a_core",
    "a2a_core.client",
    "a2a_core.types",
    "a2a_core.wire",
    "a2a_langchain",
    "a2a_crewai",
)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_the_lazy_loader_and_all_agree(name: str) -> None:
    """Right after import, exactly the export table's names from modules are missing; all load.

    (``tests/test_exports.py`` checks the table, ``__all__`` and the type checkers' imports
    agree in the source; this checks the loader at run time.)
    """
    code = (
        f"import json, {name} as m; "
        "print(json.dumps(sorted(n for n in m.__all__ if n not in vars(m))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    table: dict[str, tuple[str, ...]] = module(name)._EXPORTS
    lazy = sorted(n for source, names in table.items() if source != "." for n in names)
    assert json.loads(out.stdout) == lazy
    assert set(lazy) <= set(module(name).__all__)


# --- public module paths ----------------------------------------------------------------------


def exported_code() -> list[tuple[str, str, Any]]:
    return [
        (name, attribute, getattr(module(name), attribute))
        for name in PUBLIC_MODULES
        for attribute in module(name).__all__
        if ours(getattr(module(name), attribute))
    ]


def test_classes_and_functions_carry_their_public_path() -> None:
    """``__module__`` names a public module that really has the object under that name."""
    wrong: list[str] = []
    for name, attribute, value in exported_code():
        home = value.__module__
        found = getattr(module(home), value.__qualname__, None) if home in PUBLIC_MODULES else None
        if found is not value:
            wrong.append(f"{name}.{attribute}: __module__ is {home!r}")
    assert not wrong, wrong


def test_reprs_and_pickles_use_the_public_path() -> None:
    from a2a_core import EchoAgent, Message, Part, Role, TaskNotFoundError
    from a2a_core.client import A2AClient, JsonRpcTransport
    from a2a_core.server import TaskUpdater

    assert repr(Message) == "<class 'a2a_core.types.Message'>"
    assert repr(Role) == "<enum 'Role'>"
    assert Role.__module__ == "a2a_core.types"
    assert repr(EchoAgent) == "<class 'a2a_core.EchoAgent'>"
    assert repr(A2AClient) == "<class 'a2a_core.client.A2AClient'>"
    assert repr(JsonRpcTransport) == "<class 'a2a_core.client.JsonRpcTransport'>"
    assert repr(TaskUpdater) == "<class 'a2a_core.server.TaskUpdater'>"
    assert repr(TaskNotFoundError) == "<class 'a2a_core.errors.TaskNotFoundError'>"
    assert "a2a_core.types.Message" in inspect.formatannotation(Message)
    message = Message(role=Role.USER, message_id="m-1", parts=[Part(text="hi")])
    data = pickle.dumps(message)
    assert b"a2a_core.types" in data
    assert b"_messages" not in data
    assert pickle.loads(data) == message


def test_adapter_classes_carry_their_package_path() -> None:
    import a2a_langchain

    assert repr(a2a_langchain.RemoteA2ARunnable) == "<class 'a2a_langchain.RemoteA2ARunnable'>"
    assert a2a_langchain.serve.__module__ == "a2a_langchain"


# --- docstrings -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api() -> griffe.ModulesCollection:
    """The packages as the API reference sees them (griffe: source, not runtime)."""
    loader = griffe.GriffeLoader(search_paths=SOURCES)
    for package in PACKAGES:
        loader.load(package)
    loader.resolve_aliases(implicit=False, external=None)
    return loader.modules_collection


def inherits_doc(owner: type, method: str) -> bool:
    """``method`` overrides a documented method of a base class (ours or a framework's)."""
    return any(
        method in vars(base) and bool(inspect.getdoc(vars(base)[method]))
        for base in owner.__mro__[1:]
    )


def undocumented(api: griffe.ModulesCollection, names: Sequence[str]) -> list[str]:
    """Public names, and public methods and properties of public classes, with no docstring.

    Each object is reported once, under the first public path that exports it.
    """
    missing: dict[str, str] = {}
    for name in names:
        runtime = module(name)
        for exported in runtime.__all__:
            member = api[name][exported]
            target = member.final_target if member.is_alias else member
            if not target.docstring:
                missing.setdefault(target.path, f"{name}.{exported}")
            if not target.is_class:
                continue
            for method_name, method in target.members.items():
                found = method.final_target if method.is_alias else method
                callable_member = found.is_function or "property" in found.labels
                if method_name.startswith("_") or not callable_member or found.docstring:
                    continue
                if not inherits_doc(getattr(runtime, exported), method_name):
                    missing.setdefault(found.path, f"{name}.{exported}.{method_name}")
    return list(missing.values())


def test_every_public_name_has_a_docstring(api: griffe.ModulesCollection) -> None:
    missing = undocumented(api, PUBLIC_MODULES)
    assert not missing, f"{len(missing)} public names have no docstring: {missing}"


def test_a_missing_docstring_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: what it reports for a package with gaps."""
    package = tmp_path / "docless_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""A package."""\n\n__all__ = ["LIMIT", "Base", "Thing", "bare", "documented"]\n\n'
        "LIMIT = 3\n\n"
        'class Base:\n    """A base."""\n\n    def run(self) -> None:\n        """Runs."""\n\n'
        'class Thing(Base):\n    """A thing."""\n\n'
        "    def run(self) -> None:\n        pass\n\n"
        "    def stop(self) -> None:\n        pass\n\n"
        "    @property\n    def size(self) -> int:\n        return 1\n\n"
        "    def _hidden(self) -> None:\n        pass\n\n"
        "def bare() -> None:\n    pass\n\n"
        'def documented() -> None:\n    """Says why."""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    loader = griffe.GriffeLoader(search_paths=[str(tmp_path)])
    loader.load("docless_pkg")
    missing = undocumented(loader.modules_collection, ["docless_pkg"])
    assert missing == [
        "docless_pkg.LIMIT",
        "docless_pkg.Thing.stop",
        "docless_pkg.Thing.size",
        "docless_pkg.bare",
    ]


def _core_modules_imported(source: Path) -> set[str]:
    """Every ``a2a_core`` module a source file imports (``from a2a_core.x import y`` -> x)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "a2a_core":
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "a2a_core")
    return found


ADAPTER_SOURCES = sorted(
    path
    for package in ("a2a-langchain", "a2a-crewai", "a2a-mcp")
    for path in (REPO / "packages" / package / "src").rglob("*.py")
)


def test_the_adapters_import_only_public_core_modules() -> None:
    """An adapter is written against the core's public API, as a third party's would be."""
    assert ADAPTER_SOURCES
    private = {
        f"{path.relative_to(REPO)}: {module}"
        for path in ADAPTER_SOURCES
        for module in _core_modules_imported(path)
        if module not in PUBLIC_MODULES
    }
    assert sorted(private) == []


def test_the_public_import_check_sees_a_private_module(tmp_path: Path) -> None:
    source = tmp_path / "adapter.py"
    source.write_text("import a2a_core.server.manager\nfrom a2a_core.server.leases import x\n")
    assert _core_modules_imported(source) == {"a2a_core.server.manager", "a2a_core.server.leases"}
