"""SSE: framing over both bindings, errors before and during a stream, disconnects, keep-alive."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Coroutine
from typing import Any

import httpx
import pytest
from a2a_core.errors import A2AError, TaskNotFoundError, UnrepresentableError
from a2a_core.server import A2AService, RequestContext, ServerCallContext
from a2a_core.server.asgi import SseConfig, create_app
from a2a_core.server.asgi.sse import KeepAlive, stream_sse
from a2a_core.server.stream import ServerStream, plain_stream
from a2a_core.types import Message, Part, StreamEvent, Task
from a2a_core.wire import Operation
from a2a_core.wire.v03 import V03JsonRpcCodec
from a2a_http_support import (
    V10,
    WaitingAgent,
    echo,
    make_card,
    parse_sse,
    rpc,
    v03_message,
    v03_rest_message,
    v10_message,
)
from pydantic import BaseModel


def assert_sse_response(r: httpx.Response) -> None:
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["x-accel-buffering"] == "no"
    ids: list[int] = []
    for block in r.text.split("\n\n")[:-1]:
        # An event: its id (the task version it produced; none for a direct reply), then data.
        if block.startswith("id: "):
            line, _, block = block.partition("\n")
            ids.append(int(line[4:]))
        assert block.startswith("data: {"), block
    assert ids == sorted(set(ids)), ids  # increasing, never repeated


# -- framing over the app -----------------------------------------------------------------


async def test_stream_v10_jsonrpc(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/", json=rpc("SendStreamingMessage", {"message": v10_message("s")}, rid=11), headers=V10
    )
    assert_sse_response(r)
    events = parse_sse(r.text)
    assert all(e["jsonrpc"] == "2.0" and e["id"] == 11 for e in events)
    results = [e["result"] for e in events]
    assert "task" in results[0]
    assert results[1]["artifactUpdate"]["artifact"]["parts"] == [{"text": "echo: s"}]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_the_settling_event_ends_the_response_in_one_write(app: Any) -> None:
    """The last event's frame closes the body (``more_body`` false): no extra empty write."""
    import json

    body = json.dumps(rpc("SendStreamingMessage", {"message": v10_message("s")}, rid=1)).encode()
    conn = FakeConnection()
    await app(*_posted(body, conn), conn.send)
    last = conn.sent[-1]
    assert last["more_body"] is False
    assert b"TASK_STATE_COMPLETED" in last["body"]
    assert all(m.get("more_body") for m in conn.sent[1:-1])


async def test_stream_v03_jsonrpc(client: httpx.AsyncClient) -> None:
    r = await client.post("/", json=rpc("message/stream", {"message": v03_message("s")}, rid="x"))
    assert_sse_response(r)
    results = [e["result"] for e in parse_sse(r.text)]
    assert results[0]["kind"] == "task"
    assert results[-1]["kind"] == "status-update"
    assert results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"


