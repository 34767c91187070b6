"""The playground in headless Chromium, over real servers on 127.0.0.1.

Each test opens the agent's URL as a person would (the browser is sent to
``/playground/``) and uses the page: the card, a LangChain chain's streamed
answer growing, an input-required question answered, a slow task canceled,
a past task reopened, structured input and files, a token for a protected
agent, both protocol versions and bindings, and ``a2a playground``'s proxy
in front of the official SDK's server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from a2a_core.testing import asgi_in_thread, free_port, served_in_thread
from browser_support import STREAMED_WORDS, helper_agent, helper_card, sdk_app, streaming_chain

pytestmark = pytest.mark.timeout(120)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def helper() -> Iterator[str]:
    with served_in_thread(helper_agent, card=helper_card(), port=free_port()) as url:
        yield url


def open_page(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")
    assert page.url == url + "/playground/"


def send(page: Any, text: str) -> None:
    page.locator("#composer-text").fill(text)
    page.get_by_role("button", name="Send").click()


def task_state(page: Any) -> str:
    return page.locator("#task-state").inner_text().strip().lower()


def test_the_page_shows_the_card(page: Any, helper: str) -> None:
    open_page(page, helper)
    assert page.locator("h1").inner_text() == "Helper"
    card = page.locator("#card")
    text = card.inner_text()
    for expected in ("A small agent for trying the playground", "Talk", "Data"):
        assert expected in text
    assert "application/json" in text  # a skill's input/output modes
    assert "streaming: yes" in text
    assert "JSONRPC 1.0" in text
    assert "HTTP+JSON 0.3" in text
    examples = card.get_by_role("button", name="Use example: hello playground")
    assert examples.count() == 1
    assert page.locator("#auth").is_hidden()  # no security declared: no token field
    # keyboard: the example chips and the composer are reachable and usable
    examples.focus()
    page.keyboard.press("Enter")
    assert page.locator("#composer-text").input_value() == "hello playground"
    page.keyboard.press("Control+Enter")  # sends from the message box
    page.wait_for_function(
        "() => document.getElementById('task-state').textContent === 'completed'"
    )
    # every visible control has an accessible name (a label, its text or aria-label)
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('button, input, select, textarea')]
            .filter((e) => e.offsetParent !== null)
            .filter((e) => !(e.labels?.length || e.getAttribute('aria-label')
                              || e.textContent.trim()))
            .map((e) => e.outerHTML)"""
    )
    assert unnamed == []


def test_a_streaming_chain_answer_grows(page: Any) -> None:
    with served_in_thread(streaming_chain(), port=free_port()) as url:
        open_page(page, url)
        send(page, "go")
        artifact = page.locator(".artifact .parts")
        # the first words are on the page while the last has not arrived yet...
        page.wait_for_function(
            "() => document.querySelector('.artifact .parts')?.textContent.includes('bravo')"
        )
        early = artifact.inner_text()
        assert STREAMED_WORDS[-1] not in early
        # ...then the whole answer, in one artifact, and the task completes
        page.wait_for_function(
            "() => document.querySelector('.artifact .parts')?.textContent.includes('omega')"
        )
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'completed'"
        )
        assert artifact.inner_text().split() == STREAMED_WORDS
        assert page.locator(".artifact").count() == 1
        steps = page.locator(".timeline .state").all_inner_texts()
        assert [s.lower() for s in steps][-1] == "completed"


def test_an_input_required_question_is_answered(page: Any, helper: str) -> None:
    open_page(page, helper)
    send(page, "ask")
    page.wait_for_selector(".agent-message.question")
    assert "What is your name?" in page.locator(".question").inner_text()
    assert task_state(page) == "input-required"
    assert "answer" in page.locator("#composer-label").inner_text().lower()
    first_task = page.locator("#task-id").inner_text()
    send(page, "Ada")
    page.wait_for_function(
        "() => document.getElementById('task-state').textContent === 'completed'"
    )
    assert page.locator("#task-id").inner_text() == first_task  # the same task, continued
    answer = page.locator(".artifact").last
    assert answer.locator("strong").inner_text() == "Ada"  # Markdown rendered


