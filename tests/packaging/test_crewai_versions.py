"""The CrewAI adapter's tests pass on the lowest and the highest crewai it accepts.

The adapter relies on CrewAI internals (the human input provider, scoped
hooks, event types), so its requirement names only the tested releases: the
lower bound of ``crewai>=X,<Y`` in packages/a2a-crewai/pyproject.toml, and
the release uv.lock pins (the newest tested). For each, a fresh environment
gets the built a2a-crewai wheel, that exact crewai, and the test tools at
their locked versions (FastAPI, which the mount test serves in, at one that
crewai allows); then the adapter's own offline tests run there: serving, progress events,
human input, cancel, the served crew over sockets (with our client, the
official SDK's and ``a2a serve``), mounting, and remote agents as tools and
crew members. Left out: the tests that need LangChain (``-k "not
langchain"``, and test_demo.py), which are not CrewAI's concern.
The two versions run one after the other: these suites start servers and
subprocesses with startup deadlines, and two of them at once on a two-core
machine would race those deadlines.
"""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging_envs import ROOT, Envs, clean_env, locked_version, run

TEST_TOOLS = ("pytest", "pytest-asyncio", "pytest-timeout", "a2a-sdk")
# The timed streaming tests follow a crew through a second instance on Redis and PostgreSQL:
# the core's redis and postgres extras, at their locked versions.
STORE_CLIENTS = ("redis", "psycopg", "psycopg-binary", "psycopg-pool")
# Not pinned: the locked FastAPI needs a newer opentelemetry-api than the lowest crewai allows.
UNPINNED_TOOLS = ("fastapi",)
SUITE = ROOT / "packages" / "a2a-crewai" / "tests"
MIN_PASSED = 40  # the suite has about 50 such tests: a collapsed run must not look green


def crewai_range() -> tuple[str, str]:
    """The lower and upper bound of the adapter's crewai requirement."""
    project = tomllib.loads((ROOT / "packages/a2a-crewai/pyproject.toml").read_text())["project"]
    (spec,) = [d for d in project["dependencies"] if re.match(r"crewai\b", d)]
    found = re.fullmatch(r"crewai>=([\d.]+),<([\d.]+)", spec.replace(" ", ""))
    assert found, f"expected crewai>=X,<Y, got {spec!r}"
    return found.group(1), found.group(2)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(piece) for piece in version.split("."))


LOWEST, BELOW = crewai_range()
HIGHEST = locked_version("crewai")
VERSIONS = {"lowest": LOWEST, "highest": HIGHEST}


def run_suite(envs: Envs, version: str) -> str:
    """Install a2a-crewai with crewai==version into a new venv; run the adapter's tests there."""
    tools = [f"{name}=={locked_version(name)}" for name in TEST_TOOLS]
    tools[-1] = f"a2a-sdk[http-server]=={locked_version('a2a-sdk')}"
    tools += [f"{name}=={locked_version(name)}" for name in STORE_CLIENTS]
    python = envs.create(
        f"crewai-{version}",
        [str(envs.wheel("a2a_crewai")), f"crewai=={version}", *tools, *UNPINNED_TOOLS],
    )
    installed = envs.installed(python)
    assert installed["crewai"] == version
    assert "a2a-langchain" not in installed
    pytest_cmd = [str(python), "-m", "pytest", str(SUITE), "-q", "-p", "no:cacheprovider"]
    pytest_cmd += ["--ignore", str(SUITE / "test_demo.py"), "-k", "not langchain"]
    return run(pytest_cmd, timeout=600, cwd=ROOT, env=clean_env()).stdout


def test_the_tested_versions_lie_in_the_declared_range() -> None:
    assert _key(LOWEST) <= _key(HIGHEST) < _key(BELOW)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("which", sorted(VERSIONS))
def test_the_adapter_suite_passes_on(envs: Envs, which: str) -> None:
    output = run_suite(envs, VERSIONS[which])
    summary = output.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed, output[-3000:]
    assert int(passed.group(1)) >= MIN_PASSED, summary
    assert not re.search(r"\d+ (failed|error)", summary), output[-3000:]
