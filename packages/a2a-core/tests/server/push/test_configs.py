"""Push config CRUD through the service: ids, versions, redaction, validation."""

from __future__ import annotations

import uuid

import pytest
from _push_support import HOOK_URL, FakeResolver, fake_policy
from a2a_core.errors import InvalidParamsError
from a2a_core.server.push import (
    REDACTED,
    MemoryPushConfigStore,
    PushNotificationService,
    redact,
)
from a2a_core.types import AuthenticationInfo, TaskPushNotificationConfig


def service() -> PushNotificationService:
    return PushNotificationService(policy=fake_policy())


def secret_config(**fields: object) -> TaskPushNotificationConfig:
    values: dict[str, object] = {
        "task_id": "t1",
        "url": HOOK_URL,
        "token": "tok-123",
        "authentication": AuthenticationInfo(scheme="Bearer", credentials="cred-456"),
        **fields,
    }
    return TaskPushNotificationConfig.model_validate(values)


async def test_an_id_is_assigned_when_absent_and_kept_when_given() -> None:
    push = service()
    created = await push.set_config(secret_config(), "1.0")
    assert created.id is not None
    uuid.UUID(created.id)  # a UUID
    given = await push.set_config(secret_config(id="mine"), "1.0")
    assert given.id == "mine"
    assert {c.id for c in await push.list_configs("t1")} == {created.id, "mine"}


async def test_each_config_keeps_the_version_it_was_created_in() -> None:
    store = MemoryPushConfigStore()
    push = PushNotificationService(policy=fake_policy(), store=store)
    await push.set_config(secret_config(id="new"), "1.0")
    await push.set_config(secret_config(id="old"), "0.3")
    await push.set_config(secret_config(id="old-long"), "0.3.0")
    versions = {e.config_id: e.version for e in await store.list("t1")}
    assert versions == {"new": "1.0", "old": "0.3", "old-long": "0.3"}
    with pytest.raises(InvalidParamsError, match="version"):
        await push.set_config(secret_config(id="x"), "7.0")


async def test_same_id_replaces_the_config_and_keeps_its_birth_time() -> None:
    store = MemoryPushConfigStore()
    push = PushNotificationService(policy=fake_policy(), store=store)
    await push.set_config(secret_config(id="c"), "1.0")
    before = await store.get("t1", "c")
    await push.set_config(secret_config(id="c", url="https://hooks.example/v2"), "0.3")
    after = await store.get("t1", "c")
    assert before is not None
    assert after is not None
    assert after.config.url == "https://hooks.example/v2"
    assert after.version == "0.3"
    assert after.created_ns == before.created_ns
    assert len(await push.list_configs("t1")) == 1


async def test_get_list_delete() -> None:
    push = service()
    await push.set_config(secret_config(id="a"), "1.0")
    await push.set_config(secret_config(id="b", task_id="t2"), "1.0")
    got = await push.get_config("t1", "a")
    assert got is not None
    assert got.url == HOOK_URL
    assert got.task_id == "t1"
    assert await push.get_config("t1", "b") is None  # configs are per task
    assert await push.get_config("nope", "a") is None
    assert [c.id for c in await push.list_configs("t2")] == ["b"]
    assert await push.list_configs("empty") == []
    assert await push.delete_config("t1", "a") is True
    assert await push.delete_config("t1", "a") is False
    assert await push.get_config("t1", "a") is None


async def test_secrets_are_redacted_everywhere_the_api_shows_them() -> None:
    store = MemoryPushConfigStore()
    push = PushNotificationService(policy=fake_policy(), store=store)
    created = await push.set_config(secret_config(id="s"), "1.0")
    got = await push.get_config("t1", "s")
    listed = await push.list_configs("t1")
    for shown in (created, got, listed[0]):
        assert shown is not None
        dumped = shown.model_dump_json(by_alias=True)
        assert "tok-123" not in dumped
        assert "cred-456" not in dumped
        assert shown.token == REDACTED
        assert shown.authentication is not None
        assert shown.authentication.scheme == "Bearer"
        assert shown.authentication.credentials == REDACTED
        assert shown.url == HOOK_URL
    stored = await store.get("t1", "s")
    assert stored is not None
    assert stored.config.token == "tok-123"  # the sender still has them
    assert stored.config.authentication is not None
    assert stored.config.authentication.credentials == "cred-456"


def test_redact_leaves_configs_without_secrets_alone() -> None:
    plain = TaskPushNotificationConfig(task_id="t", id="i", url=HOOK_URL)
    assert redact(plain) == plain
    scheme_only = plain.model_copy(update={"authentication": AuthenticationInfo(scheme="Bearer")})
    assert redact(scheme_only) == scheme_only


