"""The checks that stand between a version bump and the index.

``python3 dev.py release-check`` builds every package under ``packages/`` (its
sdist, then its wheel from that sdist) into ``dist/`` and runs this file over
the result. Every package is found by folder, so a new one is checked without
being named here. The checks, each of which prints what it found:

- one version source per package (``__version__``, read by hatchling), and each
  package's dependency on the core is a range that the core's version satisfies;
- the Python classifiers are exactly the versions CI tests (``TESTED_PYTHONS``
  in dev.py), and ``requires-python`` starts at the lowest of them;
- a CHANGELOG.md entry for every package's current version;
- the metadata as an index reads it (``twine check --strict``);
- each wheel holds exactly the package's tracked source files, its license and
  a RECORD whose hashes match;
- the readmes' links work away from the repository (absolute, and a link into
  it names a file that exists);
- each sdist rebuilds to the same wheel contents, and the tree builds to them
  too (so the sdist leaves nothing out).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CORE = "a2a-adapters-core"
VERSION_LITERAL = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.M)
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
HTML_LINK = re.compile(r"""(?:href|src)=["']([^"']+)["']""")
ABSOLUTE = ("https://", "http://", "mailto:")


def dev_module() -> ModuleType:
    """dev.py, imported (it is no package): the uv it finds, the Pythons CI tests."""
    spec = importlib.util.spec_from_file_location("_dev_py", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Package:
    """One distribution under ``packages/``, as its pyproject.toml declares it."""

    folder: Path
    pyproject: dict[str, Any]

    @property
    def project(self) -> dict[str, Any]:
        project: dict[str, Any] = self.pyproject["project"]
        return project

    @property
    def name(self) -> str:
        return str(canonicalize_name(self.project["name"]))

    @property
    def prefix(self) -> str:
        """The file-name prefix of its wheel and sdist (``a2a_adapters_core``)."""
        return self.name.replace("-", "_")

    @property
    def import_name(self) -> str:
        """The top-level module its wheel ships (``src/a2a_core`` -> ``a2a_core``)."""
        wheel = self.pyproject.get("tool", {}).get("hatch", {}).get("build", {})
        folders = wheel.get("targets", {}).get("wheel", {}).get("packages") or []
        if len(folders) == 1:
            return Path(folders[0]).name
        return self.prefix

    @property
    def version(self) -> str:
        """The version hatchling builds: the static one, or the literal its version path holds."""
        static = self.project.get("version")
        if static:
            return str(static)
        path = self.version_path
        found = VERSION_LITERAL.search(path.read_text()) if path and path.is_file() else None
        return found.group(1) if found else ""

    @property
    def version_path(self) -> Path | None:
        path = self.pyproject.get("tool", {}).get("hatch", {}).get("version", {}).get("path")
        return self.folder / path if path else None


def discover(root: Path = ROOT) -> list[Package]:
    """Every package under ``root/packages`` (a folder with a pyproject.toml and a project)."""
    found = []
    for pyproject in sorted((root / "packages").glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text())
        if "project" in data:
            found.append(Package(pyproject.parent, data))
    return found


def check_versions(packages: Sequence[Package]) -> list[str]:
    """One version source per package: ``__version__``, which hatchling reads, or pyproject's."""
    problems = []
    for package in packages:
        literals = sorted(
            path
            for path in (package.folder / "src").rglob("*.py")
            if VERSION_LITERAL.search(path.read_text())
        )
        dynamic = "version" in package.project.get("dynamic", [])
        where = package.folder.name
        if package.project.get("version") and dynamic:
            problems.append(f"{where}: the version is both static and dynamic")
        if dynamic:
            path = package.version_path
            if path is None:
                problems.append(f"{where}: dynamic version without [tool.hatch.version] path")
            elif path not in literals:
                problems.append(f"{where}: {path.name} holds no __version__ = '...'")
            extra = [p for p in literals if p != path]
        else:
            extra = literals
        for path in extra:
            problems.append(
                f"{where}: a second version source in {path.relative_to(package.folder)}; "
                'declare dynamic = ["version"] and [tool.hatch.version] path = that file'
            )
        if not package.version:
            problems.append(f"{where}: no version found")
        else:
            try:
                Version(package.version)
            except ValueError:
                problems.append(f"{where}: {package.version!r} is not a valid version")
    return problems


