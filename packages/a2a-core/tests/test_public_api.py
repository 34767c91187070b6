"""The top-level ``a2a_core`` API: complete, accurate and lazy."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import a2a_core
import a2a_core.errors
import a2a_core.types
import pytest


def test_every_name_in_all_resolves() -> None:
    for name in a2a_core.__all__:
        assert getattr(a2a_core, name) is not None, name


def test_all_has_no_duplicates() -> None:
    assert len(set(a2a_core.__all__)) == len(a2a_core.__all__)


def test_types_and_errors_are_all_exported_from_their_modules() -> None:
    exported = set(a2a_core.__all__)
    missing = (set(a2a_core.types.__all__) | set(a2a_core.errors.__all__)) - exported
    assert not missing, f"add to a2a_core/__init__.py: {sorted(missing)}"
    assert a2a_core.Message is a2a_core.types.Message
    assert a2a_core.TaskNotFoundError is a2a_core.errors.TaskNotFoundError


def test_builder_and_its_error_are_exported() -> None:
    from a2a_core import AgentCardBuilder, CardValidationError
    from a2a_core.card import AgentCardBuilder as Direct

    assert AgentCardBuilder is Direct
    assert issubclass(CardValidationError, ValueError)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        _ = a2a_core.NoSuchThing  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(ImportError):
        from a2a_core import NoSuchThing  # noqa: F401  # pyright: ignore[reportAttributeAccessIssue, reportUnusedImport]


def test_dir_lists_the_public_api() -> None:
    assert set(a2a_core.__all__) <= set(dir(a2a_core))


def test_version_matches_the_distribution() -> None:
    assert a2a_core.__version__ == importlib.metadata.version("a2a-adapters-core")


def test_import_is_lazy() -> None:
    """``import a2a_core`` alone must not pull in pydantic, httpx or the models.

    ``a2a_core.exports`` (the lazy-name factory, standard library only) is the one module it
    loads besides itself."""
    code = (
        "import json, sys; import a2a_core; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in {'pydantic', 'httpx', 'a2a_core', 'pluggy', 'uvicorn'})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == ["a2a_core", "a2a_core.exports"]