async def test_writing_back_a_redacted_config_keeps_the_secrets() -> None:
    store = MemoryPushConfigStore()
    push = PushNotificationService(policy=fake_policy(), store=store)
    await push.set_config(secret_config(id="s"), "1.0")
    shown = await push.get_config("t1", "s")
    assert shown is not None
    await push.set_config(shown.model_copy(update={"url": "https://hooks.example/v2"}), "1.0")
    stored = await store.get("t1", "s")
    assert stored is not None
    assert stored.config.url == "https://hooks.example/v2"
    assert stored.config.token == "tok-123"
    assert stored.config.authentication is not None
    assert stored.config.authentication.credentials == "cred-456"


@pytest.mark.parametrize(
    "fields",
    [
        {"token": REDACTED, "authentication": None},
        {
            "token": None,
            "authentication": AuthenticationInfo(scheme="Bearer", credentials=REDACTED),
        },
    ],
)
async def test_the_redaction_marker_is_not_a_secret_for_a_new_config(
    fields: dict[str, object],
) -> None:
    with pytest.raises(InvalidParamsError, match="redaction marker"):
        await service().set_config(secret_config(id="fresh", **fields), "1.0")


@pytest.mark.parametrize(
    "fields",
    [
        {"token": "abc\r\nX-Injected: 1"},
        {"token": "tab\there"},
        {"token": " padded"},
        {"token": "x" * 9000},
        {"authentication": AuthenticationInfo(scheme="Bearer x", credentials="c")},
        {"authentication": AuthenticationInfo(scheme="", credentials="c")},
        {"authentication": AuthenticationInfo(scheme="Bearer", credentials="a\nb")},
        {"authentication": AuthenticationInfo(scheme="Bearer", credentials="é")},
    ],
)
async def test_secrets_that_cannot_be_a_header_are_refused(fields: dict[str, object]) -> None:
    push = service()
    with pytest.raises(InvalidParamsError):
        await push.set_config(secret_config(**fields), "1.0")
    assert await push.list_configs("t1") == []


async def test_task_id_is_required() -> None:
    with pytest.raises(InvalidParamsError, match="taskId"):
        await service().set_config(TaskPushNotificationConfig(url=HOOK_URL), "1.0")


async def test_overlong_ids_are_refused() -> None:
    with pytest.raises(InvalidParamsError, match="256"):
        await service().set_config(secret_config(id="i" * 300), "1.0")


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8888/webhook",
        "http://127.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://10.0.0.1/",
        "file:///etc/passwd",
        "http://[::127.0.0.1]/",  # IPv4-compatible IPv6 (deprecated)
        "http://[::a00:1]/",
        "http://[::a9fe:a9fe]/latest/meta-data/",
        "http://[64:ff9b:1::a00:1]/",  # local-use NAT64 (RFC 8215)
    ],
)
async def test_refused_urls_are_invalid_params_and_store_nothing(url: str) -> None:
    push = PushNotificationService()
    with pytest.raises(InvalidParamsError, match="URL refused"):
        await push.set_config(secret_config(url=url), "1.0")
    assert await push.list_configs("t1") == []


async def test_private_targets_and_allowlists_open_the_policy() -> None:
    opened = PushNotificationService(allow_private_targets=True)
    await opened.set_config(secret_config(url="http://127.0.0.1:9/x"), "1.0")
    listed = PushNotificationService(allowed_hosts=["localhost"])
    await listed.set_config(secret_config(url="http://localhost:8888/webhook"), "1.0")
    with pytest.raises(InvalidParamsError):
        await listed.set_config(secret_config(url="http://127.0.0.1:8888/webhook"), "1.0")


async def test_urls_that_do_not_resolve_yet_are_accepted() -> None:
    resolver = FakeResolver()
    push = PushNotificationService(policy=fake_policy(resolver))
    created = await push.set_config(secret_config(url="https://later.example/hook"), "1.0")
    assert created.url == "https://later.example/hook"


async def test_the_per_task_bound_surfaces_as_invalid_params() -> None:
    push = PushNotificationService(
        policy=fake_policy(), store=MemoryPushConfigStore(max_configs_per_task=16)
    )
    for i in range(16):
        await push.set_config(secret_config(id=f"c{i}"), "1.0")
    with pytest.raises(InvalidParamsError, match="at most 16"):
        await push.set_config(secret_config(id="c16"), "1.0")


def test_policy_and_flags_are_exclusive() -> None:
    with pytest.raises(ValueError, match="either"):
        PushNotificationService(policy=fake_policy(), allow_private_targets=True)
    with pytest.raises(ValueError, match="max_queue"):
        PushNotificationService(max_queue=0)