def check_core_ranges(packages: Sequence[Package]) -> list[str]:
    """Each package that needs the core names a range that admits the core's version."""
    cores = [p for p in packages if p.name == CORE]
    if not cores:
        return [f"no package is named {CORE}"]
    core = Version(cores[0].version)
    problems = []
    for package in packages:
        for line in package.project.get("dependencies", []):
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) != CORE:
                continue
            if not requirement.specifier:
                problems.append(f"{package.folder.name}: {line!r} names no version range")
            elif not requirement.specifier.contains(core, prereleases=True):
                problems.append(
                    f"{package.folder.name}: {line!r} excludes the core's version {core}"
                )
    return problems


def check_pythons(packages: Sequence[Package], tested: Sequence[str]) -> list[str]:
    """The Python classifiers are exactly the tested versions; requires-python is the lowest."""
    problems = []
    lowest = min(tested, key=lambda v: tuple(int(x) for x in v.split(".")))
    for package in packages:
        listed = sorted(
            c.rsplit(" :: ", 1)[1]
            for c in package.project.get("classifiers", [])
            if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
        )
        if listed != sorted(tested):
            problems.append(
                f"{package.folder.name}: classifiers list Python {', '.join(listed) or 'none'}; "
                f"CI tests {', '.join(tested)}"
            )
        if package.project.get("requires-python") != f">={lowest}":
            problems.append(f"{package.folder.name}: requires-python is not '>={lowest}'")
    return problems


def changelog_versions(text: str) -> list[str]:
    """The versions a Keep a Changelog file has dated entries for (``## [0.1.0] - date``)."""
    return re.findall(r"^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}\s*$", text, re.M)


def check_changelogs(packages: Sequence[Package]) -> list[str]:
    """Every package's CHANGELOG.md has an entry for its current version."""
    problems = []
    for package in packages:
        path = package.folder / "CHANGELOG.md"
        if not path.is_file():
            problems.append(f"{package.folder.name}: no CHANGELOG.md")
        elif package.version not in changelog_versions(path.read_text()):
            problems.append(
                f"{package.folder.name}: CHANGELOG.md has no '## [{package.version}] - "
                "YYYY-MM-DD' entry"
            )
    return problems


def links(markdown: str) -> list[str]:
    return MARKDOWN_LINK.findall(markdown) + HTML_LINK.findall(markdown)


def check_readme_links(packages: Sequence[Package], root: Path = ROOT) -> list[str]:
    """Readme links are absolute; a link into this repository names a file that exists."""
    problems = []
    for package in packages:
        repository = package.project.get("urls", {}).get("Repository", "")
        readme = package.folder / str(package.project.get("readme", "README.md"))
        found = links(readme.read_text())
        for link in found:
            if not link.startswith(ABSOLUTE):
                problems.append(f"{package.folder.name}: README links to {link!r}, not absolute")
            elif repository and link.startswith(repository + "/"):
                kind, _, rest = link[len(repository) + 1 :].partition("/")
                path = rest.split("/", 1)[-1].split("#")[0]  # past the branch name
                if kind in ("blob", "tree") and path and not (root / path).exists():
                    problems.append(f"{package.folder.name}: {link} names a missing {path}")
    return problems


def built_files(package: Package, dist: Path) -> tuple[Path | None, Path | None]:
    """The package's wheel and sdist of its current version in ``dist``, when there."""
    stem = f"{package.prefix}-{package.version}"
    wheels = sorted(dist.glob(f"{stem}-*.whl"))
    sdist = dist / f"{stem}.tar.gz"
    return (wheels[0] if len(wheels) == 1 else None), (sdist if sdist.is_file() else None)


