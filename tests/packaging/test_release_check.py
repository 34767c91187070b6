"""``python3 dev.py release-check``: this repository passes it, and each check catches its fault.

The checks live in tools/release_check.py. The first tests read the real
packages (cheap: no build); the others give each check a small package or
wheel with one fault and expect that fault named. The build-dependent checks
run on the session's ``dist`` (built by ``python3 dev.py build``, as the
release-check builds it).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import shutil
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from packaging_envs import ROOT, dev_module, release_check

rc: ModuleType = release_check()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the packages' pyprojects, version files, readmes and changelogs."""
    for package in rc.discover():
        folder = tmp_path / "packages" / package.folder.name
        for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(package.folder / name, folder / name)
        source = package.version_path
        if source is not None:  # (a package without one fails the real-repository tests)
            target = folder / source.relative_to(package.folder)
            target.parent.mkdir(parents=True)
            target.write_text(f'"""{package.name}."""\n\n__version__ = "{package.version}"\n')
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_every_package_under_packages_is_checked() -> None:
    folders = {p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml")}
    assert {p.folder.name for p in rc.discover()} == folders
    assert {"a2a-core", "a2a-langchain", "a2a-crewai"} <= folders


def test_the_source_checks_pass_on_this_repository() -> None:
    packages = rc.discover()
    assert rc.check_versions(packages) == []
    assert rc.check_core_ranges(packages) == []
    assert rc.check_pythons(packages, dev_module().TESTED_PYTHONS) == []
    assert rc.check_changelogs(packages) == []
    assert rc.check_readme_links(packages) == []


def test_every_adapter_range_admits_the_core_version() -> None:
    """The check that fails when an adapter's core range excludes the core's version."""
    packages = {p.name: p for p in rc.discover()}
    core = Version(packages[rc.CORE].version)
    adapters = 0
    for package in packages.values():
        for line in package.project.get("dependencies", []):
            name, _, spec = line.partition(rc.CORE)
            if name == "" and spec[:1] in "<>=!~":
                adapters += 1
                assert core in SpecifierSet(spec), f"{package.name}: {line} excludes {core}"
    assert adapters >= 2


def test_each_version_is_declared_once_and_is_the_one_the_package_reports() -> None:
    packages = {p.folder.name: p for p in rc.discover()}
    for folder in ("a2a-core", "a2a-langchain", "a2a-crewai"):
        package = packages[folder]
        assert "version" not in package.project, package.name
        assert package.project["dynamic"] == ["version"], package.name
        module = importlib.import_module(package.import_name)
        assert module.__version__ == package.version


def test_a_range_that_excludes_the_core_fails(repo: Path) -> None:
    edit(
        repo / "packages/a2a-langchain/pyproject.toml",
        "a2a-adapters-core>=0.1,<0.2",
        "a2a-adapters-core>=0.2,<0.3",
    )
    problems = rc.check_core_ranges(rc.discover(repo))
    assert problems == [
        "a2a-langchain: 'a2a-adapters-core>=0.2,<0.3' excludes the core's version 0.1.0"
    ]


def test_a_core_bump_past_the_ranges_fails(repo: Path) -> None:
    edit(repo / "packages/a2a-core/src/a2a_core/__init__.py", '"0.1.0"', '"0.2.0"')
    packages = rc.discover(repo)
    problems = rc.check_core_ranges(packages)
    assert len(problems) == len(packages) - 1  # every adapter's range
    assert all("excludes the core's version 0.2.0" in p for p in problems)


def test_a_second_version_source_fails(repo: Path) -> None:
    pyproject = repo / "packages/a2a-crewai/pyproject.toml"
    edit(pyproject, 'dynamic = ["version"]', 'version = "0.1.0"')
    problems = rc.check_versions(rc.discover(repo))
    assert len(problems) == 1
    assert problems[0].startswith("a2a-crewai: a second version source in src/a2a_crewai/")


def test_a_version_without_a_changelog_entry_fails(repo: Path) -> None:
    edit(repo / "packages/a2a-core/src/a2a_core/__init__.py", '"0.1.0"', '"0.1.1"')
    problems = rc.check_changelogs(rc.discover(repo))
    assert problems == ["a2a-core: CHANGELOG.md has no '## [0.1.1] - YYYY-MM-DD' entry"]
    (repo / "packages/a2a-crewai/CHANGELOG.md").unlink()
    assert "a2a-crewai: no CHANGELOG.md" in rc.check_changelogs(rc.discover(repo))


def test_an_undated_entry_is_no_release(repo: Path) -> None:
    changelog = repo / "packages/a2a-langchain/CHANGELOG.md"
    edit(changelog, "## [0.1.0] - 2026-12-06", "## [0.1.0]")
    assert rc.check_changelogs(rc.discover(repo)) == [
        "a2a-langchain: CHANGELOG.md has no '## [0.1.0] - YYYY-MM-DD' entry"
    ]


def test_an_untested_python_classifier_fails(repo: Path) -> None:
    pyproject = repo / "packages/a2a-core/pyproject.toml"
    edit(pyproject, '"Programming Language :: Python :: 3.13",\n', "")
    problems = rc.check_pythons(rc.discover(repo), ("3.11", "3.12", "3.13"))
    assert problems == ["a2a-core: classifiers list Python 3.11, 3.12; CI tests 3.11, 3.12, 3.13"]


def test_relative_and_dangling_readme_links_fail(repo: Path) -> None:
    readme = repo / "packages/a2a-crewai/README.md"
    readme.write_text(
        readme.read_text()
        + "\n[local](../../docs/x.md) <a href='y.md'>y</a>"
        + " [gone](https://github.com/a2a-adapters/a2a-python/blob/main/docs/gone.md)\n"
    )
    problems = rc.check_readme_links(rc.discover(repo), root=ROOT)
    assert problems == [
        "a2a-crewai: README links to '../../docs/x.md', not absolute",
        "a2a-crewai: https://github.com/a2a-adapters/a2a-python/blob/main/docs/gone.md"
        " names a missing docs/gone.md",
        "a2a-crewai: README links to 'y.md', not absolute",
    ]


def test_the_built_files_pass_every_check(dist: Path) -> None:
    """The wheels and sdists ``dev.py build`` makes: twine, contents, and the rebuilds."""
    packages = rc.discover()
    assert rc.check_built(packages, dist) == []
    files = [f for p in packages for f in rc.built_files(p, dist)]
    assert rc.check_metadata(files) == []
    uv = dev_module().find_uv()
    for package in packages:
        wheel, sdist = rc.built_files(package, dist)
        assert rc.check_wheel(package, wheel, rc.tracked_sources(package)) == []
        assert rc.check_rebuilds(package, wheel, sdist, uv) == []


def rewrite(wheel: Path, out: Path, change: dict[str, bytes | None]) -> Path:
    """A copy of ``wheel`` with files replaced, added or (None) removed; RECORD kept as it was."""
    target = out / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(target, "w") as copy:
        for name in source.namelist():
            if name not in change:
                copy.writestr(name, source.read(name))
        for name, content in change.items():
            if content is not None:
                copy.writestr(name, content)
    return target


def test_the_wheel_check_catches_stray_missing_and_tampered_files(
    dist: Path, tmp_path: Path
) -> None:
    (package,) = [p for p in rc.discover() if p.name == "a2a-langchain"]
    wheel, _ = rc.built_files(package, dist)
    broken = rewrite(
        wheel,
        tmp_path,
        {
            "tests/test_x.py": b"",
            "a2a_langchain/__pycache__/x.cpython-311.pyc": b"",
            "a2a_langchain/py.typed": None,
            "a2a_langchain/tools.py": b"# changed\n",
        },
    )
    problems = rc.check_wheel(package, broken, rc.tracked_sources(package))
    text = "\n".join(problems)
    assert "tests/test_x.py lies outside" in text
    assert "ships compiled file a2a_langchain/__pycache__/x.cpython-311.pyc" in text
    assert "no a2a_langchain/py.typed" in text
    assert "leaves out the tracked source file a2a_langchain/py.typed" in text
    assert "RECORD's hash of a2a_langchain/tools.py does not match" in text


def test_an_sdist_that_leaves_a_file_out_fails(dist: Path, tmp_path: Path) -> None:
    """A wheel with one more module than the sdist and tree build: the rebuild check names it."""
    (package,) = [p for p in rc.discover() if p.name == "a2a-langchain"]
    wheel, sdist = rc.built_files(package, dist)
    extra = b"VALUE = 1\n"
    digest = base64.urlsafe_b64encode(hashlib.sha256(extra).digest()).rstrip(b"=").decode()
    record = f"{package.prefix}-{package.version}.dist-info/RECORD"
    with zipfile.ZipFile(wheel) as archive:
        rows = archive.read(record).decode() + f"a2a_langchain/extra.py,sha256={digest},10\n"
    grown = rewrite(wheel, tmp_path, {"a2a_langchain/extra.py": extra, record: rows.encode()})
    problems = rc.check_rebuilds(package, grown, sdist, dev_module().find_uv())
    assert len(problems) == 2, problems
    assert all("a2a_langchain/extra.py" in p for p in problems)
    assert problems[0].startswith(f"{wheel.name}: the sdist builds other contents")


def test_a_tag_selects_its_package_files_and_a_wrong_tag_fails(dist: Path, tmp_path: Path) -> None:
    packages = rc.discover()
    (langchain,) = [p for p in packages if p.name == "a2a-langchain"]
    out = tmp_path / "publish"
    assert rc.select_tagged(packages, f"a2a-langchain-v{langchain.version}", dist, out) == []
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in rc.built_files(langchain, dist)
    )
    (problem,) = rc.select_tagged(packages, "a2a-langchain-v9.9.9", dist, tmp_path / "x")
    assert problem.startswith("tag 'a2a-langchain-v9.9.9' names no package at its current version")
    assert not (tmp_path / "x").exists()
