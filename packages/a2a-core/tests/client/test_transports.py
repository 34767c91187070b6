"""What the HTTP transports put on the wire and what they accept back.

A recording raw ASGI server on 127.0.0.1 answers with canned bodies, so
these tests pin the requests (methods, routes, headers, tenant) and the
response validation independently of any A2A server implementation.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

import httpx
import pytest
from a2a_core import (
    A2AError,
    AuthenticationRequiredError,
    InternalError,
    InvalidAgentResponseError,
    Task,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_core.client import A2AClient, A2AConnectionError, A2ATimeoutError
from a2a_core.wire import dumps, loads
from servers import free_port, read_body, respond, running, wait_for

TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
SUBMITTED = {**TASK, "status": {"state": "TASK_STATE_SUBMITTED"}}
TASK_V03 = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


Reply = tuple[int, bytes, str]  # status, body, content type
Handler = Callable[[Seen], Reply | list[bytes] | None]


@dataclass
class Recorder:
    """A raw ASGI app: records each request, answers with ``handler``'s reply."""

    handler: Handler = field(default=lambda seen: None)
    seen: list[Seen] = field(default_factory=list[Seen])
    disconnected: threading.Event = field(default_factory=threading.Event)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        raw = await read_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        body = loads(raw) if raw else None
        query = dict(parse_qsl(scope["query_string"].decode()))
        path = scope.get("raw_path", scope["path"].encode()).decode().split("?", 1)[0]
        seen = Seen(scope["method"], path, query, headers, body)
        self.seen.append(seen)
        reply = self.handler(seen)
        if reply is None:  # never answer; notice the client hanging up
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnected.set()
            return
        if isinstance(reply, list):  # an SSE stream of frames
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            for frame in reply:
                if frame == b"HANG":
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    self.disconnected.set()
                    return
                await send({"type": "http.response.body", "body": frame, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        status, body_bytes, content_type = reply
        await respond(send, status, body_bytes, content_type=content_type.encode())


def rpc_result(result: Any, request_id: Any = None) -> Handler:
    def handler(seen: Seen) -> Reply:
        rid = seen.body["id"] if request_id is None else request_id
        return 200, dumps({"jsonrpc": "2.0", "id": rid, "result": result}), "application/json"

    return handler


def raw(body: bytes, status: int = 200) -> Handler:
    return lambda seen: (status, body, "application/json")


def sse(*values: Any, hang: bool = False) -> list[bytes]:
    frames = [b"data: " + dumps(v) + b"\n\n" for v in values]
    return [*frames, b"HANG"] if hang else frames


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder()
    with running(recorder) as url:
        yield recorder, url


@pytest.fixture
def rec(server: tuple[Recorder, str]) -> Iterator[tuple[Recorder, str]]:
    recorder, url = server
    recorder.seen.clear()
    recorder.disconnected.clear()
    yield recorder, url
    recorder.handler = lambda seen: None


def jsonrpc(url: str, version: str = "1.0", **kwargs: Any) -> A2AClient:
    return A2AClient.for_endpoint(url + "/rpc", version=version, timeout=5, **kwargs)


def rest(url: str, version: str = "1.0", **kwargs: Any) -> A2AClient:
    return A2AClient.for_endpoint(
        url + "/api", binding="HTTP+JSON", version=version, timeout=5, **kwargs
    )


# --- requests ----------------------------------------------------------------------------


async def test_jsonrpc_1_0_request(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = rpc_result({"task": TASK})
    async with jsonrpc(url, extensions=["urn:ext:a", "urn:ext:b"]) as client:
        reply = await client.send("hi", context_id="c1", history_length=2)
    assert reply.task is not None
    assert reply.task.id == "t1"
    seen = recorder.seen[0]
    assert (seen.method, seen.path) == ("POST", "/rpc")
    assert seen.headers["a2a-version"] == "1.0"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["a2a-extensions"] == "urn:ext:a,urn:ext:b"
    assert seen.body["jsonrpc"] == "2.0"
    assert seen.body["method"] == "SendMessage"
    params = seen.body["params"]
    assert params["message"]["parts"] == [{"text": "hi"}]
    assert params["message"]["role"] == "ROLE_USER"
    assert params["message"]["contextId"] == "c1"
    assert params["configuration"] == {"historyLength": 2}
    assert "tenant" not in params


async def test_jsonrpc_0_3_request_has_no_version_header(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = rpc_result(TASK_V03)
    async with jsonrpc(url, version="0.3", extensions=["urn:ext:a"]) as client:
        reply = await client.send("hi")
    assert reply.state is TaskState.COMPLETED
    seen = recorder.seen[0]
    assert "a2a-version" not in seen.headers
    assert seen.headers["x-a2a-extensions"] == "urn:ext:a"
    assert seen.body["method"] == "message/send"
    assert seen.body["params"]["message"]["kind"] == "message"
    assert seen.body["params"]["message"]["parts"] == [{"kind": "text", "text": "hi"}]


async def test_tenant_is_echoed_in_jsonrpc_params(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = rpc_result(TASK)
    async with jsonrpc(url, tenant="acme") as client:
        await client.get_task("t1")
        recorder.handler = rpc_result({"task": TASK})
        await client.send("hi")
    assert recorder.seen[0].body["method"] == "GetTask"
    assert recorder.seen[0].body["params"] == {"tenant": "acme", "id": "t1"}
    assert recorder.seen[1].body["params"]["tenant"] == "acme"


async def test_rest_1_0_routes_and_tenant_prefix(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec

    def handler(seen: Seen) -> Reply:
        path = seen.path
        if path.endswith("message:send"):
            return 200, dumps({"task": TASK}), "application/a2a+json"
        if path.endswith("/tasks"):
            page = {"tasks": [TASK], "nextPageToken": "", "pageSize": 1, "totalSize": 1}
            return 200, dumps(page), "application/json"
        if "pushNotificationConfigs" in path:
            if seen.method == "DELETE":
                return 200, b"{}", "application/json"
            config = {"id": "p1", "taskId": "t1", "url": "https://hook.test/x"}
            if seen.method == "GET" and path.endswith("pushNotificationConfigs"):
                return 200, dumps({"configs": [config]}), "application/json"
            return 200, dumps(config), "application/json"
        return 200, dumps(TASK), "application/json"

    recorder.handler = handler
    async with rest(url, tenant="acme corp") as client:
        await client.send("hi")
        await client.get_task("t1", history_length=0)
        await client.list_tasks(
            context_id="c1", status=TaskState.WORKING, page_size=5, include_artifacts=True
        )
        await client.cancel("t1")
        await client.create_push_config("t1", "https://hook.test/x", token="tok")
        await client.get_push_config("t1", "p1")
        await client.list_push_configs("t1", page_size=3)
        await client.delete_push_config("t1", "p1")
    calls = [(s.method, s.path, s.query) for s in recorder.seen]
    assert calls == [
        ("POST", "/api/acme%20corp/message:send", {}),
        ("GET", "/api/acme%20corp/tasks/t1", {"historyLength": "0"}),
        (
            "GET",
            "/api/acme%20corp/tasks",
            {
                "contextId": "c1",
                "status": "TASK_STATE_WORKING",
                "pageSize": "5",
                "includeArtifacts": "true",
            },
        ),
        ("POST", "/api/acme%20corp/tasks/t1:cancel", {}),
        ("POST", "/api/acme%20corp/tasks/t1/pushNotificationConfigs", {}),
        ("GET", "/api/acme%20corp/tasks/t1/pushNotificationConfigs/p1", {}),
        ("GET", "/api/acme%20corp/tasks/t1/pushNotificationConfigs", {"pageSize": "3"}),
        ("DELETE", "/api/acme%20corp/tasks/t1/pushNotificationConfigs/p1", {}),
    ]
    send, cancel, create = recorder.seen[0], recorder.seen[3], recorder.seen[4]
    assert send.headers["a2a-version"] == "1.0"
    assert send.headers["content-type"] == "application/a2a+json"
    assert "tenant" not in send.body
    assert send.body["message"]["parts"] == [{"text": "hi"}]
    assert cancel.body == {}
    assert create.body == {"taskId": "t1", "url": "https://hook.test/x", "token": "tok"}
    assert recorder.seen[1].body is None


async def test_rest_0_3_uses_v1_routes(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec

    def handler(seen: Seen) -> Reply:
        task = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_CANCELLED"}}
        if seen.path.endswith("message:send"):
            return 200, dumps({"task": task}), "application/json"
        return 200, dumps(task), "application/json"

    recorder.handler = handler
    async with rest(url, version="0.3") as client:
        reply = await client.send("hi")
        await client.get_task("t1", history_length=3)
        canceled = await client.cancel("t1")
    assert reply.state is TaskState.CANCELED
    assert canceled.status.state is TaskState.CANCELED
    calls = [(s.method, s.path, s.query) for s in recorder.seen]
    assert calls == [
        ("POST", "/api/v1/message:send", {}),
        ("GET", "/api/v1/tasks/t1", {"historyLength": "3"}),
        ("POST", "/api/v1/tasks/t1:cancel", {}),
    ]
    assert "a2a-version" not in recorder.seen[0].headers
    assert recorder.seen[0].body["message"]["content"] == [{"text": "hi"}]


async def test_rest_urls_parsed_once_still_follow_each_call(rec: tuple[Recorder, str]) -> None:
    """The HTTP+JSON client keeps a few parsed URLs: each call still goes to its own
    path, past the number kept and back to an evicted one."""
    recorder, url = rec
    recorder.handler = lambda seen: (
        200,
        dumps({**TASK, "id": unquote(seen.path.rsplit("/", 1)[1])}),
        "application/json",
    )
    ids = [f"t{i}" for i in range(80)] + ["t0", "t79", "a b:c"]
    async with rest(url) as client:
        for task_id in ids:
            await client.get_task(task_id)
    paths = [s.path for s in recorder.seen]
    assert paths == [f"/api/tasks/{i}" for i in ids[:-1]] + ["/api/tasks/a%20b%3Ac"]


async def test_auth_headers_and_httpx_auth_are_sent(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = rpc_result(TASK)
    async with jsonrpc(url, headers={"X-Api-Key": "k1"}) as client:
        await client.get_task("t1")
    async with jsonrpc(url, auth=httpx.BasicAuth("ada", "secret")) as client:
        await client.get_task("t1")
    assert recorder.seen[0].headers["x-api-key"] == "k1"
    assert recorder.seen[1].headers["authorization"].startswith("Basic ")


async def test_a_given_http_client_is_used_and_left_open(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = rpc_result(TASK)
    async with httpx.AsyncClient(headers={"X-From": "mine"}) as http:
        async with jsonrpc(url, http_client=http, headers={"X-Extra": "1"}) as client:
            await client.get_task("t1")
        assert not http.is_closed
    assert recorder.seen[0].headers["x-from"] == "mine"
    assert recorder.seen[0].headers["x-extra"] == "1"
    with pytest.raises(ValueError, match="auth"):
        jsonrpc(url, http_client=httpx.AsyncClient(), auth=httpx.BasicAuth("a", "b"))


# --- response validation -----------------------------------------------------------------

GARBAGE = {
    "not json": b"<html>oops</html>",
    "array": b"[1, 2]",
    "wrong jsonrpc": dumps({"jsonrpc": "1.0", "id": 1, "result": TASK}),
    "no jsonrpc": dumps({"id": 1, "result": TASK}),
    "result and error": dumps(
        {"jsonrpc": "2.0", "id": 1, "result": TASK, "error": {"code": 1, "message": "x"}}
    ),
    "neither": dumps({"jsonrpc": "2.0", "id": 1}),
    "wrong id": dumps({"jsonrpc": "2.0", "id": 99, "result": TASK}),
    "string id": dumps({"jsonrpc": "2.0", "id": "1", "result": TASK}),
    "bad result": dumps({"jsonrpc": "2.0", "id": 1, "result": {"id": 5}}),
    "error, other id": dumps(
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "x"}}
    ),
    "other task": dumps({"jsonrpc": "2.0", "id": 1, "result": {**TASK, "id": "t2"}}),
}


@pytest.mark.parametrize("body", GARBAGE.values(), ids=GARBAGE.keys())
async def test_garbage_is_an_invalid_agent_response(rec: tuple[Recorder, str], body: bytes) -> None:
    recorder, url = rec
    recorder.handler = raw(body)
    async with jsonrpc(url) as client:
        with pytest.raises(InvalidAgentResponseError) as caught:
            await client.get_task("t1")
    assert caught.value.code == -32006


NON_FINITE = {
    "NaN": b'{"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, '
    b'"metadata": {"x": NaN}}',
    "Infinity": b'{"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, '
    b'"metadata": {"x": -Infinity}}',
    "out of range": b'{"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, '
    b'"metadata": {"x": 1e999}}',
}


@pytest.mark.parametrize("task", NON_FINITE.values(), ids=NON_FINITE.keys())
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_non_finite_number_is_refused_by_both_bindings(
    rec: tuple[Recorder, str], task: bytes, binding: str
) -> None:
    """Results are validated straight from the bytes when that answers as parsing then
    validating would: JSON has no NaN or infinity, so either way they are refused."""
    recorder, url = rec
    if binding == "JSONRPC":
        recorder.handler = lambda seen: (
            200,
            b'{"jsonrpc": "2.0", "id": %d, "result": ' % seen.body["id"] + task + b"}",
            "application/json",
        )
        client = jsonrpc(url)
    else:
        recorder.handler = raw(task)
        client = rest(url)
    async with client:
        with pytest.raises(InvalidAgentResponseError, match=r"Invalid JSON|out of range"):
            await client.get_task("t1")


async def test_rest_results_decoded_directly_equal_the_general_way(
    rec: tuple[Recorder, str],
) -> None:
    """A 1.0 HTTP+JSON result read straight into its model equals the parse-then-validate
    result, and a malformed one is still described precisely."""
    recorder, url = rec
    full = {
        **TASK,
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}, {"raw": "aGk="}]}],
        "metadata": {"n": 1.5, "deep": [{"k": None}]},
    }
    recorder.handler = raw(dumps(full))
    async with rest(url) as client:
        task = await client.get_task("t1")
    assert task == Task.model_validate(full)
    assert task.artifacts[0].parts[1].raw == b"hi"
    recorder.handler = raw(dumps({"task": full}))
    async with rest(url) as client:
        sent = await client.send("hi")
    assert sent.task == Task.model_validate(full)
    recorder.handler = raw(dumps({"id": 5}))
    async with rest(url) as client:
        with pytest.raises(InvalidAgentResponseError, match="Malformed result"):
            await client.get_task("t1")


async def test_error_with_null_id_is_still_typed(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    error = {"code": -32001, "message": "gone", "data": [{"@type": "x"}]}
    recorder.handler = raw(dumps({"jsonrpc": "2.0", "id": None, "error": error}))
    async with jsonrpc(url) as client:
        with pytest.raises(TaskNotFoundError, match="gone"):
            await client.get_task("t1")


async def test_http_errors_are_typed(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = lambda seen: (401, b"", "text/plain")
    async with jsonrpc(url) as client:
        with pytest.raises(AuthenticationRequiredError):
            await client.get_task("t1")
    recorder.handler = lambda seen: (502, b"Bad gateway", "text/plain")
    async with rest(url) as client:
        with pytest.raises(InternalError):
            await client.get_task("t1")
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "nope"}}
    recorder.handler = raw(dumps(error), status=500)
    async with jsonrpc(url) as client:
        with pytest.raises(TaskNotFoundError, match="nope"):
            await client.get_task("t1")


async def test_response_size_is_bounded(rec: tuple[Recorder, str]) -> None:
    from a2a_core.wire import DecodeLimits

    recorder, url = rec
    big = {**TASK, "metadata": {"blob": "x" * 5000}}
    recorder.handler = rpc_result(big)
    async with jsonrpc(url, response_limits=DecodeLimits(max_bytes=4096)) as client:
        with pytest.raises(InvalidAgentResponseError, match="limit"):
            await client.get_task("t1")


# --- streams -----------------------------------------------------------------------------


def rpc_frames(*results: Any, request_id: int = 1) -> list[Any]:
    return [{"jsonrpc": "2.0", "id": request_id, "result": r} for r in results]


WORKING = {
    "statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
}
DONE = {
    "statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
}


async def test_stream_ends_at_the_settling_event_even_if_the_server_keeps_it_open(
    rec: tuple[Recorder, str],
) -> None:
    recorder, url = rec
    frames = rpc_frames({"task": SUBMITTED}, WORKING, DONE, WORKING)
    recorder.handler = lambda seen: sse(*frames, hang=True)
    async with jsonrpc(url) as client:
        async with asyncio.timeout(5):
            events = [e async for e in client.stream("hi")]
    assert [type(e).__name__ for e in events] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert recorder.seen[0].headers["accept"] == "text/event-stream"
    assert recorder.seen[0].body["method"] == "SendStreamingMessage"
    assert wait_for(recorder.disconnected.is_set)  # the connection was released


async def test_stream_error_frame_is_raised_when_the_stream_opens(
    rec: tuple[Recorder, str],
) -> None:
    recorder, url = rec
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "no streaming"}}
    recorder.handler = lambda seen: sse(error)
    async with jsonrpc(url) as client:
        stream = client.stream("hi")
        with pytest.raises(UnsupportedOperationError, match="no streaming"):
            await stream.__aenter__()


async def test_stream_error_midway_is_raised_while_iterating(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "crashed"}}
    recorder.handler = lambda seen: sse(*rpc_frames({"task": SUBMITTED}), error)
    async with jsonrpc(url) as client:
        stream = client.stream("hi")
        first = await stream.__anext__()
        with pytest.raises(InternalError, match="crashed"):
            await stream.__anext__()
    assert isinstance(first, Task)