def test_a_slow_task_is_resubscribed_and_canceled(page: Any, helper: str) -> None:
    open_page(page, helper)
    send(page, "slow")
    page.wait_for_function("() => document.getElementById('task-state').textContent === 'working'")
    assert "Working on something slow" in page.locator(".timeline").inner_text()
    # follow it again on a new stream (SubscribeToTask): the state arrives there
    page.get_by_role("button", name="Resubscribe").click()
    block = page.locator(".turn.agent", has_text="Resubscribed")
    block.locator(".timeline .state", has_text="working").wait_for()
    assert page.locator("#log .exchange", has_text="subscribe · A2A 1.0").count() == 1
    page.get_by_role("button", name="Cancel", exact=True).click()
    # the cancellation ends the resubscribed stream with its final state
    block.locator(".timeline .state", has_text="canceled").wait_for()
    page.wait_for_function("() => document.getElementById('task-state').textContent === 'canceled'")
    assert page.get_by_role("button", name="Cancel", exact=True).is_disabled()


def test_a_past_task_is_reopened_and_the_exchange_is_shown(page: Any, helper: str) -> None:
    open_page(page, helper)
    send(page, "remember me")
    page.wait_for_function(
        "() => document.getElementById('task-state').textContent === 'completed'"
    )
    task_id = page.locator("#task-id").inner_text()
    page.get_by_role("button", name="New conversation").click()
    assert page.locator("#conversation").inner_text() == ""
    page.get_by_role("button", name="Refresh").click()
    entry = page.locator(f'button[data-task="{task_id}"]')
    entry.wait_for()
    entry.click()
    page.wait_for_function(
        "id => document.getElementById('task-id').textContent === id", arg=task_id
    )
    conversation = page.locator("#conversation").inner_text()
    assert "remember me" in conversation
    assert "You said" in conversation
    # the raw exchange of that step: a GetTask over JSON-RPC 1.0
    log = page.locator("#log .exchange", has_text="get · A2A").first
    assert "get · A2A 1.0 JSONRPC → 200" in log.inner_text()
    log.locator("summary").click()
    assert '"method": "GetTask"' in log.inner_text()


def test_structured_input_and_files(page: Any, helper: str, tmp_path: Any) -> None:
    open_page(page, helper)
    page.get_by_role("button", name='Use example: {"city": "Porto", "days": 3}').click()
    data = page.locator("#composer-data")
    assert json.loads(data.input_value()) == {"city": "Porto", "days": 3}
    page.get_by_role("button", name="Send").click()
    page.wait_for_selector(".artifact .data pre")
    shown = json.loads(page.locator(".artifact .data pre").inner_text())
    assert shown == {"received": {"city": "Porto", "days": 3}}
    # invalid JSON is refused on the page, with the field marked
    page.locator("#composer-data").fill("{not json")
    page.get_by_role("button", name="Send").click()
    assert "not valid JSON" in page.locator("#notice").inner_text()
    assert data.get_attribute("aria-invalid") == "true"
    page.locator("#composer-data").fill("")
    # a file goes as a file part and comes back previewed, with a download link
    picture = tmp_path / "dot.png"
    picture.write_bytes(PNG)
    page.get_by_label("Attach files").set_input_files(str(picture))
    page.get_by_role("button", name="Send").click()
    page.wait_for_selector(".artifact figure.file img")
    assert page.locator(".artifact figure.file img").get_attribute("alt") == "echo-dot.png"
    link = page.locator(".artifact figure.file a")
    assert link.get_attribute("download") == "echo-dot.png"
    assert link.get_attribute("href").startswith("blob:")


@pytest.mark.parametrize(
    ("version", "binding"), [("0.3", "JSONRPC"), ("0.3", "HTTP+JSON"), ("1.0", "HTTP+JSON")]
)
def test_other_versions_and_bindings(page: Any, helper: str, version: str, binding: str) -> None:
    open_page(page, helper)
    page.get_by_label("Protocol").select_option(version)
    page.get_by_label("Binding").select_option(binding)
    for streaming in (True, False):
        page.get_by_label("Stream (SSE)").set_checked(streaming)
        send(page, "ask")
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'input-required'"
        )
        send(page, f"Ada {version}")
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'completed'"
        )
        assert f"Hello, Ada {version}!" in page.locator(".artifact").last.inner_text()
    sent = page.locator("#log .exchange", has_text="send · A2A").first
    assert f"A2A {version} {binding}" in sent.locator("summary").inner_text()
    sent.locator("summary").click()
    wire = sent.inner_text()
    if binding == "JSONRPC":
        assert '"method": "message/send"' in wire
    else:
        assert ("/v1/message:send" if version == "0.3" else "/message:send") in wire


