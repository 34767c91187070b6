"""The documentation site builds in strict mode, offline, with a reference page per public module.

The build (``mkdocs build --strict``, the same as ``python3 dev.py docs``) runs once per session
into a temporary folder; the tests then read what it wrote.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = [sys.executable, "-m", "mkdocs"]


def load_hooks() -> ModuleType:
    """tools/docs_hooks.py, the MkDocs hooks that generate the reference pages."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_hooks()


class IgnoringPythonTags(yaml.SafeLoader):
    """Reads mkdocs.yml, leaving out the ``!!python/...`` values (only MkDocs needs them)."""


IgnoringPythonTags.add_multi_constructor(
    "tag:yaml.org,2002:python/", lambda loader, suffix, node: None
)


def mkdocs_env() -> dict[str, str]:
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MKDOCS, "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from this checkout with mkdocs.yml in strict mode."""
    out = tmp_path_factory.mktemp("site")
    result = build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stderr[-4000:]
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert not warnings, warnings
    return out


def test_the_site_has_every_guide_and_a_reference_page_per_public_module(site: Path) -> None:
    guides = sorted(p.relative_to(ROOT / "docs") for p in (ROOT / "docs").rglob("*.md"))
    for guide in guides:
        assert (site / guide.with_suffix(".html")).is_file(), guide
    for module in hooks.public_modules():
        assert (site / "reference" / f"{module}.html").is_file(), module
    assert (site / "reference" / "cli.html").is_file()


def test_every_exported_name_has_an_anchor_on_its_home_page(site: Path) -> None:
    """Each name in a public ``__all__`` is rendered (with its signature) where it lives."""
    missing: list[str] = []
    for module in hooks.public_modules():
        for name in hooks.exports(module):
            home = hooks.home_of(module, name)
            html = (site / "reference" / f"{home}.html").read_text()
            if f'id="{hooks.anchor(home, name)}"' not in html:
                missing.append(f"{module}.{name} (expected on {home})")
    assert not missing, missing


def test_the_build_reaches_no_network(site: Path) -> None:
    """No web fonts, scripts or styles from elsewhere: every asset is in the site."""
    remote_assets = re.compile(r"<(?:link|script|img)[^>]+(?:src|href)=\"(?:https?:)?//")
    for page in site.rglob("*.html"):
        assert not remote_assets.search(page.read_text()), page


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """mkdocs.yml's strict settings turn a link to a missing page into a failed build."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=IgnoringPythonTags)
    assert config["strict"] is True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guide.md) and [this](#nowhere).\n")
    small = {
        key: config[key] for key in ("site_name", "strict", "theme", "validation") if key in config
    }
    small["docs_dir"] = str(docs)
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(small))
    result = build(path, tmp_path / "site")
    assert result.returncode != 0
    assert "guide.md" in result.stderr
    (docs / "guide.md").write_text("# Guide\n")
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guide.md).\n")
    assert build(path, tmp_path / "site").returncode == 0


# --- the CLI reference ---------------------------------------------------------------------


def test_the_cli_reference_covers_every_command_and_option() -> None:
    from a2a_core.cli import build_parser

    page = hooks.cli_page()
    commands = hooks.subcommands(build_parser())
    assert commands, "no sub-commands found"
    for name, parser in commands.items():
        section = page.split(f"## `a2a {name}`", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
            if isinstance(action, argparse._HelpAction):  # pyright: ignore[reportPrivateUsage]
                continue
            names = action.option_strings or [action.metavar or action.dest]
            for option in names:
                assert f"`{option}" in section, (name, option)


def test_the_cli_reference_follows_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new option appears without anyone editing a page."""
    import a2a_core.cli

    real = a2a_core.cli.build_parser

    def with_extra() -> argparse.ArgumentParser:
        parser = real()
        hooks.subcommands(parser)["card"].add_argument("--shiny", help="a brand-new option")
        return parser

    monkeypatch.setattr(a2a_core.cli, "build_parser", with_extra)
    assert "| `--shiny SHINY` |  | a brand-new option |" in hooks.cli_page()


def test_the_reference_index_lists_every_public_module() -> None:
    index = hooks.index_page()
    for module in hooks.public_modules():
        assert f"[`{module}`]({module}.md)" in index
        assert importlib.import_module(module).__doc__, f"{module} has no docstring"


def _table_headers(markdown: str) -> list[list[str]]:
    """The header row of every table: the row just above a ``|---|`` line, as cells."""
    lines = markdown.splitlines()
    return [
        [cell.strip() for cell in lines[i - 1].strip().strip("|").split("|")]
        for i, line in enumerate(lines)
        if i and re.fullmatch(r"\|(?:-+\|)+", line.strip())
    ]


def test_every_generated_table_names_each_of_its_columns() -> None:
    headers = _table_headers(hooks.cli_page()) + _table_headers(hooks.index_page())
    assert headers
    for header in headers:
        assert all(header), header  # no empty header cell over a column


def test_the_cli_guide_tables_name_each_of_their_columns() -> None:
    for header in _table_headers((ROOT / "docs" / "cli.md").read_text()):
        assert all(header), header


# --- docstrings written for reST ------------------------------------------------------------


def test_rest_literal_markers_become_plain_colons() -> None:
    code = '\n<div class="highlight"><pre><code>serve(crew)</code></pre></div>'
    assert hooks.plain_colons(f"<p>Serving::</p>{code}") == f"<p>Serving:</p>{code}"
    assert hooks.plain_colons(f"<p>Like this ::</p>{code}") == f"<p>Like this</p>{code}"
    # Only before an example: a "::" elsewhere (a C++ name, a URL) stays as written.
    assert hooks.plain_colons("<p>std::</p><p>text</p>") == "<p>std::</p><p>text</p>"


def test_the_api_reference_shows_no_rest_literal_markers(site: Path) -> None:
    pages = sorted((site / "reference").glob("*.html"))
    assert len(pages) > 10
    shown = {page.name for page in pages if "::</p>" in page.read_text()}
    assert not shown
    # The examples behind the markers are still code blocks.
    crewai = (site / "reference" / "a2a_crewai.html").read_text()
    assert '<p>Serving:</p>\n<div class="highlight">' in crewai