def check_built(packages: Sequence[Package], dist: Path) -> list[str]:
    """One wheel and one sdist per package at its version, and nothing else."""
    problems = []
    expected = set()
    for package in packages:
        wheel, sdist = built_files(package, dist)
        if wheel is None:
            problems.append(f"{package.folder.name}: no single {package.prefix} wheel in {dist}")
        if sdist is None:
            problems.append(f"{package.folder.name}: no {package.prefix} sdist in {dist}")
        expected |= {wheel, sdist}
    for stray in sorted(dist.iterdir()):
        if stray.suffix in (".whl", ".gz") and stray not in expected:
            problems.append(f"{stray.name} in {dist} belongs to no package at its version")
    return problems


def check_metadata(files: Sequence[Path]) -> list[str]:
    """``twine check --strict``: what the index will say about the metadata and readme."""
    if not files:
        return ["nothing to check"]
    cmd = [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return [f"twine check failed:\n{done.stdout}{done.stderr}"]
    return []


def wheel_contents(wheel: Path) -> dict[str, str]:
    """File name -> sha256 of every file in a wheel."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            name: hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if not name.endswith("/")
        }


def tracked_sources(package: Package) -> set[str] | None:
    """The package's source files that git tracks, relative to src/; None outside a clone."""
    src = package.folder / "src"
    done = subprocess.run(
        ["git", "-C", str(src), "ls-files", "-z", "--", "."],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    return {name for name in done.stdout.decode().split("\0") if name}


def check_wheel(package: Package, wheel: Path, sources: set[str] | None) -> list[str]:
    """The wheel holds the package's sources, its license and a RECORD that matches."""
    where = wheel.name
    info = f"{package.prefix}-{package.version}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        record = archive.read(f"{info}/RECORD").decode() if f"{info}/RECORD" in names else ""
        data = {name: archive.read(name) for name in names}
    problems = []
    for required in ("METADATA", "WHEEL", "RECORD", "licenses/LICENSE"):
        if f"{info}/{required}" not in data:
            problems.append(f"{where}: no {info}/{required}")
    if f"{package.import_name}/py.typed" not in data:
        problems.append(f"{where}: no {package.import_name}/py.typed (the package is typed)")
    for name in names:
        top = name.split("/", 1)[0]
        if top not in (package.import_name, info):
            problems.append(f"{where}: {name} lies outside {package.import_name}/ and {info}/")
        if "__pycache__/" in name or name.endswith((".pyc", ".pyo")):
            problems.append(f"{where}: ships compiled file {name}")
    recorded = {}
    for row in record.splitlines():
        name, digest, _size = row.rsplit(",", 2)
        recorded[name] = digest
    for name, content in data.items():
        if name == f"{info}/RECORD":
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
        if recorded.get(name) != "sha256=" + digest.decode():
            problems.append(f"{where}: RECORD's hash of {name} does not match the file")
    if sources is not None:
        shipped = {n for n in names if n.startswith(package.import_name + "/")}
        for missing in sorted(sources - shipped):
            problems.append(f"{where}: leaves out the tracked source file {missing}")
        for extra in sorted(shipped - sources):
            problems.append(f"{where}: ships {extra}, which git does not track")
    return problems


def build_wheel(uv: Sequence[str], source: Path, out: Path) -> Path:
    """A wheel built by uv (isolated, no workspace sources) from a folder."""
    cmd = [*uv, "build", "--wheel", "--no-sources", "-q", "--out-dir", str(out), str(source)]
    subprocess.run(cmd, check=True, capture_output=True, cwd=out)
    (wheel,) = out.glob("*.whl")
    return wheel


def check_rebuilds(package: Package, wheel: Path, sdist: Path, uv: Sequence[str]) -> list[str]:
    """The sdist, unpacked and rebuilt, and the tree itself both give the wheel's contents."""
    expected = wheel_contents(wheel)
    problems = []
    with tempfile.TemporaryDirectory(prefix="a2a-release-") as tmp:
        unpacked = Path(tmp) / "sdist"
        with tarfile.open(sdist) as archive:
            archive.extractall(unpacked, filter="data")
        (source,) = unpacked.iterdir()
        for label, folder in (("the sdist", source), ("the source tree", package.folder)):
            out = Path(tmp) / label.replace(" ", "-")
            out.mkdir()
            try:
                rebuilt = wheel_contents(build_wheel(uv, folder, out))
            except subprocess.CalledProcessError as exc:
                problems.append(f"{sdist.name}: building from {label} failed: {exc.stderr!r}")
                continue
            if rebuilt != expected:
                differ = sorted(set(rebuilt.items()) ^ set(expected.items()))
                names = sorted({name for name, _ in differ})
                problems.append(f"{wheel.name}: {label} builds other contents: {names}")
    return problems


def tag_of(package: Package) -> str:
    """The git tag that publishes a package's current version (``a2a-langchain-v0.1.0``)."""
    return f"{package.name}-v{package.version}"


def select_tagged(packages: Sequence[Package], tag: str, dist: Path, out: Path) -> list[str]:
    """Copy the tagged package's wheel and sdist from ``dist`` into ``out`` (emptied first)."""
    tagged = [p for p in packages if tag_of(p) == tag]
    if not tagged:
        known = ", ".join(tag_of(p) for p in packages)
        return [f"tag {tag!r} names no package at its current version (these would: {known})"]
    wheel, sdist = built_files(tagged[0], dist)
    if wheel is None or sdist is None:
        return [f"{tag}: its wheel and sdist are not both in {dist}"]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for path in (wheel, sdist):
        shutil.copy2(path, out / path.name)
    return []


def run_checks(
    dist: Path | None,
    uv: Sequence[str],
    tested: Sequence[str],
    tag: str | None = None,
) -> int:
    """Print each check's outcome; 1 when any found a problem."""
    packages = discover()
    failed = 0

    def report(title: str, problems: list[str]) -> None:
        nonlocal failed
        if problems:
            failed += 1
            print(f"FAIL  {title}", flush=True)
            for problem in problems:
                print(f"      - {problem}", flush=True)
        else:
            print(f"ok    {title}", flush=True)

    names = ", ".join(p.name + " " + p.version for p in packages)
    report(f"one version source each ({names})", check_versions(packages))
    report(f"{CORE} ranges admit its version", check_core_ranges(packages))
    report(f"Python classifiers = tested ({', '.join(tested)})", check_pythons(packages, tested))
    report("CHANGELOG.md has an entry for each version", check_changelogs(packages))
    report("readme links work outside the repository", check_readme_links(packages))
    if dist is None:
        return 1 if failed else 0
    report(f"one wheel and one sdist per package in {dist}", check_built(packages, dist))
    files = [f for p in packages for f in built_files(p, dist) if f is not None]
    report("twine check --strict", check_metadata(files))
    steps: list[tuple[str, Callable[[Package, Path, Path], list[str]]]] = [
        ("wheel contents", lambda p, w, _s: check_wheel(p, w, tracked_sources(p))),
        ("sdist and tree rebuild to the same wheel", lambda p, w, s: check_rebuilds(p, w, s, uv)),
    ]
    for title, check in steps:
        problems: list[str] = []
        for package in packages:
            wheel, sdist = built_files(package, dist)
            if wheel is not None and sdist is not None:
                problems += check(package, wheel, sdist)
        report(title, problems)
    if tag is not None:
        out = dist / "publish"
        report(f"tag {tag}: its files copied to {out}", select_tagged(packages, tag, dist, out))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--dist", type=Path, help="the built files (omit: source checks only)")
    parser.add_argument(
        "--tag", help="a release tag (NAME-vVERSION): copy that package's files to DIST/publish"
    )
    args = parser.parse_args(argv)
    if args.tag and args.dist is None:
        parser.error("--tag needs --dist")
    dev = dev_module()
    return run_checks(args.dist, dev.find_uv(), dev.TESTED_PYTHONS, args.tag)


if __name__ == "__main__":
    sys.exit(main())
