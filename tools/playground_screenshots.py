"""Screenshots of the playground for docs/playground.md (docs/img/playground-*.png).

    uv run --no-sync python tools/playground_screenshots.py [OUT_DIR]

Serves the browser tests' helper agent on 127.0.0.1, drives the system
Chromium with Playwright (no browser download; ``A2A_CHROMIUM`` names another
binary) through a short session (a Markdown answer, a question answered, a
data part, the exchange log open) and saves the views: light and dark on a
wide screen, and a narrow (phone-sized) one in each scheme.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_support import (  # noqa: E402  # pyright: ignore[reportMissingImports]
    chromium_path,
    free_port,
    helper_agent,
    helper_card,
    served,
)

Scheme = Literal["light", "dark"]
VIEWS: dict[str, tuple[int, int, Scheme]] = {
    "playground-light": (1360, 900, "light"),
    "playground-dark": (1360, 900, "dark"),
    "playground-narrow-light": (390, 844, "light"),
    "playground-narrow-dark": (390, 844, "dark"),
}


def session(page: Any, url: str) -> None:
    """A short session: a Markdown answer, a question answered, a data part."""
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")
    done = "() => document.getElementById('task-state').textContent === 'completed'"
    page.locator("#composer-text").fill("hello playground")
    page.get_by_role("button", name="Send").click()
    page.wait_for_function(done)
    page.locator("#composer-text").fill("ask")
    page.get_by_role("button", name="Send").click()
    page.wait_for_selector(".agent-message.question")
    page.locator("#composer-text").fill("Ada")
    page.get_by_role("button", name="Send").click()
    page.wait_for_function(done)
    page.get_by_role("button", name='Use example: {"city": "Porto", "days": 3}').click()
    page.get_by_role("button", name="Send").click()
    page.wait_for_selector(".artifact .data pre")
    page.get_by_role("button", name="Refresh").click()
    page.wait_for_selector("#tasks button")
    page.locator("#log .exchange summary", has_text="stream").first.click()


def main(out: Path) -> None:
    from playwright.sync_api import ViewportSize, sync_playwright

    binary = chromium_path()
    if binary is None:
        raise SystemExit("no Chromium found (install Debian's chromium, or set A2A_CHROMIUM)")
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary)
        for name, (width, height, scheme) in VIEWS.items():
            viewport = ViewportSize(width=width, height=height)
            context = browser.new_context(viewport=viewport, color_scheme=scheme)
            page = context.new_page()
            with served(helper_agent, card=helper_card(), port=free_port()) as url:
                session(page, url)
                page.evaluate("() => window.scrollTo(0, 0)")
                target = out / f"{name}.png"
                page.screenshot(path=str(target))
            print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
            context.close()
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img")
