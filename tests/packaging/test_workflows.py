"""The GitHub Actions workflows and .ci/run run what the release promises.

CI (ci.yml) runs .ci/run on every push and pull request with each tested
Python; .ci/run runs the release check, the README's test command and the
other Pythons' suites. The publish workflow (publish.yml) runs on a release
tag, checks and builds, and uploads through trusted publishing: an OIDC
token, never a stored secret.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import yaml
from packaging_envs import ROOT, dev_module, release_check

WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def test_ci_runs_dot_ci_run_on_every_push_and_pull_request_with_each_tested_python() -> None:
    ci = workflow("ci.yml")
    assert set(ci["on"]) == {"push", "pull_request"}
    (job,) = ci["jobs"].values()
    runs = [s["run"] for s in steps(job) if "run" in s]
    assert runs == ["bash .ci/run"]
    (setup,) = [s for s in steps(job) if str(s.get("uses", "")).startswith("actions/setup-python")]
    listed = setup["with"]["python-version"].split()
    tested = dev_module().TESTED_PYTHONS
    assert sorted(listed) == sorted(tested)
    assert listed[-1] == tested[0], "the last one listed is python3, which runs the whole suite"
    assert {"postgres", "redis"} <= set(job["services"])
    assert job["timeout-minutes"] <= 90


def test_dot_ci_run_runs_the_readme_command_the_release_check_and_the_other_pythons() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    commands = [line.split(" <")[0] for line in script.splitlines() if line.startswith("python3")]
    assert commands == [
        "python3 dev.py release-check",
        "python3 dev.py test",
        "python3 dev.py test-python all-others",
    ]
    assert "python3 dev.py test" in (ROOT / "README.md").read_text()


def test_publish_runs_on_each_package_tag_and_uses_trusted_publishing() -> None:
    text = (WORKFLOWS / "publish.yml").read_text()
    publish = workflow("publish.yml")
    assert set(publish["on"]) == {"push"}
    patterns = publish["on"]["push"]["tags"]
    rc = release_check()
    for package in rc.discover():
        assert any(fnmatch.fnmatch(rc.tag_of(package), p) for p in patterns), package.name
    assert not any(fnmatch.fnmatch("v0.1.0", p) for p in patterns)
    build, upload = publish["jobs"]["build"], publish["jobs"]["publish"]
    runs = " ".join(s["run"] for s in steps(build) if "run" in s)
    assert 'python3 dev.py release-check --tag "${GITHUB_REF_NAME}"' in runs
    assert "tests/packaging/test_install.py" in runs
    assert upload["needs"] == "build"
    assert upload["permissions"] == {"id-token": "write"}
    assert upload["environment"]["name"] == "pypi"
    (action,) = [s for s in steps(upload) if "pypa/gh-action-pypi-publish" in s.get("uses", "")]
    assert set(action.get("with", {})) <= {"packages-dir"}  # no password, no token
    assert "secrets." not in text
    assert publish["permissions"] == {"contents": "read"}
