"""The suites' own rules: opt-outs need reasons, suite tests cannot be overridden, every
test says how to troubleshoot it, and each test fails on the defect it is about.

``suite_cases.py`` holds suite subclasses with known defects; it runs in a separate
pytest, configured like an adapter package would be (pytest-asyncio strict mode, the
marker registered by ``a2a_core.testing.pytest_plugin``), and every outcome is checked.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import ClassVar

import pytest
from a2a_core._builtins.echo import EchoAgent
from a2a_core.adapters import resolve_agent
from a2a_core.plugins import PluginError
from a2a_core.stores import TaskStore
from a2a_core.testing import AdapterConformance, Scenario, TaskStoreConformance, opt_out

HERE = Path(__file__).parent
DOCS = HERE.parents[3] / "docs" / "testing.md"
SUITES: list[type[AdapterConformance] | type[TaskStoreConformance]] = [
    AdapterConformance,
    TaskStoreConformance,
]

_INI = """\
[pytest]
addopts = --strict-markers --strict-config -p a2a_core.testing.pytest_plugin -p no:cacheprovider
asyncio_default_fixture_loop_scope = function
filterwarnings = error
xfail_strict = true
timeout = 90
"""


# -- every suite test fails on its defect (and only there) -------------------------------


def _outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """``Class::test -> (outcome, message)`` from a JUnit XML report."""
    out: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        key = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = f"{found.get('message', '')}\n{found.text or ''}"
                break
        out[key] = (outcome, message)
    return out


def test_each_suite_test_catches_its_defect(tmp_path: Path) -> None:
    """Broken agents and stores fail exactly the tests about their defect; opt-outs and
    capability flags skip with their reason; a marker without a reason is an error."""
    shutil.copy(HERE / "suite_cases.py", tmp_path / "test_cases.py")
    (tmp_path / "pytest.ini").write_text(_INI)
    report = tmp_path / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", "test_cases.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        import test_cases  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("test_cases", None)
    expected: dict[str, str] = test_cases.EXPECTED
    messages: dict[str, str] = test_cases.MESSAGES
    got = _outcomes(report)
    wrong = {
        key: (want, got.get(key, ("missing", ""))[0])
        for key, want in expected.items()
        if got.get(key, ("missing", ""))[0] != want
    }
    assert not wrong, json.dumps(wrong, indent=1) + "\n" + done.stdout[-4000:]
    assert set(got) == set(expected), sorted(set(got) ^ set(expected))
    for key, needle in messages.items():
        assert needle in got[key][1], f"{key}: {needle!r} not in:\n{got[key][1][:2000]}"


# -- rules enforced when a subclass is defined ---------------------------------------------


def test_opt_out_without_reason_is_refused() -> None:
    with pytest.raises(
        TypeError, match=r"opting out of 'test_cancel_reaches_the_agent' needs a reason"
    ):

        class Lazy(AdapterConformance):
            opt_out: ClassVar = {"test_cancel_reaches_the_agent": "  "}


def test_opt_out_of_an_unknown_test_is_refused() -> None:
    with pytest.raises(TypeError, match=r"cannot opt out of 'test_cancel'.*AdapterConformance"):

        class Typo(AdapterConformance):
            opt_out: ClassVar = {"test_cancel": "misspelt"}


def test_opt_out_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match=r"must be a dict of test name -> reason"):

        class Listed(TaskStoreConformance):
            opt_out: ClassVar = ["test_delete"]  # pyright: ignore[reportAssignmentType]


def test_overriding_a_suite_test_is_refused() -> None:
    with pytest.raises(TypeError, match=r"overrides test_delete of TaskStoreConformance"):

        class Weakened(TaskStoreConformance):
            async def test_delete(self) -> None:
                pass


def test_capability_flags_must_be_booleans() -> None:
    with pytest.raises(TypeError, match=r"supports_cancel must be True or False, not str"):

        class Vague(AdapterConformance):
            supports_cancel: ClassVar = "sometimes"  # pyright: ignore[reportAssignmentType]


def test_opt_outs_are_inherited_and_merged() -> None:
    class Base(TaskStoreConformance):
        opt_out: ClassVar = {"test_delete": "base reason"}

    class Child(Base):
        opt_out: ClassVar = {"test_owner_scoping": "child reason"}

    @opt_out("test_invalid_page_token", reason="decorated")
    class Decorated(Child):
        pass

    assert Child.opt_out == {"test_delete": "base reason", "test_owner_scoping": "child reason"}
    assert Decorated.opt_out == {**Child.opt_out, "test_invalid_page_token": "decorated"}
    assert Base.opt_out == {"test_delete": "base reason"}  # the parent is left alone


def test_opt_out_decorator_needs_a_reason_and_a_suite_subclass() -> None:
    class Store(TaskStoreConformance):
        async def make_store(self) -> TaskStore:
            raise NotImplementedError

    with pytest.raises(TypeError, match="needs a reason"):
        opt_out("test_delete", reason="")(Store)
    with pytest.raises(TypeError, match="decorates a subclass"):
        opt_out("test_delete", reason="why")(TaskStoreConformance)
    assert Store.opt_out == {}


# -- documentation ----------------------------------------------------------------------------


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.__name__)
def test_every_suite_test_says_how_to_troubleshoot_it(suite: type) -> None:
    for name in sorted(suite.suite_tests):
        doc = getattr(suite, name).__doc__ or ""
        summary, _, rest = doc.partition("\n")
        assert summary.strip(), f"{suite.__name__}.{name} has no docstring"
        assert re.search(r"^\s*Troubleshooting:\s*$", rest, re.MULTILINE), (
            f"{suite.__name__}.{name} has no Troubleshooting section"
        )


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.__name__)
def test_docs_list_every_suite_test(suite: type) -> None:
    text = DOCS.read_text()
    missing = sorted(name for name in suite.suite_tests if f"`{name}`" not in text)
    assert not missing, f"docs/testing.md does not list {missing}"


def test_docs_examples_compile() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert len(blocks) >= 3
    for i, block in enumerate(blocks):
        compile(block, f"docs/testing.md[{i}]", "exec")


def test_capability_gates_name_real_tests_and_flags() -> None:
    for suite in SUITES:
        for test, flags in suite.capability_gates.items():
            assert test in suite.suite_tests, test
            for flag in flags:
                assert isinstance(getattr(suite, flag), bool), flag
                assert flag in suite.capability_docs, flag


# -- packaging --------------------------------------------------------------------------------


def test_import_a2a_core_does_not_load_the_suites_or_pytest() -> None:
    probe = (
        "import sys, a2a_core, a2a_core.server, a2a_core.plugins, a2a_core.adapters\n"
        "a2a_core.Message\n"
        "print(sorted(m for m in sys.modules if m == 'pytest' or m.startswith('a2a_core.testing')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_echo_adapter_serves_only_echo_agents() -> None:
    async def plain(context: object) -> str:
        return "plain"

    assert resolve_agent(EchoAgent()).adapter == "echo"
    assert resolve_agent(plain).adapter is None  # the core's fallback, not the echo plugin
    with pytest.raises(PluginError, match="serves EchoAgent objects"):
        resolve_agent(plain, adapter="echo")
    with pytest.raises(ValueError, match="chunk_size"):
        EchoAgent(chunk_size=0)


def test_scenarios_get_a_fresh_probe_and_secret() -> None:
    first, second = Scenario("slow"), Scenario("slow")
    assert first.probe is not second.probe
    assert first.secret != second.secret
    assert not first.probe.started
    assert not first.probe.stopped