async def test_stream_v10_rest_frames_are_bare_stream_responses(client: httpx.AsyncClient) -> None:
    r = await client.post("/message:stream", json={"message": v10_message("r")})
    assert_sse_response(r)
    events = parse_sse(r.text)
    assert set(events[0]) == {"task"}
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_stream_v03_rest(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/message:stream", json={"message": v03_rest_message("r")})
    assert_sse_response(r)
    events = parse_sse(r.text)
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["final"] is True


async def test_reply_message_stream_is_one_message(make_client: Any) -> None:
    async def reply(context: RequestContext) -> Message:
        return Message.agent("just this")

    svc = A2AService(reply, make_card())
    client = make_client(create_app(svc))
    r = await client.post(
        "/", json=rpc("SendStreamingMessage", {"message": v10_message()}), headers=V10
    )
    events = parse_sse(r.text)
    assert len(events) == 1
    assert events[0]["result"]["message"]["parts"] == [{"text": "just this"}]
    await svc.aclose()


async def test_a_streamed_event_is_encoded_once_for_its_frame_and_its_replay_record(
    make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bus encodes each event when it is published; the frame carries those bytes and
    the task's replay record keeps them (the same bytes, encoded once)."""
    from a2a_core.server import TaskUpdater
    from a2a_core.server import events as events_module
    from a2a_core.server import run as run_module
    from a2a_core.server.events import MemoryEventBus
    from a2a_core.types import _json
    from a2a_core.wire import v10 as v10_module

    monkeypatch.setattr(run_module, "_YIELD_SECONDS", 3600.0)  # one yield: the first event

    async def chunky(context: RequestContext, updater: TaskUpdater) -> None:
        for i in range(20):
            await updater.add_artifact(f"c{i}", artifact_id="a", append=i > 0, last_chunk=i == 19)
        await updater.complete()

    encoded: list[object] = []
    real_event_json = _json.event_json

    def counting(event: object) -> bytes | None:
        encoded.append(event)
        return real_event_json(event)

    monkeypatch.setattr(_json, "event_json", counting)
    monkeypatch.setattr(v10_module, "event_json", counting)  # the frames'
    monkeypatch.setattr(events_module, "event_json", counting)  # the bus's
    svc = A2AService(chunky, make_card())
    client = make_client(create_app(svc))
    r = await client.post(
        "/", json=rpc("SendStreamingMessage", {"message": v10_message()}), headers=V10
    )
    events = parse_sse(r.text)
    assert len(events) == 22  # the task, 20 chunks, the final status
    updates = [e for e in encoded if not isinstance(e, Task)]
    assert len(updates) == 21  # each chunk and the final status once: at publish
    assert len({id(e) for e in updates}) == 21
    bus = svc.manager.bus
    assert isinstance(bus, MemoryEventBus)
    (ring,) = bus._rings.values()  # pyright: ignore[reportPrivateUsage]
    kept = ring.after(ring.base)
    assert len(kept) == 21
    for event_id, _, data in kept:
        assert data is not None
        frame = b'id: %d\ndata: {"jsonrpc":"2.0","id":1,"result":' % event_id + data
        assert frame in r.content
    await svc.aclose()


async def _streaming_until(
    svc: A2AService, conn: FakeConnection, *, artifact_updates: int
) -> asyncio.Future[None]:
    """Start a 1.0 streamed send to ``svc`` answered on ``conn``; return (the serving
    future) once that many artifact updates were written, or after 5 s."""
    import json

    body = json.dumps(rpc("SendStreamingMessage", {"message": v10_message()})).encode()
    serving = asyncio.ensure_future(create_app(svc)(*_posted(body, conn), conn.send))
    for _ in range(500):
        if sum(frame.count(b"artifactUpdate") for frame in conn.bodies) >= artifact_updates:
            break
        await asyncio.sleep(0.01)
    return serving


async def test_events_waiting_together_go_out_in_one_write_each_with_its_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A burst of an agent's events is read without waiting and sent in one write per
    _BATCH_BYTES of frames, each frame with its own id, in order."""
    from a2a_core.server import TaskUpdater
    from a2a_core.server import run as run_module
    from a2a_core.server.asgi import sse

    # Streams run at the agent's first event only, then when it waits.
    monkeypatch.setattr(run_module, "_YIELD_SECONDS", 3600.0)
    gate = asyncio.Event()
    chunk = "x" * 5000

    async def burst(context: RequestContext, updater: TaskUpdater) -> None:
        for i in range(30):
            await updater.add_artifact(chunk, artifact_id="a", append=i > 0, last_chunk=False)
        await gate.wait()
        await updater.complete()

    svc = A2AService(burst, make_card())
    conn = FakeConnection()
    serving = await _streaming_until(svc, conn, artifact_updates=30)
    try:
        writes = [b for b in conn.bodies if b"artifactUpdate" in b]
        # The first chunk goes out at once; the 29 made meanwhile (about 150 KB) in three
        # writes, each closed once it reaches _BATCH_BYTES.
        assert writes[0].count(b"artifactUpdate") == 1
        assert len(writes) == 4
        assert all(len(w) < sse._BATCH_BYTES + 6000 for w in writes)  # pyright: ignore[reportPrivateUsage]
        assert all(len(w) >= sse._BATCH_BYTES for w in writes[1:-1])  # pyright: ignore[reportPrivateUsage]
        ids = [int(line[4:]) for w in conn.bodies for line in w.split(b"\n") if line[:4] == b"id: "]
        assert ids == list(range(ids[0], ids[0] + 31))  # the task, then each chunk
    finally:
        gate.set()
        await asyncio.wait_for(serving, 5)
        await svc.aclose()
    assert conn.sent[-1]["more_body"] is False


@pytest.mark.parametrize("how", ["jsonrpc-1.0", "jsonrpc-0.3", "rest-post", "rest-get", "rest-0.3"])
async def test_subscribe_follows_a_working_task(
    waiting: tuple[A2AService, WaitingAgent], make_client: Any, how: str
) -> None:
    svc, agent = waiting
    client = make_client(create_app(svc))
    r = await client.post(
        "/message:send",
        json={"message": v10_message("w"), "configuration": {"returnImmediately": True}},
    )
    task_id = r.json()["task"]["id"]
    await asyncio.sleep(0.01)
    asyncio.get_running_loop().call_later(0.1, agent.release.set)
    if how == "jsonrpc-1.0":
        r = await client.post("/", json=rpc("SubscribeToTask", {"id": task_id}), headers=V10)
        events = [e["result"] for e in parse_sse(r.text)]
    elif how == "jsonrpc-0.3":
        r = await client.post("/", json=rpc("tasks/resubscribe", {"id": task_id}))
        events = [e["result"] for e in parse_sse(r.text)]
        assert events[0]["kind"] == "task"
        assert events[-1]["final"] is True
        return
    elif how == "rest-post":
        r = await client.post(f"/tasks/{task_id}:subscribe")
        events = parse_sse(r.text)
    elif how == "rest-get":
        r = await client.get(f"/tasks/{task_id}:subscribe")
        events = parse_sse(r.text)
    else:
        r = await client.post(f"/v1/tasks/{task_id}:subscribe")
        events = parse_sse(r.text)
        assert events[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        return
    assert_sse_response(r)
    assert events[0]["task"]["id"] == task_id
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert svc.manager.bus.subscriber_count() == 0


async def test_rest_stream_error_before_first_event_is_http_error(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/tasks/missing:subscribe")
    assert r.status_code == 404
    assert r.json()["error"]["status"] == "NOT_FOUND"


# -- errors during a stream ------------------------------------------------------------------


class ScriptedService(A2AService):
    """Streams a fixed script: events, then optionally an exception."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__(echo, make_card())
        self.script = script
        self.closed = asyncio.Event()

    async def open_stream(
        self, op: Operation, request: BaseModel, call: ServerCallContext
    ) -> ServerStream:
        return plain_stream(self._run())

    async def _run(self) -> AsyncGenerator[StreamEvent]:
        try:
            for item in self.script:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.closed.set()


@pytest.mark.parametrize(
    ("failure", "code", "hidden"),
    [
        (TaskNotFoundError("gone away"), -32001, None),
        (RuntimeError("secret detail"), -32603, "secret"),
    ],
)
async def test_mid_stream_error_is_an_error_event_then_end(
    make_client: Any, failure: BaseException, code: int, hidden: str | None
) -> None:
    svc = ScriptedService([Message.agent("first"), failure, Message.agent("never")])
    client = make_client(create_app(svc))
    r = await client.post(
        "/", json=rpc("SendStreamingMessage", {"message": v10_message()}, rid=3), headers=V10
    )
    events = parse_sse(r.text)
    assert len(events) == 2
    assert events[0]["result"]["message"]["parts"] == [{"text": "first"}]
    assert events[1]["id"] == 3
    assert events[1]["error"]["code"] == code
    if hidden:
        assert hidden not in r.text
    assert svc.closed.is_set()

    r = await client.post("/message:stream", json={"message": v10_message()})
    events = parse_sse(r.text)
    assert len(events) == 2
    assert "error" in events[1]
    await svc.aclose()


async def test_events_03_cannot_express_are_down_converted(make_client: Any) -> None:
    async def markdown(context: RequestContext) -> Part:
        return Part(text="# title", media_type="text/markdown")

    svc = A2AService(markdown, make_card())
    client = make_client(create_app(svc))
    r = await client.post("/", json=rpc("message/stream", {"message": v03_message()}))
    events = parse_sse(r.text)
    assert events[0]["result"]["kind"] == "task"
    assert all("error" not in e for e in events)
    artifact = next(e["result"] for e in events if e["result"]["kind"] == "artifact-update")
    assert artifact["artifact"]["parts"][0]["metadata"] == {
        "a2a.v1": {"mediaType": "text/markdown"}
    }
    await svc.aclose()


async def test_unencodable_event_ends_the_stream_with_an_error(
    make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:

    def refuse(self: Any, event: Any) -> Any:
        if not isinstance(event, Task):
            raise UnrepresentableError("no 0.3 form")
        return {"kind": "task", "id": event.id, "contextId": event.context_id}

    monkeypatch.setattr(V03JsonRpcCodec, "encode_event", refuse)
    svc = A2AService(echo, make_card())
    client = make_client(create_app(svc))
    r = await client.post("/", json=rpc("message/stream", {"message": v03_message()}))
    events = parse_sse(r.text)
    assert events[0]["result"]["kind"] == "task"
    assert events[-1]["error"]["code"] == -32603
    assert "result" not in events[-1]
    assert svc.manager.bus.subscriber_count() == 0
    await svc.aclose()


# -- stream_sse directly ------------------------------------------------------------------


def _posted(body: bytes, conn: FakeConnection) -> tuple[dict[str, Any], Any]:
    """The ASGI scope and receive of a 1.0 JSON-RPC POST of ``body``; then ``conn`` receives."""
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await conn.receive()

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"a2a-version", b"1.0")],
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5),
    }
    return scope, receive


