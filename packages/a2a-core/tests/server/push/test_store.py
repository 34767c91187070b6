"""The in-memory push config store: CRUD, order, bounds."""

from __future__ import annotations

import pytest
from a2a_core.errors import InvalidParamsError, ServerBusyError
from a2a_core.server.push import MemoryPushConfigStore, PushConfigEntry
from a2a_core.types import TaskPushNotificationConfig


def entry(task_id: str, config_id: str, url: str = "https://hooks.example/") -> PushConfigEntry:
    config = TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url)
    return PushConfigEntry(config, "1.0", 1)


async def test_crud_and_creation_order() -> None:
    store = MemoryPushConfigStore()
    for cid in ("b", "a", "c"):
        await store.put(entry("t1", cid))
    await store.put(entry("t2", "a"))
    assert [e.config_id for e in await store.list("t1")] == ["b", "a", "c"]
    assert len(store) == 4
    found = await store.get("t1", "a")
    assert found is not None
    assert found.task_id == "t1"
    assert await store.get("t1", "zzz") is None
    assert await store.get("nope", "a") is None
    assert await store.delete("t1", "a") is True
    assert await store.delete("t1", "a") is False
    assert [e.config_id for e in await store.list("t1")] == ["b", "c"]
    assert await store.delete_task("t1") == 2
    assert await store.list("t1") == []
    assert await store.delete_task("t1") == 0
    assert len(store) == 1


async def test_replacing_keeps_the_place_in_the_list() -> None:
    store = MemoryPushConfigStore()
    await store.put(entry("t", "x"))
    await store.put(entry("t", "y"))
    await store.put(entry("t", "x", url="https://other.example/"))
    listed = await store.list("t")
    assert [e.config_id for e in listed] == ["x", "y"]
    assert listed[0].config.url == "https://other.example/"


async def test_configs_per_task_are_bounded() -> None:
    store = MemoryPushConfigStore(max_configs_per_task=2)
    await store.put(entry("t", "1"))
    await store.put(entry("t", "2"))
    with pytest.raises(InvalidParamsError, match="at most 2"):
        await store.put(entry("t", "3"))
    await store.put(entry("t", "2", url="https://replaced.example/"))  # replacing is fine
    await store.put(entry("other", "3"))  # the bound is per task
    assert len(store) == 3


async def test_tasks_with_configs_are_bounded() -> None:
    store = MemoryPushConfigStore(max_tasks=2)
    await store.put(entry("t1", "a"))
    await store.put(entry("t2", "a"))
    with pytest.raises(ServerBusyError):
        await store.put(entry("t3", "a"))
    await store.put(entry("t1", "b"))  # existing tasks may still add configs
    await store.delete_task("t2")
    await store.put(entry("t3", "a"))
    assert len(store) == 3


async def test_an_emptied_task_frees_its_slot() -> None:
    store = MemoryPushConfigStore(max_tasks=1)
    await store.put(entry("t1", "a"))
    assert await store.delete("t1", "a")
    await store.put(entry("t2", "a"))


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        MemoryPushConfigStore(max_configs_per_task=0)
    with pytest.raises(ValueError, match="must be > 0"):
        MemoryPushConfigStore(max_tasks=0)


async def test_stored_bytes_are_bounded_and_given_back() -> None:
    store = MemoryPushConfigStore(max_bytes=3_500)
    big = "https://hooks.example/" + "p" * 700
    for i in range(3):
        await store.put(entry(f"t{i}", "c", url=big))
    with pytest.raises(ServerBusyError) as full:
        await store.put(entry("t9", "c", url=big))
    assert full.value.data == {"reason": "push_config_store_full", "retryable": True}
    held = store.stored_bytes
    assert held <= 3_500
    await store.put(entry("t0", "c", url=big))  # replacing costs nothing more
    assert store.stored_bytes == held
    assert await store.delete("t0", "c")
    assert await store.delete_task("t1") == 1
    await store.put(entry("t9", "c", url=big))
    assert await store.delete_task("t2") == 1
    assert await store.delete("t9", "c")
    assert store.stored_bytes == 0
