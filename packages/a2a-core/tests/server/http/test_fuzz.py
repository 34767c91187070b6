"""Nothing a client sends produces a 5xx or escapes the app as an exception."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a_core.server import A2AService
from a2a_core.server.asgi import A2AApp, create_app
from a2a_core.wire import Operation
from a2a_http_support import echo, make_card, parse_sse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
methods = st.sampled_from(
    [op.value for op in Operation]
    + [m for op in Operation if (m := op.method("0.3")) is not None]
    + ["", "rpc.discover", "tasks/list"]
)
message_like = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["ROLE_USER", "user", "agent", 3, None]),
        "parts": st.lists(
            st.dictionaries(
                st.sampled_from(["text", "kind", "data", "raw", "url", "file", "mediaType"]),
                json_values,
                max_size=3,
            ),
            max_size=3,
        ),
        "messageId": st.text(max_size=8) | st.integers(),
    }
)
params = json_values | st.fixed_dictionaries(
    {},
    optional={
        "message": message_like,
        "id": st.text(max_size=8) | st.integers(),
        "taskId": st.text(max_size=8),
        "historyLength": st.integers(-5, 5) | st.text(max_size=3),
        "configuration": st.dictionaries(
            st.sampled_from(
                ["returnImmediately", "blocking", "historyLength", "acceptedOutputModes"]
            ),
            json_values,
            max_size=2,
        ),
        "pageSize": st.integers(-2, 200),
        "status": st.text(max_size=20),
    },
)
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2]), "method": methods},
    optional={
        "id": st.integers() | st.text(max_size=5) | st.none() | json_values,
        "params": params,
    },
)
versions = st.sampled_from([None, "", "1.0", "0.3", "99.0", "1", "x"])
content_types = st.sampled_from(["application/json", "application/a2a+json", "text/plain", None])


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def fuzz_app(loop: asyncio.AbstractEventLoop) -> Iterator[A2AApp]:
    svc = A2AService(echo, make_card())
    yield create_app(svc, max_body_bytes=20_000)
    loop.run_until_complete(svc.aclose())


def run(loop: asyncio.AbstractEventLoop, app: A2AApp, method: str, path: str, **kw: Any) -> Any:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://fuzz.test"
        ) as client:
            return await client.request(method, "http://fuzz.test" + path, **kw)

    return loop.run_until_complete(go())


def check(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.request.method == "HEAD":
        return  # servers drop bodies of HEAD responses
    if response.status_code == 204:
        assert response.content == b""
        return
    kind = response.headers.get("content-type", "")
    if kind == "text/event-stream":
        assert parse_sse(response.text)
    elif kind.startswith(("text/plain", "text/html")):
        # the page for people opening the agent's URL (test_landing.py): GET / only
        assert (response.request.method, response.request.url.path) == ("GET", "/")
        assert response.status_code == 200
    elif response.status_code != 304:
        json.loads(response.content)


fuzz_settings = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@fuzz_settings
@given(body=envelopes, version=versions, content_type=content_types)
def test_jsonrpc_envelopes(
    loop: asyncio.AbstractEventLoop,
    fuzz_app: A2AApp,
    body: Any,
    version: str | None,
    content_type: str | None,
) -> None:
    headers = {} if version is None else {"A2A-Version": version}
    if content_type is not None:
        headers["content-type"] = content_type
    response = run(loop, fuzz_app, "POST", "/", content=json.dumps(body), headers=headers)
    check(response)
    if response.status_code == 200 and response.headers["content-type"] == "application/json":
        payload = response.json()
        assert payload["jsonrpc"] == "2.0"
        assert ("result" in payload) != ("error" in payload)


@fuzz_settings
@given(raw=st.binary(max_size=300))
def test_jsonrpc_raw_bytes(loop: asyncio.AbstractEventLoop, fuzz_app: A2AApp, raw: bytes) -> None:
    response = run(
        loop, fuzz_app, "POST", "/", content=raw, headers={"content-type": "application/json"}
    )
    check(response)
    assert response.json()["error"]["code"] in (-32700, -32600, -32601, -32602, -32009)


segments = st.sampled_from(
    [
        "tasks",
        "message:send",
        "message:stream",
        "v1",
        "card",
        "extendedAgentCard",
        "pushNotificationConfigs",
        "x:cancel",
        "x:subscribe",
        "x",
        "",
        "%2F",
        "..",
        ":",
    ]
) | st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#%"), max_size=6
)


@fuzz_settings
@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS"]),
    parts=st.lists(segments, min_size=1, max_size=5),
    query=st.dictionaries(
        st.sampled_from(
            [
                "historyLength",
                "pageSize",
                "status",
                "contextId",
                "includeArtifacts",
                "statusTimestampAfter",
                "pageToken",
                "A2A-Version",
            ]
        ),
        st.text(max_size=8),
        max_size=3,
    ),
    body=json_values | st.fixed_dictionaries({"message": message_like}),
    version=versions,
)
def test_rest_requests(
    loop: asyncio.AbstractEventLoop,
    fuzz_app: A2AApp,
    method: str,
    parts: list[str],
    query: dict[str, str],
    body: Any,
    version: str | None,
) -> None:
    headers = {} if version is None else {"A2A-Version": version}
    kw: dict[str, Any] = {"params": query, "headers": headers}
    if method in ("POST", "PUT"):
        kw["json"] = body
    check(run(loop, fuzz_app, method, "/" + "/".join(parts), **kw))
