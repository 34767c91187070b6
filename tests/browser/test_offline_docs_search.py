"""The documentation site's search works opened from the file system (``site/index.html``).

A small site is built with the same theme, search plugin and offline-search hook as
mkdocs.yml, then opened as a ``file://`` page in headless Chromium: typing in the search
box lists the page that has the word, with nothing fetched from elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "tools" / "docs_offline_search.py"


class _Loader(yaml.SafeLoader):
    """Reads mkdocs.yml, leaving out the ``!!python/...`` values (only MkDocs needs them)."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def test_mkdocs_yml_uses_the_offline_search_hook() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)
    assert "tools/docs_offline_search.py" in config["hooks"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# Home\n\nSee the [other page](other.md).\n")
    (root / "docs" / "other.md").write_text("# Other\n\nThe zebrafish swims here.\n")
    (root / "mkdocs.yml").write_text(
        yaml.safe_dump(
            {
                "site_name": "Offline",
                "use_directory_urls": False,
                "theme": {"name": "material", "font": False, "features": ["search.suggest"]},
                "plugins": ["search"],
                "hooks": [str(HOOK)],
                "nav": ["index.md", "other.md"],
            }
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(root / "site")],
        cwd=root,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "site"


def test_the_build_writes_the_index_as_a_script_and_loads_the_shim_first(site: Path) -> None:
    script = (site / "search" / "search_index.js").read_text()
    assert script.startswith("var __index = {")
    page = (site / "index.html").read_text()
    shim = page.index('src="assets/javascripts/offline-search.js"')
    assert shim < page.index("assets/javascripts/bundle.")
    assert "//unpkg" not in page


def test_search_works_from_the_file_system(page: Any, site: Path) -> None:
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto((site / "index.html").as_uri())
    box = page.locator("input.md-search__input")
    box.click()  # without a working search, Material hides the box: this times out
    page.keyboard.type("zebrafish")
    result = page.locator(".md-search-result__item", has_text="zebrafish").first
    result.wait_for()
    assert "Other" in result.inner_text()
    assert all(url.startswith(("file://", "data:", "about:")) for url in fetched), fetched
