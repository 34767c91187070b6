"""Every hook is documented (exact signature and a working example) and has its own tests.

Adding a hook to ``a2a_core/hookspecs.py`` fails these tests until
``docs/plugins/hooks.md`` has a section for it and a test in this directory
is marked ``@pytest.mark.hook("<name>")``.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from a2a_core import hookspecs
from a2a_core.plugins import create_plugin_manager, hook_impls

HERE = Path(__file__).parent
DOC = HERE.parents[3] / "docs" / "plugins" / "hooks.md"
FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def spec_functions() -> dict[str, Callable[..., Any]]:
    pm = create_plugin_manager(entry_points=False)
    return {
        name: cast(Callable[..., Any], getattr(hookspecs, name))
        for name in dir(hookspecs)
        if pm.parse_hookspec_opts(hookspecs, name) is not None
    }


def is_firstresult(name: str) -> bool:
    pm = create_plugin_manager(entry_points=False)
    opts = pm.parse_hookspec_opts(hookspecs, name)
    return bool(opts and opts.get("firstresult"))


def signature_line(name: str, function: Callable[..., Any]) -> str:
    """``def name(arg: Annotation, ...) -> Return`` as written in hookspecs.py."""
    sig = inspect.signature(function)
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"def {name}({params}) -> {sig.return_annotation}"


def doc_sections() -> dict[str, str]:
    """The page's ``### `a2a_...` `` sections, by hook name."""
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^### `(a2a_\w+)`\s*$", text, flags=re.MULTILINE)
    sections: dict[str, str] = {}
    for i in range(1, len(parts), 2):
        body = re.split(r"^## ", parts[i + 1], maxsplit=1, flags=re.MULTILINE)[0]
        sections[parts[i]] = body
    return sections


def hook_markers() -> dict[str, list[str]]:
    """Hook name -> test functions marked for it (``pytestmark`` marks a whole module)."""
    found: dict[str, list[str]] = {}
    for path in sorted(HERE.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tests = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")
        ]
        module_hooks = [
            hook
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            for hook in _hook_names(node.value)
        ]
        for test in tests:
            hooks = module_hooks + [h for d in test.decorator_list for h in _hook_names(d)]
            for hook in hooks:
                found.setdefault(hook, []).append(f"{path.name}::{test.name}")
    return found


def _hook_names(node: ast.expr) -> list[str]:
    """``pytest.mark.hook("name")`` (alone or in a list) -> ["name"]."""
    if isinstance(node, ast.List | ast.Tuple):
        return [name for item in node.elts for name in _hook_names(item)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "hook"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


HOOKS = sorted(spec_functions())


def test_the_specs_are_the_documented_set() -> None:
    assert sorted(doc_sections()) == HOOKS, "one `### `a2a_...`` section per hook, no more"


def test_every_spec_is_sync_typed_and_explained() -> None:
    for name, function in spec_functions().items():
        assert not inspect.iscoroutinefunction(function), name
        sig = inspect.signature(function)
        assert sig.return_annotation is not inspect.Signature.empty, name
        assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
        doc = " ".join((inspect.getdoc(function) or "").split())
        assert "Called" in doc, f"{name}: say when it is called"
        if is_firstresult(name):
            assert "first non-None answer wins" in doc, name


@pytest.mark.parametrize("name", HOOKS)
def test_each_hook_section_has_the_exact_signature(name: str) -> None:
    section = doc_sections()[name]
    assert signature_line(name, spec_functions()[name]) in section


@pytest.mark.parametrize("name", HOOKS)
def test_each_hook_section_says_whether_the_first_answer_wins(name: str) -> None:
    assert ("firstresult" in doc_sections()[name]) == is_firstresult(name)


@pytest.mark.parametrize("name", HOOKS)
def test_each_hook_section_has_an_example_implementing_it(name: str) -> None:
    examples = [b for b in FENCE.findall(doc_sections()[name]) if "@hookimpl" in b]
    assert examples, f"{name}: add an example plugin"
    assert any(f"def {name}(" in example for example in examples)


@pytest.mark.parametrize("name", HOOKS)
def test_each_hook_has_its_own_tests(name: str) -> None:
    tests = hook_markers().get(name, [])
    assert tests, f'mark a test of {name} with @pytest.mark.hook("{name}")'


def test_hook_markers_name_real_hooks() -> None:
    assert set(hook_markers()) <= set(HOOKS)


def test_marker_scan_sees_both_marking_styles() -> None:
    markers = hook_markers()
    assert (
        "test_adapters.py::test_named_adapter_serves_the_object" in markers["a2a_register_adapters"]
    )
    assert "test_lifespan.py::test_none_means_nothing_to_run" in markers["a2a_lifespan"]


def _example_blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [
        b for b in FENCE.findall(text) if not re.fullmatch(r"def a2a_\w+\(.*\) -> .*: \.\.\.\n", b)
    ]


@pytest.mark.parametrize("index", range(len(_example_blocks())))
def test_doc_examples_run_and_register_as_valid_plugins(index: int) -> None:
    """Each example runs; one defining hook functions is a plugin pluggy accepts."""
    block = _example_blocks()[index]
    module = types.ModuleType(f"hooks_md_example_{index}")
    exec(compile(block, f"docs/plugins/hooks.md[{index}]", "exec"), module.__dict__)
    implemented = [n for n in HOOKS if callable(getattr(module, n, None))]
    if not implemented:
        return
    pm = create_plugin_manager(entry_points=False)
    pm.register(module, name=module.__name__)
    pm.check_pending()
    for name in implemented:
        assert [i.plugin_name for i in hook_impls(pm, name)] == [module.__name__]
