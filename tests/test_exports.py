"""Each package's export table, ``__all__`` and type-checking imports say the same thing.

A package's ``__init__`` lists each public name once by hand: in its export table
(``_EXPORTS``) when it loads names lazily, in its imports when it loads them eagerly.
``tools/gen_exports.py`` writes the rest. These tests read the source (as pyright and
the API reference do), independently of the generator, and fail when the three disagree
or when a generated block is stale; ``test_public_api.py`` checks the loaders at run time.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Set as AbstractSet
from pathlib import Path
from types import ModuleType

import pytest
from a2a_core.exports import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_exports", ROOT / "tools" / "gen_exports.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def _init_of(module: str) -> Path | None:
    """The ``__init__.py`` of a public package (None for a plain module)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None
    assert spec.origin is not None
    path = Path(spec.origin)
    return path if path.name == "__init__.py" else None


PUBLIC_PACKAGES = {
    module: path for module in PUBLIC_MODULES if (path := _init_of(module)) is not None
}


def disagreements(source: str) -> list[str]:
    """Where an ``__init__``'s table, ``__all__`` and type-checking imports differ."""
    tree = ast.parse(source)
    exported = _all_of(tree)
    table = gen.table_of(tree)
    if table is None:  # eager: the imports are the table
        imported = {name for names in gen.eager_imports(tree).values() for name in names}
        return _differ("imports", imported, "__all__", exported)
    listed = {(module, name) for module, names in table.items() for name in names}
    problems = _differ("_EXPORTS", {name for _, name in listed}, "__all__", exported)
    from_modules = {(module, name) for module, name in listed if module != gen.OWN}
    problems += _differ("_EXPORTS", from_modules, "TYPE_CHECKING imports", _checked(tree))
    return problems


def _all_of(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def _checked(tree: ast.Module) -> set[tuple[str, str]]:
    """``(module, name)`` for every import under ``if TYPE_CHECKING:``."""
    found: set[tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                if isinstance(child, ast.ImportFrom):
                    module = "." * child.level + (child.module or "")
                    found.update((module, alias.asname or alias.name) for alias in child.names)
    return found


def _differ(left: str, a: AbstractSet[object], right: str, b: AbstractSet[object]) -> list[str]:
    problems = [f"in {left}, not in {right}: {sorted(map(str, a - b))}"] if a - b else []
    if b - a:
        problems.append(f"in {right}, not in {left}: {sorted(map(str, b - a))}")
    return problems


def test_every_public_package_has_a_generated_block() -> None:
    """A public package without one would be a fourth way of writing its names."""
    assert set(PUBLIC_PACKAGES.values()) == set(gen.package_inits())


@pytest.mark.parametrize("module", sorted(PUBLIC_PACKAGES))
def test_the_table_all_and_type_checking_imports_agree(module: str) -> None:
    source = PUBLIC_PACKAGES[module].read_text(encoding="utf-8")
    assert disagreements(source) == []


@pytest.mark.parametrize("module", sorted(PUBLIC_PACKAGES))
def test_the_generated_block_is_up_to_date(module: str) -> None:
    """Run ``python3 tools/gen_exports.py`` after editing an export table."""
    source = PUBLIC_PACKAGES[module].read_text(encoding="utf-8")
    assert gen.render(source) == source


def test_a_disagreement_is_reported_and_the_generator_mends_it(tmp_path: Path) -> None:
    """A copy of a lazy and an eager package, each edited by hand the way that goes wrong:
    the checks fail, and the generator (one command, as a contributor runs it) mends both."""
    repo = tmp_path / "repo"
    for module in ("a2a_core", "a2a_core.stores"):
        target = repo / PUBLIC_PACKAGES[module].relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PUBLIC_PACKAGES[module], target)
    (repo / "tools").mkdir()
    shutil.copy(ROOT / "tools" / "gen_exports.py", repo / "tools")
    core = repo / PUBLIC_PACKAGES["a2a_core"].relative_to(ROOT)
    stores = repo / PUBLIC_PACKAGES["a2a_core.stores"].relative_to(ROOT)

    # A module moved in the table, and a name added to it, without regenerating.
    text = core.read_text(encoding="utf-8")
    text = text.replace('".card": ("AgentCardBuilder", "CardValidationError"),', "")
    text = text.replace(
        '"._builtins.echo": ("EchoAgent",),',
        '"._builtins.echo": ("EchoAgent",),\n'
        '    ".cards": ("AgentCardBuilder", "CardValidationError", "NewThing"),',
    )
    core.write_text(text, encoding="utf-8")
    # A name imported eagerly but left out of __all__.
    text = stores.read_text(encoding="utf-8")
    stores.write_text(text.replace('    "TaskQuery",\n', ""), encoding="utf-8")

    assert disagreements(core.read_text(encoding="utf-8")) == [
        "in _EXPORTS, not in __all__: ['NewThing']",
        "in _EXPORTS, not in TYPE_CHECKING imports: "
        "[\"('.cards', 'AgentCardBuilder')\", \"('.cards', 'CardValidationError')\", "
        "\"('.cards', 'NewThing')\"]",
        "in TYPE_CHECKING imports, not in _EXPORTS: "
        "[\"('.card', 'AgentCardBuilder')\", \"('.card', 'CardValidationError')\"]",
    ]
    assert disagreements(stores.read_text(encoding="utf-8")) == [
        "in imports, not in __all__: ['TaskQuery']"
    ]

    script = [sys.executable, str(repo / "tools" / "gen_exports.py")]
    check = subprocess.run([*script, "--check"], capture_output=True, text=True, timeout=60)
    assert check.returncode == 1
    assert "a2a_core/__init__.py: out of date" in check.stdout
    assert "a2a_core/stores/__init__.py: out of date" in check.stdout
    subprocess.run(script, check=True, capture_output=True, timeout=60)
    for path in (core, stores):
        assert disagreements(path.read_text(encoding="utf-8")) == []
    assert "    from .cards import AgentCardBuilder, CardValidationError, NewThing\n" in (
        core.read_text(encoding="utf-8")
    )
    rerun = subprocess.run([*script, "--check"], capture_output=True, text=True, timeout=60)
    assert rerun.returncode == 0
