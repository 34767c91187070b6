"""Delivery: body shapes, headers, order, retries, bounds and shutdown (mock HTTP)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from _push_support import (
    HOOK_URL,
    FakeResolver,
    artifact_event,
    emit,
    eventually,
    fake_policy,
    make_task,
)
from a2a.compat.v0_3 import types as sdk03
from a2a.types import a2a_pb2
from a2a_core.server.push import (
    MemoryPushConfigStore,
    PushConfigEntry,
    PushNotificationService,
    RetryPolicy,
)
from a2a_core.types import (
    AuthenticationInfo,
    Message,
    Part,
    Role,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf.json_format import ParseDict

Script = int | Exception | Callable[[], Awaitable[int]]
FAST_RETRY = RetryPolicy(max_retries=3, backoff=0.001, max_backoff=0.01)


class Hook:
    """A MockTransport handler: records requests; answers from a script, then 200."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.script: list[Script] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self.gate.wait()
            item: Script = self.script.pop(0) if self.script else 200
            if isinstance(item, Exception):
                raise item
            status = item if isinstance(item, int) else await item()
            headers = {"retry-after": "0"} if status == 429 else {}
            if status in (301, 302):
                headers["location"] = "http://127.0.0.1/internal"
            return httpx.Response(status, headers=headers, text="ok")
        finally:
            self.in_flight -= 1

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]


@pytest.fixture
def hook() -> Hook:
    return Hook()


@pytest.fixture
async def make(hook: Hook) -> AsyncIterator[Callable[..., PushNotificationService]]:
    made: list[PushNotificationService] = []

    def factory(**kwargs: Any) -> PushNotificationService:
        kwargs.setdefault("policy", fake_policy())
        kwargs.setdefault("retry", FAST_RETRY)
        service = PushNotificationService(transport=httpx.MockTransport(hook), **kwargs)
        made.append(service)
        return service

    yield factory
    hook.gate.set()
    for service in made:
        await service.aclose()


def config(
    config_id: str = "c1",
    *,
    task_id: str = "task-1",
    url: str = HOOK_URL,
    token: str | None = "tok-123",
    credentials: str | None = "cred-456",
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        id=config_id,
        url=url,
        token=token,
        authentication=AuthenticationInfo(scheme="Bearer", credentials=credentials)
        if credentials
        else None,
    )


# -- body shapes and headers ---------------------------------------------------------------


