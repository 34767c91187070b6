"""The playground's look and reach in headless Chromium, over real servers on 127.0.0.1.

- light and dark follow the system setting, and every visible text meets the
  WCAG AA contrast ratio against what is behind it (4.5:1; 3:1 for large text);
- on a phone-sized screen nothing scrolls sideways and a conversation works;
- nothing is requested from anywhere but the agent's own origin;
- an API key (a card declaring an ``apiKey`` scheme) is sent in its header;
- ``a2a playground URL`` (the command, a real subprocess) in front of the
  official SDK's server: the page loads through it and a conversation works.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_core.testing import asgi_in_thread, free_port, served_in_thread
from browser_support import helper_agent, helper_card, sdk_app

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]

# Every visible element that draws text of its own: its contrast against the first
# opaque background behind it (WCAG 2 relative luminance).
CONTRAST = """() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
    }
    return rgb(getComputedStyle(document.documentElement).backgroundColor);
  };
  const found = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.disabled || el.closest("[disabled]") || el.offsetParent === null) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const style = getComputedStyle(el);
    const fg = rgb(style.color), bg = behind(el);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    found.push({ what: el.tagName + (el.className ? "." + el.className : "") + " "
      + el.textContent.trim().slice(0, 30), ratio, need: large ? 3 : 4.5 });
  }
  return found;
}"""


@pytest.fixture(scope="module")
def helper() -> Iterator[str]:
    with served_in_thread(helper_agent, card=helper_card(), port=free_port()) as url:
        yield url


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """A page factory (viewport and colour scheme as asked); page errors and CSP
    violations (a fetch from elsewhere would be one) fail the test."""
    contexts: list[Any] = []
    problems: list[str] = []

    def make(**options: Any) -> Any:
        context = browser.new_context(**options)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on(
            "console",
            lambda m: (
                problems.append(f"console: {m.text}")
                if m.type == "error" and "Content Security Policy" in m.text
                else None
            ),
        )
        return page

    yield make
    for context in contexts:
        context.close()
    assert not problems, problems


def _open(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")


def _converse(page: Any) -> None:
    """Say hello (completes), then ask (a question), so most of the page's parts are drawn."""
    for text, state in (("hello", "completed"), ("ask", "input-required")):
        page.locator("#composer-text").fill(text)
        page.get_by_role("button", name="Send").click()
        page.wait_for_function(
            "s => document.getElementById('task-state').textContent === s", arg=state
        )
    page.get_by_role("button", name="Refresh").click()
    page.locator("#tasks button").first.wait_for()
    page.locator("#log .exchange summary").first.click()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_light_and_dark_with_readable_contrast(new_page: Any, helper: str, scheme: str) -> None:
    page = new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    _open(page, helper)
    _converse(page)
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    channels = [int(v) for v in background[background.index("(") + 1 : -1].split(",")[:3]]
    if scheme == "dark":
        assert max(channels) < 80, background
    else:
        assert min(channels) > 200, background
    checked = page.evaluate(CONTRAST)
    assert len(checked) > 40  # the card, the conversation, the task list and the log
    poor = [
        f"{c['what']}: {c['ratio']:.2f} < {c['need']}" for c in checked if c["ratio"] < c["need"]
    ]
    assert poor == []


def test_a_narrow_screen_scrolls_only_down(new_page: Any, helper: str) -> None:
    page = new_page(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    _open(page, helper)
    _converse(page)
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
    composer = page.locator("#composer-text").bounding_box()
    assert composer is not None
    assert composer["x"] >= 0
    assert composer["x"] + composer["width"] <= 360


def test_nothing_is_requested_from_elsewhere(new_page: Any, helper: str) -> None:
    page = new_page(viewport={"width": 1280, "height": 900})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    _open(page, helper)
    _converse(page)
    assert requested
    elsewhere = [u for u in requested if not u.startswith((helper + "/", "blob:", "data:"))]
    assert elsewhere == []


def test_an_api_key_for_a_protected_agent(new_page: Any) -> None:
    with served_in_thread(helper_agent, port=free_port(), api_keys={"k3y": "tester"}) as url:
        page = new_page(viewport={"width": 1280, "height": 900})
        sent: list[dict[str, str]] = []
        page.on("request", lambda r: sent.append(r.headers) if r.method == "POST" else None)
        _open(page, url)
        label = page.locator("#auth-label").inner_text()
        assert label.startswith("API key (header ")
        page.locator("#auth-secret").fill("k3y")
        sent.clear()  # the task list asked before the key was there (and was refused)
        page.locator("#composer-text").fill("with a key")
        page.get_by_role("button", name="Send").click()
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'completed'"
        )
        assert "with a key" in page.locator(".artifact").last.inner_text()
        header = label.removeprefix("API key (header ").removesuffix(")").lower()
        assert sent
        assert all(headers.get(header) == "k3y" for headers in sent)
        assert page.evaluate("() => Object.values(sessionStorage)") == ["k3y"]


def test_the_playground_command_in_front_of_the_official_sdk(new_page: Any) -> None:
    sdk_port, port = free_port(), free_port()
    with asgi_in_thread(sdk_app(sdk_port), port=sdk_port) as sdk_url:
        command = [sys.executable, "-m", "a2a_core.cli", "playground", sdk_url + "/"]
        command += ["--no-browser", "--port", str(port)]
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT
        )
        try:
            local = f"http://127.0.0.1:{port}"
            _wait_for(local + "/playground/", proc)
            page = new_page(viewport={"width": 1280, "height": 900})
            _open(page, local)
            assert page.locator("h1").inner_text() == "SDK agent"
            page.locator("#composer-text").fill("hello sdk")
            page.get_by_role("button", name="Send").click()
            page.wait_for_function(
                "() => document.getElementById('task-state').textContent === 'completed'"
            )
            assert "Echo: hello sdk" in page.locator(".artifact").last.inner_text()
        finally:
            proc.terminate()
            proc.communicate(timeout=20)


def _wait_for(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"a2a playground exited {proc.returncode}: {proc.communicate()[1]}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail("a2a playground did not start")
