"""Signed webhooks over real sockets: our server signs push deliveries, a receiver checks them.

The agent runs behind ``running_server(push=True, push_signing_secret=...)``;
the receiver is a uvicorn app on 127.0.0.1 that checks every POST with a
``WebhookVerifier`` and answers 204, or 401 with the reason. Deliveries the
server made are accepted; the same delivery changed, signed with another
secret, too old, or sent again is refused.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from _push_support import eventually
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.errors import ConfigurationError
from a2a_core.server import RequestContext
from a2a_core.types import TaskPushNotificationConfig
from a2a_core.webhooks import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookSigner,
    WebhookVerificationError,
    WebhookVerifier,
    new_webhook_secret,
    verify_webhook,
)

pytestmark = pytest.mark.timeout(60)


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    status: int
    reason: str = ""


@dataclass
class VerifyingReceiver:
    """A webhook endpoint that accepts only deliveries its verifier passes."""

    verifier: WebhookVerifier
    skew: float = 0.0
    """Seconds added to the receiver's clock (to make deliveries look old)."""
    deliveries: list[Delivery] = field(default_factory=list[Delivery])
    url: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            self.verifier.verify(headers, body, now=time.time() + self.skew)
        except WebhookVerificationError as exc:
            self.deliveries.append(Delivery(headers, body, 401, exc.reason))
            await _answer(send, 401, exc.reason.encode())
            return
        self.deliveries.append(Delivery(headers, body, 204))
        await _answer(send, 204, b"")

    @property
    def accepted(self) -> list[Delivery]:
        return [d for d in self.deliveries if d.status == 204]


async def _answer(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def receiving(secret: str) -> AsyncIterator[VerifyingReceiver]:
    receiver = VerifyingReceiver(WebhookVerifier(secret))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    receiver.url = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    config = uvicorn.Config(receiver, lifespan="off", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        await eventually(lambda: server.started or task.done(), 5.0, "uvicorn to start")
        yield receiver
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 5.0)
        sock.close()


async def answer(context: RequestContext) -> str:
    """Answers after a moment (so the push config exists before the task ends)."""
    await asyncio.sleep(0.05)
    return f"done: {context.text}"


async def deliveries_of_one_task(
    server_secret: str | list[str], receiver_secret: str
) -> VerifyingReceiver:
    """Run one task whose updates are pushed to a verifying receiver; the receiver after."""
    async with (
        receiving(receiver_secret) as receiver,
        running_server(
            answer,
            push=True,
            allow_private_push_targets=True,
            push_signing_secret=server_secret,
        ) as srv,
        await A2AClient.connect(srv.url) as client,
    ):
        config = TaskPushNotificationConfig(url=receiver.url, token="tok")
        result = await client.send("job", push_config=config)
        assert result.text == "done: job"
        await eventually(lambda: len(receiver.deliveries) >= 2, 10.0, "two deliveries")
        await asyncio.sleep(0.2)  # any retry would arrive by now
    return receiver


async def test_signed_deliveries_are_accepted() -> None:
    secret = new_webhook_secret()
    receiver = await deliveries_of_one_task(secret, secret)
    assert receiver.deliveries, "nothing was delivered"
    assert all(d.status == 204 for d in receiver.deliveries), receiver.deliveries
    first = receiver.deliveries[0]
    assert first.headers[ID_HEADER].startswith("msg_")
    assert first.headers[SIGNATURE_HEADER].startswith("v1,")
    assert abs(int(first.headers[TIMESTAMP_HEADER]) - time.time()) < 60
    assert len({d.headers[ID_HEADER] for d in receiver.deliveries}) == len(receiver.deliveries)


async def test_a_rotated_secret_signs_for_both() -> None:
    old, new = new_webhook_secret(), new_webhook_secret()
    receiver = await deliveries_of_one_task([new, old], old)  # a receiver not yet updated
    assert receiver.deliveries
    assert all(d.status == 204 for d in receiver.deliveries)
    assert len(receiver.deliveries[0].headers[SIGNATURE_HEADER].split()) == 2


async def test_a_wrong_secret_is_refused_and_not_retried() -> None:
    receiver = await deliveries_of_one_task(new_webhook_secret(), new_webhook_secret())
    assert receiver.deliveries
    assert {d.status for d in receiver.deliveries} == {401}
    assert receiver.deliveries[0].reason.startswith("no signature matches")
    ids = [d.headers[ID_HEADER] for d in receiver.deliveries]
    assert len(set(ids)) == len(ids)  # a 401 is not retried


async def resend(url: str, headers: dict[str, str], body: bytes) -> httpx.Response:
    kept = {
        k: v
        for k, v in headers.items()
        if k.lower() in (ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER, "content-type")
    }
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url, content=body, headers=kept)