async def test_v10_status_update_is_a_stream_response(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    emit(push, make_task(state=TaskState.SUBMITTED), TaskState.WORKING, "thinking")
    await eventually(lambda: push.stats.delivered == 1)
    request = hook.requests[0]
    assert request.method == "POST"
    assert str(request.url) == HOOK_URL
    assert request.headers["content-type"] == "application/a2a+json"
    assert request.headers["a2a-version"] == "1.0"
    assert request.headers["authorization"] == "Bearer cred-456"
    assert request.headers["x-a2a-notification-token"] == "tok-123"
    body = json.loads(request.content)
    assert list(body) == ["statusUpdate"]
    update = body["statusUpdate"]
    assert (update["taskId"], update["contextId"]) == ("task-1", "ctx-1")
    assert update["status"]["state"] == "TASK_STATE_WORKING"
    assert update["status"]["message"]["parts"] == [{"text": "thinking"}]
    assert "kind" not in update
    assert "final" not in update
    ParseDict(body, a2a_pb2.StreamResponse())  # the official 1.0 proto accepts it, strictly


async def test_v10_artifact_update_is_a_stream_response(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    task = make_task()
    push.on_event(task, artifact_event(task, "partial"), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    body = hook.bodies()[0]
    assert list(body) == ["artifactUpdate"]
    assert body["artifactUpdate"]["artifact"] == {
        "artifactId": "result",
        "parts": [{"text": "partial"}],
    }
    ParseDict(body, a2a_pb2.StreamResponse())


async def test_v03_delivery_is_the_whole_task_in_jsonrpc_shape(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "0.3")
    task = make_task().model_copy(
        update={
            "history": [
                Message(message_id="m1", role=Role.USER, parts=[Part(text="hi")], task_id="task-1")
            ]
        }
    )
    emit(push, task, TaskState.COMPLETED)
    await eventually(lambda: push.stats.delivered == 1)
    request = hook.requests[0]
    assert request.headers["content-type"] == "application/json"
    assert request.headers["a2a-version"] == "0.3"
    assert request.headers["x-a2a-notification-token"] == "tok-123"
    assert request.headers["authorization"] == "Bearer cred-456"
    body = json.loads(request.content)
    assert body["kind"] == "task"
    assert (body["id"], body["contextId"]) == ("task-1", "ctx-1")
    assert body["status"]["state"] == "completed"
    assert body["history"][0]["role"] == "user"
    assert body["history"][0]["parts"] == [{"kind": "text", "text": "hi"}]
    parsed = sdk03.Task.model_validate(body)  # the official 0.3 model accepts it
    assert parsed.status.state == sdk03.TaskState.completed


async def test_no_auth_headers_without_secrets(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(token=None, credentials=None), "1.0")
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    headers = hook.requests[0].headers
    assert "authorization" not in headers
    assert "x-a2a-notification-token" not in headers


async def test_only_task_updates_are_delivered(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    task = make_task()
    push.on_event(task, task, None)
    push.on_event(task, Message(message_id="m", role=Role.AGENT, parts=[Part(text="x")]), None)
    emit(push, task, TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    await asyncio.sleep(0.05)
    assert len(hook.requests) == 1
    assert "statusUpdate" in hook.bodies()[0]


# -- which configs get what ------------------------------------------------------------------


async def test_updates_arrive_in_order_for_every_config(make: Any, hook: Hook) -> None:
    push = make(max_concurrency=4)
    await push.set_config(config("a"), "1.0")
    await push.set_config(config("b", url="https://hooks.example/b"), "1.0")
    original = hook.__call__

    async def jittery(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep((hash(request.content) % 4) / 1000)
        return await original(request)

    push._poster.transport = httpx.MockTransport(jittery)  # slow, uneven receivers
    task = make_task()
    for i in range(25):
        if i % 5 == 4:
            push.on_event(task, artifact_event(task, f"chunk {i}"), TaskState.WORKING)
        else:
            task = emit(push, task, TaskState.WORKING, f"step {i}")
    emit(push, task, TaskState.COMPLETED, "done")
    await eventually(lambda: push.stats.delivered == 52)

    def labels(url: str) -> list[str]:
        out: list[str] = []
        for request in hook.requests:
            if str(request.url) != url:
                continue
            body = json.loads(request.content)
            if "statusUpdate" in body:
                out.append(body["statusUpdate"]["status"]["message"]["parts"][0]["text"])
            else:
                out.append(body["artifactUpdate"]["artifact"]["parts"][0]["text"])
        return out

    expected = [f"chunk {i}" if i % 5 == 4 else f"step {i}" for i in range(25)] + ["done"]
    assert labels(HOOK_URL) == expected
    assert labels("https://hooks.example/b") == expected


async def test_a_config_gets_only_events_after_its_creation(make: Any, hook: Hook) -> None:
    push = make()
    task = emit(push, make_task(), TaskState.WORKING, "before")
    await push.set_config(config(), "1.0")  # before the worker saw the event
    emit(push, task, TaskState.WORKING, "after")
    await eventually(lambda: push.stats.delivered == 1)
    await asyncio.sleep(0.05)
    texts = [b["statusUpdate"]["status"]["message"]["parts"][0]["text"] for b in hook.bodies()]
    assert texts == ["after"]


async def test_configs_are_forgotten_after_the_final_delivery(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config("a"), "1.0")
    await push.set_config(config("b", task_id="other"), "1.0")
    task = emit(push, make_task(), TaskState.WORKING)
    emit(push, task, TaskState.COMPLETED)
    await eventually(lambda: push.stats.delivered == 2)
    await eventually(lambda: push.stats.pending == 0)
    assert await push.list_configs("task-1") == []
    assert [c.id for c in await push.list_configs("other")] == ["b"]
    # A config made for the finished task afterwards is kept for Get/List.
    await push.set_config(config("late"), "1.0")
    await asyncio.sleep(0.05)
    assert [c.id for c in await push.list_configs("task-1")] == ["late"]


async def test_a_failed_final_delivery_also_forgets_the_config(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.script = [404]
    emit(push, make_task(), TaskState.FAILED)
    await eventually(lambda: push.stats.failed == 1)
    await eventually(lambda: push.stats.pending == 0)
    assert await push.list_configs("task-1") == []


async def test_a_deleted_config_receives_nothing_more(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.gate.clear()
    task = emit(push, make_task(), TaskState.WORKING, "one")
    await eventually(lambda: len(hook.requests) == 1)
    emit(push, task, TaskState.WORKING, "two")
    await asyncio.sleep(0.02)
    assert await push.delete_config("task-1", "c1")
    hook.gate.set()
    await eventually(lambda: push.stats.pending == 0)
    assert len(hook.requests) == 1
    assert push.stats.delivered == 1


async def test_a_replaced_config_is_used_for_later_deliveries(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.gate.clear()
    task = emit(push, make_task(), TaskState.WORKING, "one")
    await eventually(lambda: len(hook.requests) == 1)
    emit(push, task, TaskState.WORKING, "two")
    await push.set_config(config(url="https://hooks.example/v2", credentials="new-cred"), "1.0")
    hook.gate.set()
    await eventually(lambda: push.stats.delivered == 2)
    second = hook.requests[1]
    assert str(second.url) == "https://hooks.example/v2"
    assert second.headers["authorization"] == "Bearer new-cred"


# -- retries ---------------------------------------------------------------------------------


async def test_server_errors_are_retried_until_success(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.script = [500, 503]
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert len(hook.requests) == 3
    assert hook.requests[0].content == hook.requests[2].content
    stats = push.stats
    assert (stats.retried, stats.failed) == (2, 0)


async def test_429_is_retried(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.script = [429]
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert len(hook.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 422, 301, 302])
async def test_client_errors_and_redirects_are_not_retried(
    make: Any, hook: Hook, status: int
) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.script = [status]
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.failed == 1)
    await asyncio.sleep(0.03)
    assert len(hook.requests) == 1  # a redirect is never followed
    assert push.stats.retried == 0


async def test_retries_are_bounded(make: Any, hook: Hook) -> None:
    push = make(retry=RetryPolicy(max_retries=2, backoff=0.001))
    await push.set_config(config(), "1.0")
    hook.script = [500] * 10
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.failed == 1)
    await asyncio.sleep(0.03)
    assert len(hook.requests) == 3
    assert push.stats.retried == 2


async def test_connection_errors_and_timeouts_are_retried(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    hook.script = [httpx.ConnectError("refused"), httpx.ReadTimeout("slow")]
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert len(hook.requests) == 3


async def test_a_hanging_webhook_times_out_and_is_retried(make: Any, hook: Hook) -> None:
    async def hang() -> int:
        await asyncio.sleep(30)
        return 200

    push = make(timeout=0.05, retry=RetryPolicy(max_retries=1, backoff=0.001))
    await push.set_config(config(), "1.0")
    hook.script = [hang]
    started = time.monotonic()
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert time.monotonic() - started < 2
    assert len(hook.requests) == 2


async def test_backoff_waits_between_attempts(make: Any, hook: Hook) -> None:
    push = make(retry=RetryPolicy(max_retries=2, backoff=0.05, jitter=0))
    await push.set_config(config(), "1.0")
    hook.script = [500, 500]
    started = time.monotonic()
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert time.monotonic() - started >= 0.15 - 0.01  # 0.05 s then 0.1 s


def test_retry_policy_delays() -> None:
    plain = RetryPolicy(jitter=0)
    assert [plain.delay(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    capped = RetryPolicy(backoff=10, max_backoff=15, jitter=0)
    assert capped.delay(3) == 15
    assert plain.delay(1, retry_after=4) == 4  # Retry-After may lengthen a delay
    assert plain.delay(1, retry_after=999) == 30  # but never past max_backoff
    jittered = RetryPolicy(jitter=0.2)
    assert all(0.4 <= jittered.delay(1) <= 0.6 for _ in range(200))
    with pytest.raises(ValueError, match="jitter"):
        RetryPolicy(jitter=1.5)
    with pytest.raises(ValueError, match=">= 0"):
        RetryPolicy(max_retries=-1)


# -- the URL policy at dispatch ----------------------------------------------------------------


async def test_dispatch_rechecks_the_address_and_does_not_retry_a_refusal(
    make: Any, hook: Hook
) -> None:
    resolver = FakeResolver()
    push = make(policy=fake_policy(resolver))
    await push.set_config(config(), "1.0")
    resolver.answers["hooks.example"] = ["10.0.0.1"]  # DNS changed since creation
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.failed == 1)
    assert hook.requests == []
    assert push.stats.retried == 0


async def test_unresolvable_at_dispatch_is_retried_then_fails(make: Any, hook: Hook) -> None:
    resolver = FakeResolver()
    push = make(policy=fake_policy(resolver), retry=RetryPolicy(max_retries=2, backoff=0.001))
    await push.set_config(config(url="https://gone.example/hook"), "1.0")
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.failed == 1)
    assert hook.requests == []
    assert resolver.calls.count("gone.example") == 4  # creation + 3 attempts


async def test_configs_written_around_the_api_are_still_checked(make: Any, hook: Hook) -> None:
    store = MemoryPushConfigStore()
    push = make(store=store)
    await store.put(PushConfigEntry(config(url="http://169.254.169.254/latest"), "1.0", 0))
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: push.stats.failed == 1)
    assert hook.requests == []


# -- bounds, isolation, shutdown ----------------------------------------------------------------


async def test_overflow_drops_and_never_blocks_the_event_path(make: Any, hook: Hook) -> None:
    push = make(max_queue=8, max_backlog=16)
    await push.set_config(config(), "1.0")
    hook.gate.clear()
    task = emit(push, make_task(), TaskState.WORKING, "first")
    await eventually(lambda: len(hook.requests) == 1)
    started = time.perf_counter()
    for i in range(2000):
        task = emit(push, task, TaskState.WORKING, f"step {i}")
        if i % 100 == 0:
            await asyncio.sleep(0)  # let the worker run now and then
    emit(push, task, TaskState.COMPLETED, "last")
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0  # 2002 events: the event path only appends
    assert push.stats.dropped > 0
    hook.gate.set()
    await eventually(lambda: push.stats.pending == 0 and not push._intake)
    stats = push.stats
    assert stats.delivered + stats.dropped == 2002
    assert stats.delivered <= 1 + 16 + 8 + 1
    last = hook.bodies()[-1]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_COMPLETED"  # the newest survives


async def test_a_full_lane_drops_its_oldest_update(make: Any, hook: Hook) -> None:
    push = make(max_backlog=2)
    await push.set_config(config(), "1.0")
    hook.gate.clear()
    task = emit(push, make_task(), TaskState.WORKING, "0")
    await eventually(lambda: len(hook.requests) == 1)
    for i in range(1, 10):
        task = emit(push, task, TaskState.WORKING, str(i))
    await asyncio.sleep(0.02)
    hook.gate.set()
    await eventually(lambda: push.stats.pending == 0)
    texts = [b["statusUpdate"]["status"]["message"]["parts"][0]["text"] for b in hook.bodies()]
    assert texts == ["0", "8", "9"]
    assert (push.stats.delivered, push.stats.dropped) == (3, 7)


async def test_v03_lanes_send_the_newest_snapshot(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "0.3")
    hook.gate.clear()
    task = emit(push, make_task(), TaskState.WORKING, "0")
    await eventually(lambda: len(hook.requests) == 1)
    for i in range(1, 6):
        task = emit(push, task, TaskState.WORKING, str(i))
    emit(push, task, TaskState.COMPLETED, "done")
    await asyncio.sleep(0.02)
    hook.gate.set()
    await eventually(lambda: push.stats.pending == 0)
    states = [b["status"]["state"] for b in hook.bodies()]
    assert states == ["working", "completed"]  # full snapshots: the latest one suffices
    assert hook.bodies()[1]["status"]["message"]["parts"][0]["text"] == "done"
    assert push.stats.dropped == 0
    assert await push.list_configs("task-1") == []  # the final flag survived coalescing


async def test_a_slow_webhook_does_not_hold_up_other_tasks(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config("slow", task_id="a"), "1.0")
    await push.set_config(config("fast", task_id="b", url="https://hooks.example/b"), "1.0")
    blocker = asyncio.Event()

    async def stuck() -> int:
        await blocker.wait()
        return 200

    hook.script = [stuck]
    emit(push, make_task("a"), TaskState.WORKING)
    await eventually(lambda: len(hook.requests) == 1)
    emit(push, make_task("b"), TaskState.WORKING)
    await eventually(lambda: push.stats.delivered == 1)
    assert str(hook.requests[1].url) == "https://hooks.example/b"
    blocker.set()
    await eventually(lambda: push.stats.delivered == 2)


async def test_concurrent_requests_are_bounded(make: Any, hook: Hook) -> None:
    push = make(max_concurrency=2)
    for i in range(6):
        await push.set_config(config(f"c{i}", url=f"https://hooks.example/{i}"), "1.0")
    hook.gate.clear()
    emit(push, make_task(), TaskState.WORKING)
    await eventually(lambda: len(hook.requests) == 2)
    await asyncio.sleep(0.05)
    assert len(hook.requests) == 2
    hook.gate.set()
    await eventually(lambda: push.stats.delivered == 6)
    assert hook.max_in_flight == 2


async def test_aclose_drains_queued_deliveries(make: Any, hook: Hook) -> None:
    push = make()
    await push.set_config(config(), "1.0")
    task = make_task()
    for i in range(5):
        task = emit(push, task, TaskState.WORKING, str(i))
    await push.aclose()
    assert push.stats.delivered == 5
    emit(push, task, TaskState.COMPLETED)
    await asyncio.sleep(0.02)
    assert len(hook.requests) == 5
    assert push.stats.dropped == 1
    await push.aclose()  # idempotent


async def test_aclose_is_bounded_when_a_webhook_hangs(make: Any, hook: Hook) -> None:
    push = make(drain_timeout=0.1)
    await push.set_config(config(), "1.0")
    hook.gate.clear()
    task = make_task()
    for i in range(3):
        task = emit(push, task, TaskState.WORKING, str(i))
    await eventually(lambda: len(hook.requests) == 1)
    started = time.monotonic()
    await push.aclose()
    assert time.monotonic() - started < 2
    stats = push.stats
    assert (stats.delivered, stats.dropped, stats.pending) == (0, 3, 0)


async def test_start_and_context_manager(make: Any, hook: Hook) -> None:
    push = make()
    async with push:
        assert push._worker is not None
        assert not push._worker.done()
        await push.set_config(config(), "1.0")
        emit(push, make_task(), TaskState.WORKING)
    assert push.stats.delivered == 1


def test_events_without_a_running_loop_are_dropped() -> None:
    push = PushNotificationService(policy=fake_policy())
    emit(push, make_task(), TaskState.WORKING)
    assert push.stats.dropped == 1


# -- logs ------------------------------------------------------------------------------------------


async def test_failures_are_logged_without_secrets(
    make: Any, hook: Hook, caplog: pytest.LogCaptureFixture
) -> None:
    push = make(retry=RetryPolicy(max_retries=1, backoff=0.001))
    await push.set_config(config(), "1.0")
    hook.script = [500, 500]
    with caplog.at_level(logging.WARNING, logger="a2a_core.server.push"):
        emit(push, make_task(), TaskState.WORKING)
        await eventually(lambda: push.stats.failed == 1)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "https://hooks.example:443" in text
    assert "task-1" in text
    assert "HTTP 500" in text
    for secret in ("tok-123", "cred-456", "tenant=acme", "Bearer"):
        assert secret not in text