class FakeConnection:
    """ASGI receive/send for one response; ``leave()`` makes the client disconnect."""

    def __init__(self, block_after: int | None = None) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.block_after = block_after
        self.receives = 0

    async def receive(self) -> dict[str, Any]:
        self.receives += 1
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Any) -> None:
        if self.block_after is not None and len(self.sent) >= self.block_after:
            await asyncio.Event().wait()  # a client that stopped reading
        self.sent.append(message)

    def leave(self) -> None:
        self.gone.set()

    @property
    def bodies(self) -> list[bytes]:
        return [m.get("body", b"") for m in self.sent if m["type"] == "http.response.body"]


class Script:
    """An async generator that yields events, then waits forever; records its cleanup."""

    def __init__(self, first: list[StreamEvent], pause: float | None = None) -> None:
        self.first = first
        self.pause = pause
        self.closed = False

    async def run(self) -> AsyncGenerator[StreamEvent]:
        try:
            for event in self.first:
                if self.pause:
                    await asyncio.sleep(self.pause)
                yield event
            await asyncio.Event().wait()
            yield Message.agent("unreachable")  # pragma: no cover
        finally:
            self.closed = True


def _encode(event: StreamEvent, encoded: bytes | None) -> bytes:
    return b"data: " + event.model_dump_json(by_alias=True).encode() + b"\n\n"


