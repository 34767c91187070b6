"""The browser: Debian's Chromium driven by Playwright (no browser download).

Outside CI a machine without Chromium skips these tests with the reason; in
CI (``CI=true``, where ``dev.py test`` installs it) a missing Chromium fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from browser_support import CHROMIUM_ENV, chromium_path  # noqa: E402

os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one module's tests.

    Module scope, not session: Playwright's sync API keeps its event loop
    marked as running in this thread until it stops, so it must stop before
    the asyncio tests that follow in the same session run.
    """
    path = chromium_path()
    if path is None:
        reason = (
            f"no Chromium (install Debian's chromium package, or set {CHROMIUM_ENV}); "
            "python3 dev.py test installs it when CI=true"
        )
        if _in_ci():
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; JavaScript errors and CSP violations fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda m: (
            problems.append(f"console: {m.text}")
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    yield page
    context.close()
    assert not problems, problems
