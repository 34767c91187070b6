"""The playground of a service hosting several agents, in headless Chromium (127.0.0.1).

The root page links to each agent's playground; each playground offers the others in its
Agent menu (from the service's AI Catalog), and choosing one opens that agent's page.
"""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core.server import RequestContext
from a2a_core.testing import free_port, served_in_thread

pytestmark = pytest.mark.timeout(120)


async def shout(context: RequestContext) -> str:
    """Says it louder."""
    return context.text.upper()


async def whisper(context: RequestContext) -> str:
    """Says it softer."""
    return context.text.lower()


def test_the_root_page_links_each_playground_and_the_menu_switches_agents(page: Any) -> None:
    with served_in_thread({"shout": shout, "team/whisper": whisper}, port=free_port()) as url:
        page.goto(url + "/")
        page.get_by_role("link", name="playground").first.click()
        page.wait_for_selector("body[data-ready=true]")
        assert page.url == url + "/shout/playground/"
        assert page.locator("h1").inner_text() == "shout"
        menu = page.locator("#agent-select")
        menu.wait_for(state="visible")
        assert menu.locator("option").all_inner_texts() == ["shout", "whisper"]
        menu.select_option(label="whisper")
        page.wait_for_url(url + "/team/whisper/playground/")
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("h1").inner_text() == "whisper"
        assert page.locator("#agent-select").input_value() == url + "/team/whisper/playground/"
        page.locator("#composer-text").fill("QUIET PLEASE")
        page.get_by_role("button", name="Send").click()
        page.get_by_text("quiet please").first.wait_for()


def test_a_single_agent_shows_no_menu(page: Any) -> None:
    with served_in_thread(shout, port=free_port()) as url:
        page.goto(url + "/")
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_timeout(300)  # the catalog is read after the card
        assert page.locator("#agent-switch").is_hidden()
