"""The built wheels and sdists carry complete metadata that works outside the repository.

PyPI (and ``pip show``, and any index) sees only what the built files say:
the dependencies, the project URLs, the classifiers, the license and the
README as the long description. The README is shown away from the
repository, so a relative link in it would lead nowhere there.
"""

from __future__ import annotations

import re
import tarfile
import tomllib
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest
from packaging_envs import ROOT, dev_module, release_check

PACKAGES = {
    # distribution file prefix: (package folder, documentation page)
    "a2a_adapters_core": ("a2a-core", "docs/index.md"),
    "a2a_langchain": ("a2a-langchain", "docs/langchain.md"),
    "a2a_crewai": ("a2a-crewai", "docs/crewai.md"),
    "a2a_adapters_mcp": ("a2a-mcp", "docs/mcp.md"),
}
URL_KEYS = {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
HTML_LINK = re.compile(r"""(?:href|src)=["']([^"']+)["']""")


def wheel_metadata(dist: Path, prefix: str) -> tuple[Message, set[str]]:
    (wheel,) = dist.glob(f"{prefix}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(meta).decode()
    return HeaderParser().parsestr(text), names


def sdist_metadata(dist: Path, prefix: str) -> tuple[Message, set[str]]:
    (sdist,) = dist.glob(f"{prefix}-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
        (info,) = [
            m
            for m in archive.getmembers()
            if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
        ]
        handle = archive.extractfile(info)
        assert handle is not None
        text = handle.read().decode()
    return HeaderParser().parsestr(text), names


def description(meta: Message) -> str:
    """The long description (the README), which follows the headers."""
    payload = meta.get_payload()
    assert isinstance(payload, str)
    return payload


def project_urls(meta: Message) -> dict[str, str]:
    return dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])


def links(markdown: str) -> list[str]:
    return MARKDOWN_LINK.findall(markdown) + HTML_LINK.findall(markdown)


def pyproject(folder: str) -> dict[str, object]:
    return tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("prefix", sorted(PACKAGES))
def test_wheel_and_sdist_metadata_are_complete(dist: Path, prefix: str) -> None:
    folder, doc = PACKAGES[prefix]
    project = pyproject(folder)
    (package,) = [p for p in release_check().discover() if p.folder.name == folder]
    readme = (ROOT / "packages" / folder / "README.md").read_text()
    wheel, wheel_files = wheel_metadata(dist, prefix)
    sdist, sdist_files = sdist_metadata(dist, prefix)
    for meta in (wheel, sdist):
        assert meta["Name"] == project["name"]
        assert meta["Version"] == package.version
        assert meta["Requires-Python"] == ">=3.11"
        assert meta["License-Expression"] == "Apache-2.0"
        assert meta.get_all("License-File") == ["LICENSE"]
        assert meta["Author"], "no author"
        assert "a2a" in (meta["Keywords"] or "").split(",")
        classifiers = set(meta.get_all("Classifier") or [])
        assert {
            "Programming Language :: Python :: 3.11",
            "Typing :: Typed",
            "Intended Audience :: Developers",
        } <= classifiers
        assert any(c.startswith("Development Status ::") for c in classifiers)
        pythons = {c for c in classifiers if c.startswith("Programming Language :: Python :: 3.")}
        tested = {f"Programming Language :: Python :: {v}" for v in dev_module().TESTED_PYTHONS}
        assert pythons == tested, "the classifiers list exactly the Pythons CI tests"
        urls = project_urls(meta)
        assert set(urls) == URL_KEYS
        assert urls["Changelog"].endswith(f"/blob/main/packages/{folder}/CHANGELOG.md")
        assert all(u.startswith("https://") for u in urls.values()), urls
        assert urls["Documentation"].endswith("/blob/main/" + doc)
        assert meta["Description-Content-Type"] == "text/markdown"
        assert description(meta).strip() == readme.strip()
    assert "LICENSE" in sdist_files
    assert "README.md" in sdist_files
    assert "CHANGELOG.md" in sdist_files
    dist_info = f"{prefix}-{package.version}.dist-info"
    assert f"{dist_info}/licenses/LICENSE" in wheel_files
    assert f"{package.import_name}/py.typed" in wheel_files
    assert f"{dist_info}/entry_points.txt" in wheel_files


def test_dependencies_as_published(dist: Path) -> None:
    requires = {
        prefix: sorted(wheel_metadata(dist, prefix)[0].get_all("Requires-Dist") or [])
        for prefix in PACKAGES
    }
    for prefix in ("a2a_langchain", "a2a_crewai", "a2a_adapters_mcp"):
        assert "a2a-adapters-core<0.2,>=0.1" in requires[prefix]
    assert "mcp<2,>=1.23" in requires["a2a_adapters_mcp"]
    assert "crewai<1.16,>=1.15.3" in requires["a2a_crewai"]
    assert "langchain-core<2,>=1.0" in requires["a2a_langchain"]
    # uvicorn's C parser comes with the core: without it a served agent runs on h11.
    assert [d for d in requires["a2a_adapters_core"] if d.startswith("httptools")], requires
    for prefix, deps in requires.items():
        # The official SDK is a test-only peer; no runtime package may require it.
        assert not [d for d in deps if d.startswith("a2a-sdk")], prefix
        assert not [d for d in deps if "file:" in d or "@" in d], prefix  # no local paths


def test_every_package_points_at_the_same_project(dist: Path) -> None:
    urls = [project_urls(wheel_metadata(dist, prefix)[0]) for prefix in PACKAGES]
    assert len({u["Repository"] for u in urls}) == 1
    assert len({u["Issues"] for u in urls}) == 1


@pytest.mark.parametrize("prefix", sorted(PACKAGES))
def test_readme_links_work_outside_the_repository(dist: Path, prefix: str) -> None:
    """Every link is absolute, and a link into this repository names a file that exists."""
    meta, _ = wheel_metadata(dist, prefix)
    repository = project_urls(meta)["Repository"]
    found = links(description(meta))
    assert found, "the README has no links to check"
    for link in found:
        assert link.startswith(("https://", "http://", "mailto:")), f"relative link {link!r}"
        if link.startswith(repository + "/"):
            kind, _, rest = link[len(repository) + 1 :].partition("/")
            assert kind in ("blob", "tree"), link
            path = rest.split("/", 1)[1].split("#")[0]  # past the branch name
            assert (ROOT / path).exists(), f"{link} names {path}, which does not exist"


def test_the_link_check_catches_relative_links() -> None:
    assert links("see [the docs](../../docs/x.md) and <a href='y.md'>y</a>") == [
        "../../docs/x.md",
        "y.md",
    ]


def test_the_core_wheel_carries_the_playground_page(dist: Path) -> None:
    """The page is served from the installed package: every file of it is in the wheel."""
    static = ROOT / "packages" / "a2a-core" / "src" / "a2a_core" / "server" / "asgi"
    static /= "playground_static"
    expected = {f"a2a_core/server/asgi/playground_static/{p.name}" for p in static.iterdir()}
    assert {"index.html", "app.js", "a2a.js", "render.js", "markdown.js", "style.css"} <= {
        name.rsplit("/", 1)[1] for name in expected
    }
    _, wheel_files = wheel_metadata(dist, "a2a_adapters_core")
    assert expected <= wheel_files
