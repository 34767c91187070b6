"""MkDocs hook: the site's search also works opened from the file system (site/index.html).

Browsers refuse web workers and ``fetch`` on ``file://`` pages, where Material's search
runs in a worker over ``search/search_index.json``. Material reads the index from
``search/search_index.js`` instead on ``file://``; this hook writes that file after the
build, and adds ``tools/offline_search.js`` (ours, loaded before Material's bundle) which,
on ``file://`` only, runs the search worker in a hidden iframe of the page's own origin.
Nothing is fetched from elsewhere: the pages stay offline. mkdocs.yml lists it under
``hooks:``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

SHIM = "assets/javascripts/offline-search.js"
"""Where the worker shim is in the site."""
SOURCE = Path(__file__).with_name("offline_search.js")


def on_config(config: Any) -> Any:
    """Load the shim before Material's bundle (Material's ``extra.polyfills``)."""
    polyfills = config.extra.setdefault("polyfills", [])
    if SHIM not in polyfills:
        polyfills.append(SHIM)
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the shim to the site."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, SHIM, content=SOURCE.read_text(encoding="utf-8")))
    return files


@event_priority(-100)  # after the search plugin wrote the index
def on_post_build(config: Any) -> None:
    """``search/search_index.js``: the index as a script, which ``file://`` pages may load."""
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        script = "var __index = " + index.read_text(encoding="utf-8") + ";\n"
        index.with_name("search_index.js").write_text(script, encoding="utf-8")


__all__ = ["on_config", "on_files", "on_post_build"]