def _encode_error(error: A2AError) -> bytes:
    return b'data: {"error":' + str(error.code).encode() + b"}\n\n"


def _pump(
    conn: FakeConnection, events: AsyncGenerator[StreamEvent], config: SseConfig | None = None
) -> Coroutine[Any, Any, None]:
    """``stream_sse`` of a plain generator's events on ``conn``."""
    stream = plain_stream(events)
    return stream_sse(
        conn.receive, conn.send, stream, _encode, _encode_error, [], KeepAlive(config)
    )


async def test_disconnect_stops_the_pump_and_closes_the_iterator() -> None:
    conn = FakeConnection()
    script = Script([Message.agent("one")])
    asyncio.get_running_loop().call_later(0.05, conn.leave)
    await asyncio.wait_for(
        _pump(conn, script.run()),
        timeout=5,
    )
    assert script.closed
    assert len(conn.bodies) == 1  # one event; no closing body for a client that left
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_a_short_stream_starts_no_watcher() -> None:
    """A stream over before ``_WATCH_AFTER`` never listens for the client leaving (no
    task for it); one that lasts longer does, and notices a client that left at once."""

    async def short() -> AsyncGenerator[StreamEvent]:
        await asyncio.sleep(0)  # the loop runs other tasks: an eager watcher would listen
        yield Message.agent("one")

    conn = FakeConnection()
    await _pump(conn, short())
    assert conn.receives == 0
    assert conn.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    conn = FakeConnection()
    conn.leave()  # gone before the first event: noticed once the watcher starts
    script = Script([Message.agent("one")])
    await asyncio.wait_for(
        _pump(conn, script.run()),
        timeout=5,
    )
    assert conn.receives == 1
    assert script.closed