async def test_tampered_stale_and_replayed_deliveries_are_refused() -> None:
    secret = new_webhook_secret()
    async with (
        receiving(secret) as receiver,
        running_server(
            answer, push=True, allow_private_push_targets=True, push_signing_secret=secret
        ) as srv,
        await A2AClient.connect(srv.url) as client,
    ):
        await client.send("job", push_config=TaskPushNotificationConfig(url=receiver.url))
        await eventually(lambda: len(receiver.accepted) >= 1, 10.0, "a delivery")
        original = receiver.accepted[0]

        # the body changed by one byte
        tampered = original.body.replace(b'"taskId"', b'"taskID"', 1)
        assert tampered != original.body
        answer_ = await resend(receiver.url, original.headers, tampered)
        assert answer_.status_code == 401
        assert answer_.text.startswith("no signature matches")

        # the very same delivery again: a replay
        answer_ = await resend(receiver.url, original.headers, original.body)
        assert answer_.status_code == 401
        assert "already received (a replay)" in answer_.text

        # a delivery older than the window (the receiver's clock is 10 minutes ahead)
        receiver.skew = 600
        answer_ = await resend(receiver.url, original.headers, original.body)
        assert answer_.status_code == 401
        assert "more than 300 s away" in answer_.text

        # no signature at all
        answer_ = await resend(receiver.url, {"content-type": "application/json"}, b"{}")
        assert answer_.status_code == 401
        assert answer_.text == f"no {ID_HEADER} header"


def test_verify_webhook_without_sockets_explains_each_refusal() -> None:
    secret = new_webhook_secret()
    signer = WebhookSigner(secret)
    body = b'{"statusUpdate":{}}'
    headers = signer.sign(body, message_id="msg_1", timestamp=1_000_000)
    assert verify_webhook(secret, headers, body, now=1_000_100) == "msg_1"
    upper = {k.upper(): v for k, v in headers.items()}  # header names are case-insensitive
    assert verify_webhook(secret, upper, body, now=1_000_100) == "msg_1"
    cases = {
        "no signature matches": lambda: verify_webhook(secret, headers, body + b" ", now=1_000_000),
        "more than 300 s away": lambda: verify_webhook(secret, headers, body, now=1_000_301),
        "from the future": lambda: verify_webhook(secret, headers, body, now=999_000),
        "not a Unix time": lambda: verify_webhook(
            secret, {**headers, TIMESTAMP_HEADER: "soon"}, body, now=1_000_000
        ),
    }
    for said, check in cases.items():
        with pytest.raises(WebhookVerificationError, match=said):
            check()
    verifier = WebhookVerifier(secret)
    verifier.verify(headers, body, now=1_000_000)
    with pytest.raises(WebhookVerificationError, match="replay"):
        verifier.verify(headers, body, now=1_000_001)
    retried = signer.sign(body, message_id="msg_1", timestamp=1_000_002)  # the sender's retry
    assert verifier.verify(retried, body, now=1_000_002) == "msg_1"
    assert secret not in repr(signer)
    assert secret not in repr(verifier)
    with pytest.raises(ValueError, match="at least 16 bytes"):
        WebhookSigner("short")


async def test_a_secret_without_the_built_in_sender_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="push_signing_secret"):
        async with running_server(answer, push_signing_secret=new_webhook_secret()):
            pass


class _FrozenSecond:
    """``time`` for the push sender, with ``time()`` stuck inside one second."""

    def __init__(self, at: float) -> None:
        self.at = at

    def time(self) -> float:
        return self.at

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


async def test_a_survivors_redelivery_in_the_same_second_is_not_taken_for_a_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An instance that settles a dead one's task sends again what that one may have sent,
    under the same webhook-id. Within the same second, with the same timestamp, a
    verifier would refuse it as a replay: the redelivery is signed a second later."""
    from a2a_core.server.push import PushNotificationService
    from a2a_core.server.push import notifier as push_notifier
    from a2a_core.types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent

    secret = new_webhook_secret()
    monkeypatch.setattr(push_notifier, "time", _FrozenSecond(int(time.time()) + 0.5))
    task = Task(id="t-1", context_id="c-1", status=TaskStatus.now(TaskState.WORKING))
    event = TaskStatusUpdateEvent(task_id="t-1", context_id="c-1", status=task.status)
    async with receiving(secret) as receiver:
        first = PushNotificationService(allow_private_targets=True, signing_secret=secret)
        survivor = PushNotificationService(allow_private_targets=True, signing_secret=secret)
        try:
            config = TaskPushNotificationConfig(task_id="t-1", id="cfg", url=receiver.url)
            for push in (first, survivor):
                await push.set_config(config, "1.0")
            first.on_saved_event(task, event, TaskState.SUBMITTED, 2)
            await eventually(lambda: len(receiver.deliveries) == 1, 10.0, "the first delivery")
            survivor.replay(task, [(2, event, time.time_ns())])
            await eventually(lambda: len(receiver.deliveries) == 2, 10.0, "the redelivery")
        finally:
            await first.aclose()
            await survivor.aclose()
    once, again = receiver.deliveries
    assert once.headers[ID_HEADER] == again.headers[ID_HEADER]  # the same delivery
    assert int(again.headers[TIMESTAMP_HEADER]) == int(once.headers[TIMESTAMP_HEADER]) + 1
    assert [d.status for d in receiver.deliveries] == [204, 204], again.reason
