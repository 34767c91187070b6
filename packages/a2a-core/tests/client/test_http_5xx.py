"""A server error whose body is not JSON-RPC (a proxy's page) is reported with its status and
first line, by our client and by ``a2a`` (real sockets: a card, then 502s from "a proxy")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from a2a_core import InternalError
from a2a_core.cli import main
from a2a_core.client import A2AClient
from a2a_core.testing import asgi_in_thread

PAGE = b"<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>\n"
SAID = "HTTP 502 Bad Gateway: <html><head><title>502 Bad Gateway</title></head>"


def card(base: str) -> dict[str, Any]:
    return {
        "name": "Behind a proxy",
        "description": "Its proxy fails",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


async def proxy(scope: Any, receive: Any, send: Any) -> None:
    """The card where it belongs; every other request a 502 HTML page."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    host = dict(scope["headers"])[b"host"].decode()
    if scope["path"] == "/.well-known/agent-card.json":
        status, kind, body = 200, b"application/json", json.dumps(card(f"http://{host}")).encode()
    else:
        status, kind, body = 502, b"text/html", PAGE
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]}
    )
    await send({"type": "http.response.body", "body": body})


async def drain(client: A2AClient, text: str) -> None:
    async with client.stream(text) as events:
        async for _ in events:
            pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with asgi_in_thread(proxy) as served:
        yield served


@pytest.mark.parametrize(
    ("version", "binding"), [("1.0", "JSONRPC"), ("0.3", "JSONRPC"), ("1.0", "HTTP+JSON")]
)
async def test_our_client_says_the_status_and_the_first_line(
    url: str, version: str, binding: str
) -> None:
    async with await A2AClient.connect(
        url, preferred_versions=[version], preferred_bindings=[binding], timeout=5
    ) as client:
        with pytest.raises(InternalError) as sent:
            await client.send("hi")
        with pytest.raises(InternalError) as streamed:
            await drain(client, "hi")
    assert str(sent.value) == SAID
    assert str(streamed.value) == SAID


def test_a2a_says_the_status_and_the_first_line(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["send", url, "hi"])
    err = capsys.readouterr().err
    assert code == 3
    assert SAID in err
    assert "decode" not in err.lower()
