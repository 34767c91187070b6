"""Push deliveries pending at a crash are delivered by the instance that settles the task.

Two service instances in one process share a Redis or PostgreSQL store; a
real webhook receiver on 127.0.0.1 stalls (takes the request, does not
answer), so A's deliveries wait in its memory. A then "dies": it stops
renewing its lease and its push service stops at once (nothing more is
sent). B settles the task, and before the final FAILED it delivers, in
order, every event after the task's delivered-up-to mark, with the
``webhook-id`` A used; nothing delivered before the mark is sent again.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from a2a_core import A2AClient, running_server
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.manager import ManagerConfig
from a2a_core.server.push import PushNotificationService, RetryPolicy
from a2a_core.types import TaskPushNotificationConfig
from a2a_core.webhooks import WebhookVerifier, new_webhook_secret
from store_support import POSTGRES_URL, REDIS_URL

SECRET = new_webhook_secret()


def fast(instance: str) -> ManagerConfig:
    """Short leases, so a death is noticed within about a second."""
    return ManagerConfig(
        instance_id=instance,
        lease_seconds=1.0,
        lease_renew_seconds=0.2,
        orphan_sweep_seconds=0.2,
        shutdown_grace_seconds=1.0,
    )


@pytest.fixture(params=["redis", "postgres"])
def shared_url(request: pytest.FixtureRequest) -> str:
    if request.param == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"


async def _until(check: Callable[[], Any], what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


# -- a webhook receiver that can stall ------------------------------------------------------


@dataclass
class Hit:
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]

    def summary(self) -> str:
        """``status <STATE> <text>`` or ``artifact <text>``."""
        if "statusUpdate" in self.body:
            status = self.body["statusUpdate"]["status"]
            parts = (status.get("message") or {}).get("parts") or [{}]
            state = status["state"].removeprefix("TASK_STATE_")
            return f"status {state} {parts[0].get('text', '')}".strip()
        if "artifactUpdate" in self.body:
            parts = self.body["artifactUpdate"]["artifact"]["parts"]
            return "artifact " + "".join(p.get("text", "") for p in parts)
        return "other " + ",".join(self.body)


@dataclass
class StallingReceiver:
    """Records each request as it arrives; answers 200 only while ``open`` is set."""

    hits: list[Hit] = field(default_factory=list[Hit])
    open: asyncio.Event = field(default_factory=asyncio.Event)
    verifier: WebhookVerifier = field(default_factory=lambda: WebhookVerifier(SECRET))
    url: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        self.verifier.verify(headers, body)  # signed by our secret, never a replayed attempt
        self.hits.append(Hit(headers, json.loads(body)))
        await self.open.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@asynccontextmanager
async def receiver_server() -> AsyncIterator[StallingReceiver]:
    receiver = StallingReceiver()
    receiver.open.set()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    receiver.url = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    config = uvicorn.Config(
        receiver, lifespan="off", log_level="warning", access_log=False, ws="none", http="h11"
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        await _until(lambda: server.started or task.done(), "the receiver to start")
        if task.done():
            task.result()
        yield receiver
    finally:
        receiver.open.set()
        server.should_exit = True
        await asyncio.wait_for(task, 10.0)
        sock.close()


# -- the agent: emits what the test tells it, then waits --------------------------------------


class Stepper(AgentExecutor):
    """Each queued step becomes one event: ``chunk ...`` an artifact chunk, else a status."""

    def __init__(self) -> None:
        self.steps: asyncio.Queue[str] = asyncio.Queue()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        chunks = 0
        while True:
            step = await self.steps.get()
            if step.startswith("chunk"):
                chunks += 1
                await updater.add_artifact(
                    step, artifact_id="out", append=chunks > 1, last_chunk=False
                )
            else:
                await updater.start_work(step)


def _push(**kwargs: Any) -> PushNotificationService:
    return PushNotificationService(
        allow_private_targets=True,
        signing_secret=SECRET,
        timeout=60.0,
        retry=RetryPolicy(max_retries=0),
        **kwargs,
    )


@dataclass
class Crash:
    """What the receiver got: before A died (``hits[:2]``) and from B (``after``)."""

    hits: list[Hit]
    after: list[Hit]


async def _crash_while_stalled(url: str) -> Crash:
    """Step 1 delivered (and marked), then the receiver stalls on step 2 while A holds
    ``chunk 1``, ``chunk 2`` and ``step 3``; A dies; B settles. What the receiver got."""
    agent = Stepper()
    push_a, push_b = _push(), _push()
    async with (
        receiver_server() as hook,
        running_server(agent, store_url=url, config=fast("A"), push=push_a) as a,
        running_server(Stepper(), store_url=url, config=fast("B"), push=push_b) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        sent = await to_a.send(
            "go", blocking=False, push_config=TaskPushNotificationConfig(url=hook.url)
        )
        assert sent.task is not None
        task_id = sent.task.id
        store = a.service.manager.store
        marks = a.service.manager.channel.push_configs()
        assert marks is not None
        assert marks.keeps_marks

        async def version() -> int:
            stored = await store.get(task_id, None)
            assert stored is not None
            return stored.version

        # One event delivered and its mark written: it must never be sent again.
        agent.steps.put_nowait("step 1")
        await _until(lambda: len(hook.hits) == 1, "step 1 to be delivered")
        delivered_up_to = await version()

        async def marked() -> bool:
            return await marks.read_mark(task_id) == delivered_up_to

        await _until(marked, "the mark to pass step 1")
        # The receiver stalls: A's lane holds step 2 in flight, the rest waits behind it.
        hook.open.clear()
        for step in ("step 2", "chunk 1", "chunk 2", "step 3"):
            agent.steps.put_nowait(step)
        await _until(lambda: len(hook.hits) == 2, "step 2 to reach the stalled receiver")

        async def all_saved() -> bool:
            task = await to_b.get_task(task_id)
            message = task.status.message
            return message is not None and message.parts[0].text == "step 3"

        await _until(all_saved, "every step to be saved")
        assert push_a.stats.pending > 0
        # A dies: no more renewals, and its push sender stops at once (it sends nothing more).
        leases = a.service.manager.leases
        assert leases is not None
        leases.keeper.stop_renewing()
        push_a.drain_timeout = 0
        await push_a.aclose()
        assert hook.hits[1].summary() == "status WORKING step 2"
        hook.open.set()

        def failed_pushed() -> bool:
            return any(hit.summary().startswith("status FAILED") for hit in hook.hits)

        await _until(failed_pushed, "B to push the final FAILED")
        b_leases = b.service.manager.leases
        assert b_leases is not None
        assert b_leases.keeper.settled_count == 1
        return Crash(list(hook.hits), hook.hits[2:])


async def test_deliveries_pending_at_a_crash_are_sent_by_the_survivor(shared_url: str) -> None:
    crash = await _crash_while_stalled(shared_url)
    summaries = [hit.summary() for hit in crash.after]
    expected = [
        "status WORKING step 2",
        "artifact chunk 1",  # as A would have sent it: a new artifact, then the whole
        "artifact chunk 1chunk 2",
        "status WORKING step 3",
    ]
    if summaries[1] != "artifact chunk 1":
        # Queued behind step 2 (still in flight), the first chunk was replaced by the
        # whole artifact, as on any instance: a newer whole state supersedes a waiting one.
        expected.remove("artifact chunk 1")
    assert summaries[:-1] == expected
    assert summaries[-1].startswith("status FAILED")
    # What A had sent (step 2, unanswered) comes again under the same webhook-id;
    # step 1, delivered before the mark, does not come again.
    stalled = crash.hits[1]
    assert crash.after[0].webhook_id == stalled.webhook_id
    ids = [hit.webhook_id for hit in crash.hits]
    assert len(set(ids)) == len(ids) - 1  # only step 2 twice
    assert crash.hits[0].webhook_id not in {hit.webhook_id for hit in crash.after}


async def test_events_past_retention_are_sent_as_the_task(postgres_schema: str) -> None:
    # Two events kept per task: of the four after the mark, the first two are trimmed.
    crash = await _crash_while_stalled(
        f"{POSTGRES_URL}?schema={postgres_schema}&stream_max_events=2"
    )
    assert len(crash.after) == 2
    snapshot, final = crash.after
    assert list(snapshot.body) == ["task"]
    task = snapshot.body["task"]
    assert task["status"]["message"]["parts"][0]["text"] == "step 3"
    assert [p["text"] for p in task["artifacts"][0]["parts"]] in (
        ["chunk 1chunk 2"],
        ["chunk 1", "chunk 2"],
    )
    assert final.summary().startswith("status FAILED")
    assert snapshot.webhook_id != crash.hits[1].webhook_id