async def test_outer_cancellation_still_propagates() -> None:
    conn = FakeConnection()
    script = Script([Message.agent("one")])
    job = asyncio.create_task(_pump(conn, script.run()))
    await asyncio.sleep(0.02)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    assert script.closed


async def test_keep_alive_comment_on_a_silent_stream() -> None:
    conn = FakeConnection()
    script = Script([Message.agent("late")], pause=0.25)
    asyncio.get_running_loop().call_later(0.4, conn.leave)
    config = SseConfig(ping_interval=0.05, send_timeout=None)
    await asyncio.wait_for(
        _pump(conn, script.run(), config),
        timeout=5,
    )
    pings = [b for b in conn.bodies if b == b": ping\n\n"]
    assert len(pings) >= 2
    assert any(b.startswith(b"data: ") for b in conn.bodies)
    assert parse_sse(b"".join(conn.bodies).decode())[0]["parts"] == [{"text": "late"}]


async def test_idle_streams_share_one_keep_alive_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many silent streams of one app are pinged by one timer, not one timer each, and
    the timer stops once the last stream ends."""
    loop = asyncio.get_running_loop()
    armed: list[str] = []
    call_later = loop.call_later

    def counting(delay: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        armed.append(getattr(callback, "__name__", ""))
        return call_later(delay, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_later", counting)
    keep_alive = KeepAlive(SseConfig(ping_interval=0.05, send_timeout=None))
    conns = [FakeConnection() for _ in range(20)]
    pumps = [
        asyncio.create_task(
            stream_sse(
                c.receive,
                c.send,
                plain_stream(Script([]).run()),
                _encode,
                _encode_error,
                [],
                keep_alive,
            )
        )
        for c in conns
    ]
    await asyncio.sleep(0.3)  # about six periods
    for c in conns:
        c.leave()
    await asyncio.wait_for(asyncio.gather(*pumps), timeout=5)
    ticks = armed.count("_tick")
    assert all(c.bodies.count(b": ping\n\n") >= 2 for c in conns)
    assert 3 <= ticks <= 10, armed  # one timer for all 20 (one each would be 100 or more)
    await asyncio.sleep(0.15)
    assert armed.count("_tick") == ticks  # no stream left: the timer is not re-armed


async def test_stalled_reader_is_dropped() -> None:
    conn = FakeConnection(block_after=2)  # accepts the start and one frame, then stalls
    script = Script([Message.agent("a"), Message.agent("b")])
    config = SseConfig(ping_interval=None, send_timeout=0.1)
    await asyncio.wait_for(
        _pump(conn, script.run(), config),
        timeout=5,
    )
    assert script.closed
    assert len(conn.bodies) == 1


async def test_closing_a_stream_never_iterated_releases_its_subscription(
    waiting: tuple[A2AService, WaitingAgent],
) -> None:
    svc, _agent = waiting
    from a2a_core.types import SendMessageRequest

    request = SendMessageRequest.model_validate({"message": v10_message()})
    events = await svc.open_stream(Operation.SEND_STREAMING_MESSAGE, request, ServerCallContext())
    assert svc.manager.bus.subscriber_count() == 1
    await events.aclose()
    assert svc.manager.bus.subscriber_count() == 0


@pytest.mark.parametrize(("ping", "timeout"), [(0.0, None), (None, -1.0)])
def test_sse_config_validation(ping: float | None, timeout: float | None) -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        SseConfig(ping_interval=ping, send_timeout=timeout)