async def test_stream_frame_with_wrong_id_is_invalid(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = lambda seen: sse(*rpc_frames({"task": SUBMITTED}, request_id=42))
    async with jsonrpc(url) as client:
        with pytest.raises(InvalidAgentResponseError):
            await client.stream("hi").result()


async def test_stream_answered_with_plain_json_error(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}}
    recorder.handler = raw(dumps(error))
    async with jsonrpc(url) as client:
        with pytest.raises(TaskNotFoundError):
            await client.subscribe("t9").result()


async def test_rest_subscribe_retries_with_get_on_405(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec

    def handler(seen: Seen) -> Reply | list[bytes]:
        if seen.method == "POST":
            return 405, b"", "text/plain"
        return sse({"task": {**TASK, "status": {"state": "TASK_STATE_WORKING"}}}, DONE)

    recorder.handler = handler
    async with rest(url) as client:
        result = await client.subscribe("t1").result()
    assert result.state is TaskState.COMPLETED
    assert [(s.method, s.path) for s in recorder.seen] == [
        ("POST", "/api/tasks/t1:subscribe"),
        ("GET", "/api/tasks/t1:subscribe"),
    ]


async def test_empty_stream_has_no_result(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = lambda seen: sse()
    async with jsonrpc(url) as client:
        with pytest.raises(InvalidAgentResponseError, match="without any event"):
            await client.stream("hi").result()


# --- time, failures, cancellation, concurrency ------------------------------------------


async def test_timeout_is_typed(rec: tuple[Recorder, str]) -> None:
    _, url = rec  # the default handler never answers
    client = A2AClient.for_endpoint(url + "/rpc", timeout=0.3)
    async with client:
        with pytest.raises(A2ATimeoutError) as caught:
            await client.get_task("t1")
    assert isinstance(caught.value, TimeoutError)
    assert isinstance(caught.value, A2AError)


async def test_unreachable_agent_is_typed() -> None:
    client = A2AClient.for_endpoint(f"http://127.0.0.1:{free_port()}/", timeout=2)
    async with client:
        with pytest.raises(A2AConnectionError):
            await client.get_task("t1")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_cancelling_the_caller_closes_the_http_request(
    rec: tuple[Recorder, str], binding: str
) -> None:
    recorder, url = rec  # never answers
    async with A2AClient.for_endpoint(url + "/x", binding=binding, timeout=30) as client:
        assert client.can_cancel_in_flight
        assert client.concurrent_calls
        call = asyncio.get_running_loop().create_task(client.send("hello"))
        assert await asyncio.to_thread(wait_for, lambda: len(recorder.seen) == 1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await asyncio.to_thread(wait_for, recorder.disconnected.is_set)


async def test_closing_a_stream_closes_the_http_request(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = lambda seen: sse(*rpc_frames({"task": SUBMITTED}), hang=True)
    async with jsonrpc(url) as client:
        stream = client.stream("hi")
        first = await stream.__anext__()
        assert isinstance(first, Task)
        await stream.aclose()
        assert await asyncio.to_thread(wait_for, recorder.disconnected.is_set)
        with pytest.raises(StopAsyncIteration):
            await stream.__anext__()


async def test_concurrent_calls_on_one_client(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    recorder.handler = lambda seen: (
        200,
        dumps(
            {
                "jsonrpc": "2.0",
                "id": seen.body["id"],
                "result": {**TASK, "id": seen.body["params"]["id"]},
            }
        ),
        "application/json",
    )
    async with jsonrpc(url) as client:
        tasks = await asyncio.gather(*(client.get_task(f"t{i}") for i in range(8)))
    assert [t.id for t in tasks] == [f"t{i}" for i in range(8)]
    assert len({s.body["id"] for s in recorder.seen}) == 8


async def test_iter_tasks_follows_pages_and_detects_loops(rec: tuple[Recorder, str]) -> None:
    recorder, url = rec
    pages = {None: ("p2", ["a", "b"]), "p2": ("p3", ["c"]), "p3": ("", ["d"])}

    def handler(seen: Seen) -> Reply | list[bytes] | None:
        token, ids = pages[seen.body["params"].get("pageToken")]
        tasks = [{**TASK, "id": i} for i in ids]
        page = {"tasks": tasks, "nextPageToken": token, "pageSize": len(ids), "totalSize": 4}
        return rpc_result(page)(seen)

    recorder.handler = handler
    async with jsonrpc(url) as client:
        assert [t.id async for t in client.iter_tasks(page_size=2)] == ["a", "b", "c", "d"]
        pages["p3"] = ("p2", ["d"])  # a server sending us round in circles
        with pytest.raises(InvalidAgentResponseError, match="page token"):
            async for _ in client.iter_tasks():
                pass


async def test_a_compressed_answer_is_bounded_after_inflating() -> None:
    """A small gzip body that inflates to megabytes (a zip bomb) is cut at the limit."""
    import gzip

    from a2a_core.wire import DecodeLimits

    padding = " " * (4 * 1024 * 1024)
    inflated = b'{"jsonrpc": "2.0", "id": 1, "result": ' + dumps(TASK) + padding.encode() + b"}"
    bomb = gzip.compress(inflated)
    assert len(bomb) < 64 * 1024

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await read_body(receive)
        await respond(send, 200, bomb, headers=[(b"content-encoding", b"gzip")])

    with running(app) as url:
        limits = DecodeLimits(max_bytes=1024 * 1024)
        async with A2AClient.for_endpoint(url, response_limits=limits, timeout=5) as client:
            with pytest.raises(InvalidAgentResponseError, match="limit"):
                await client.get_task("t1")
        # Within the limit, the same compressed answer is read and validated.
        async with A2AClient.for_endpoint(url, timeout=5) as client:
            assert (await client.get_task("t1")).id == "t1"