def test_a_token_for_a_protected_agent(page: Any) -> None:
    with served_in_thread(
        helper_agent, port=free_port(), bearer_tokens={"s3cret": "tester"}
    ) as url:
        open_page(page, url)
        assert page.locator("#auth").is_visible()
        assert "security" in page.locator("#card").inner_text().lower()
        send(page, "no token")
        page.wait_for_selector("#notice:not([hidden])")
        # the newest exchange may still be in flight (the task list refreshes too): let it answer
        page.wait_for_function(
            "() => !document.querySelector('#log .exchange summary').textContent.endsWith('…')"
        )
        assert "401" in page.locator("#log .exchange summary").first.inner_text()
        page.get_by_label("Bearer token").fill("s3cret")
        send(page, "with token")
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'completed'"
        )
        assert "with token" in page.locator(".artifact").last.inner_text()
        # kept for this tab only, and never shown in the exchange log
        assert page.evaluate("() => Object.values(sessionStorage)") == ["s3cret"]
        assert page.evaluate("() => localStorage.length") == 0
        page.locator("#log .exchange summary").first.click()
        assert "s3cret" not in page.locator("#log").inner_text()
        # a reload keeps it (session storage)
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert page.get_by_label("Bearer token").input_value() == "s3cret"


def test_the_proxy_in_front_of_the_official_sdk(page: Any) -> None:
    from a2a_core.cli.proxy import PlaygroundProxy

    sdk_port, proxy_port = free_port(), free_port()
    with asgi_in_thread(sdk_app(sdk_port), port=sdk_port) as sdk_url:
        proxy = PlaygroundProxy(sdk_url, allowed_hosts=(f"127.0.0.1:{proxy_port}",))
        with asgi_in_thread(proxy, port=proxy_port) as local:
            open_page(page, local)
            assert page.locator("h1").inner_text() == "SDK agent"
            send(page, "hello sdk")
            page.wait_for_function(
                "() => document.getElementById('task-state').textContent === 'completed'"
            )
            assert "Echo: hello sdk" in page.locator(".artifact").last.inner_text()
            # every call went to this server, through the proxy
            streamed = page.locator("#log .exchange", has_text="stream · A2A").first
            streamed.locator("summary").click()
            assert f"POST {local}/proxy" in streamed.inner_text()
            # the SDK's HTTP+JSON binding (at /rest), with a question on the way
            page.get_by_label("Binding").select_option("HTTP+JSON")
            send(page, "ask")
            page.wait_for_selector(".agent-message.question")
            send(page, "Grace")
            page.wait_for_function(
                "() => document.getElementById('task-state').textContent === 'completed'"
            )
            assert "Hello, Grace" in page.locator(".artifact").last.inner_text()
            streamed = page.locator("#log .exchange", has_text="stream · A2A 1.0 HTTP+JSON")
            streamed.first.locator("summary").click()
            assert f"POST {local}/proxy/rest/message:stream" in streamed.first.inner_text()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")
def test_a_crews_past_tasks_are_listed_by_their_question(page: Any) -> None:
    """A crew's history ends with its progress messages: the list still shows the question."""
    from browser_support import planning_crew

    with served_in_thread(planning_crew(), port=free_port()) as url:
        open_page(page, url)
        send(page, "Lisbon in May")
        page.wait_for_function(
            "() => document.getElementById('task-state').textContent === 'completed'",
            timeout=60_000,
        )
        task_id = page.locator("#task-id").inner_text()
        page.get_by_role("button", name="Refresh").click()
        entry = page.locator(f'button[data-task="{task_id}"]')
        entry.wait_for()
        assert entry.inner_text().split(None, 1)[1] == "Lisbon in May"
