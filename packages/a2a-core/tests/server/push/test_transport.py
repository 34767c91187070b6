"""Real sockets on 127.0.0.1: delivery, and the transport that pins vetted addresses."""

from __future__ import annotations

import httpx
import pytest
from _push_support import FakeResolver, emit, eventually, fake_policy, make_task, webhook_server
from a2a_core.server.push import (
    MemoryPushConfigStore,
    PushConfigEntry,
    PushNotificationService,
    RetryPolicy,
    TargetRefusedError,
    UrlPolicy,
    VettedTransport,
)
from a2a_core.types import AuthenticationInfo, TaskPushNotificationConfig, TaskState


async def test_real_delivery_to_a_local_webhook() -> None:
    async with webhook_server() as receiver:
        push = PushNotificationService(allow_private_targets=True)
        try:
            await push.set_config(
                TaskPushNotificationConfig(
                    task_id="task-1",
                    url=receiver.url,
                    token="tok",
                    authentication=AuthenticationInfo(scheme="Bearer", credentials="cred"),
                ),
                "1.0",
            )
            task = make_task(state=TaskState.SUBMITTED)
            for i in range(5):
                task = emit(push, task, TaskState.WORKING, f"step {i}")
            emit(push, task, TaskState.COMPLETED, "done")
            requests = await receiver.wait_for(6)
        finally:
            await push.aclose()
    assert {r.path for r in requests} == {"/webhook"}
    assert all(r.headers["authorization"] == "Bearer cred" for r in requests)
    assert all(r.headers["x-a2a-notification-token"] == "tok" for r in requests)
    assert all(r.headers["content-type"] == "application/a2a+json" for r in requests)
    texts = [r.json["statusUpdate"]["status"]["message"]["parts"][0]["text"] for r in requests]
    assert texts == [f"step {i}" for i in range(5)] + ["done"]
    assert push.stats.delivered == 6


async def test_real_retry_after_a_server_error() -> None:
    async with webhook_server() as receiver:
        receiver.statuses = [500, 502]
        push = PushNotificationService(
            allow_private_targets=True, retry=RetryPolicy(backoff=0.01, max_backoff=0.05)
        )
        try:
            await push.set_config(
                TaskPushNotificationConfig(task_id="task-1", url=receiver.url), "1.0"
            )
            emit(push, make_task(), TaskState.WORKING)
            await eventually(lambda: push.stats.delivered == 1)
        finally:
            await push.aclose()
    assert len(receiver.requests) == 3
    assert receiver.requests[0].body == receiver.requests[2].body


async def test_a_refused_stored_target_is_never_contacted() -> None:
    async with webhook_server() as receiver:
        store = MemoryPushConfigStore()
        push = PushNotificationService(store=store)  # default policy: no private targets
        try:
            config = TaskPushNotificationConfig(task_id="task-1", id="c", url=receiver.url)
            await store.put(PushConfigEntry(config, "1.0", 0))  # bypasses set_config
            emit(push, make_task(), TaskState.WORKING)
            await eventually(lambda: push.stats.failed == 1)
        finally:
            await push.aclose()
    assert receiver.requests == []


async def test_the_transport_refuses_to_connect_where_the_policy_forbids() -> None:
    transport = VettedTransport(UrlPolicy.build())
    async with webhook_server() as receiver, httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(TargetRefusedError, match="loopback"):
            await client.post(receiver.url, content=b"{}")
        localhost_url = receiver.url.replace("127.0.0.1", "localhost")
        with pytest.raises(TargetRefusedError):
            await client.post(localhost_url, content=b"{}")
    assert receiver.requests == []


async def test_the_transport_allows_allowlisted_hosts() -> None:
    async with webhook_server() as receiver:
        policy = UrlPolicy.build(allowed_hosts=["localhost"])
        localhost_url = receiver.url.replace("127.0.0.1", "localhost")
        async with httpx.AsyncClient(transport=VettedTransport(policy)) as client:
            response = await client.post(localhost_url, content=b"{}")
            assert response.status_code == 200
            with pytest.raises(TargetRefusedError):  # the literal address is not allowlisted
                await client.post(receiver.url, content=b"{}")
    assert len(receiver.requests) == 1


async def test_the_transport_connects_to_the_vetted_address_not_a_fresh_lookup() -> None:
    # "hook.test" resolves (in our resolver) to 127.0.0.1: the transport connects there,
    # while the request still names the host, as TLS and virtual hosting need.
    resolver = FakeResolver({"hook.test": ["127.0.0.1"]})
    policy = fake_policy(resolver, allow_private_targets=True)
    async with webhook_server() as receiver:
        url = receiver.url.replace("127.0.0.1", "hook.test")
        async with httpx.AsyncClient(transport=VettedTransport(policy)) as client:
            response = await client.post(url, content=b"{}")
        assert response.status_code == 200
        assert receiver.requests[0].headers["host"] == url.split("/")[2]
        assert resolver.calls == ["hook.test"]
        # Rebinding: the name now points somewhere refused; the next connection is refused.
        resolver.answers["hook.test"] = ["0.0.0.0"]
        async with httpx.AsyncClient(transport=VettedTransport(policy)) as client:
            with pytest.raises(TargetRefusedError, match="unspecified"):
                await client.post(url, content=b"{}")
    assert len(receiver.requests) == 1


async def test_the_transport_tries_each_vetted_address() -> None:
    # The first address refuses connections (nothing listens on [::1]:port), the second works.
    async with webhook_server() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        resolver = FakeResolver({"multi.test": ["::1", "127.0.0.1"]})
        policy = fake_policy(resolver, allow_private_targets=True)
        async with httpx.AsyncClient(transport=VettedTransport(policy)) as client:
            response = await client.post(f"http://multi.test:{port}/webhook", content=b"{}")
        assert response.status_code == 200
    assert len(receiver.requests) == 1


async def test_the_transport_surfaces_resolution_failures_as_connect_errors() -> None:
    policy = fake_policy(FakeResolver())
    async with httpx.AsyncClient(transport=VettedTransport(policy)) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post("http://unknown.test/", content=b"{}")
