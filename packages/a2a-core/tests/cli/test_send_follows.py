"""A blocking ``a2a send`` whose answer comes back unfinished follows the task (real sockets).

The server ignores ``blocking`` (a wrapper turns every send into a
non-blocking one, as some servers behave): the answer is a WORKING task.
``a2a send`` says so on stderr and follows the task until it ends, or until
it asks for input, then shows it as usual; both the one-shot path and the
client path (0.3).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from a2a_core import configure_service, create_app
from a2a_core.cli import main
from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.testing import asgi_in_thread


async def slow(context: RequestContext, updater: TaskUpdater) -> str | None:
    """Works a while; asks for a date when told to book."""
    await updater.start_work("thinking")
    await asyncio.sleep(0.4)
    if context.text == "book":
        await updater.require_input("For which day?")
        return None
    return f"done: {context.text}"


def ignoring_blocking(app: Any) -> Any:
    """``app`` behind a front that makes every send non-blocking."""

    async def front(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        params = request.get("params") or {}
        if request.get("method") == "SendMessage":
            params.setdefault("configuration", {})["returnImmediately"] = True
        elif request.get("method") == "message/send":
            params.setdefault("configuration", {})["blocking"] = False
        replayed = json.dumps(request).encode()
        sent = False

        async def again() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": replayed, "more_body": False}

        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(replayed)).encode()))
        await app({**scope, "headers": headers}, again, send)

    return front


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    app = create_app(configure_service(slow, name="Slow"))
    with asgi_in_thread(ignoring_blocking(app), lifespan="on") as served:
        yield served


@pytest.mark.parametrize("how", [[], ["--protocol-version", "0.3"]], ids=["one-shot", "client"])
def test_a_blocking_send_follows_an_unfinished_task_to_its_end(
    url: str, how: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["send", url, "hello", *how])
    out, err = capsys.readouterr()
    assert code == 0
    assert "the agent answered before task" in err
    assert "following it until it ends or needs input" in err
    assert "done: hello" in out
    assert "completed" in out


def test_it_stops_when_the_agent_asks_for_input(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["send", url, "book"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "following it" in err
    assert "For which day?" in out
    assert "a2a send" in out  # how to answer


def test_no_wait_still_returns_at_once(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["send", url, "hello", "--no-wait"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "following" not in err
    assert "done: hello" not in out
