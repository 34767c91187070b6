"""Tenants scope tasks: a task made under tenant ``acme`` is not found under ``globex``.

The same principal (alice) reaches across tenants in every binding (JSON-RPC,
HTTP+JSON, gRPC) and, where A2A 0.3 has no tenant at all, from 0.3: every
operation (get, list, cancel, subscribe, the four push-config calls, a send
continuing the task) answers task-not-found, the same as for a random id; the
owner's own tenant still sees everything afterwards, unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.errors import TaskNotFoundError
from a2a_core.server.context import owner_key, owner_principal
from a2a_core.testing import AskingAgent

ALICE = {"Authorization": "Bearer tok-alice"}
BOB = {"Authorization": "Bearer tok-bob"}
HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture
async def server() -> AsyncIterator[Any]:
    async with running_server(
        AskingAgent(),
        grpc_port=0,
        push=True,
        allow_private_push_targets=True,
        bearer_tokens={"tok-alice": "alice", "tok-bob": "bob"},
    ) as srv:
        yield srv


def endpoint(srv: Any, binding: str) -> str:
    return srv.grpc_address if binding == "GRPC" else srv.url


async def probe_everything(
    client: A2AClient, task_id: str, *, list_tasks: bool = True
) -> list[str]:
    """Every task operation on someone else's task id; the names of those that did NOT
    answer task-not-found."""
    leaks: list[str] = []
    calls: dict[str, Any] = {
        "get": lambda: client.get_task(task_id),
        "cancel": lambda: client.cancel(task_id),
        "create push config": lambda: client.create_push_config(task_id, HOOK),
        "get push config": lambda: client.get_push_config(task_id, "cfg"),
        "list push configs": lambda: client.list_push_configs(task_id),
        "delete push config": lambda: client.delete_push_config(task_id, "cfg"),
    }
    for name, make in calls.items():
        try:
            await make()
        except TaskNotFoundError:
            continue
        except Exception as exc:  # another error also tells the prober something
            leaks.append(f"{name}: {type(exc).__name__}")
        else:
            leaks.append(f"{name}: answered")
    try:
        async for _ in client.subscribe(task_id):
            leaks.append("subscribe: an event")
            break
    except TaskNotFoundError:
        pass
    except Exception as exc:
        leaks.append(f"subscribe: {type(exc).__name__}")
    if list_tasks:  # (0.3 has no ListTasks)
        page = await client.list_tasks()
        if any(t.id == task_id for t in page.tasks):
            leaks.append("list: shows the task")
    return leaks


BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]


@pytest.mark.parametrize("made_in", BINDINGS)
@pytest.mark.parametrize("probed_from", BINDINGS)
async def test_another_tenant_finds_nothing_in_any_binding(
    server: Any, made_in: str, probed_from: str
) -> None:
    async with A2AClient.for_endpoint(
        endpoint(server, made_in), binding=made_in, tenant="acme", headers=ALICE
    ) as owner:
        sent = await owner.send("hi")
        assert sent.task is not None
        assert sent.needs_input
        task_id = sent.task.id
        config = await owner.create_push_config(task_id, HOOK)
        before = await owner.get_task(task_id)

    async with A2AClient.for_endpoint(
        endpoint(server, probed_from), binding=probed_from, tenant="globex", headers=ALICE
    ) as other_tenant:
        assert await probe_everything(other_tenant, task_id) == []
        # continuing the task from the other tenant: not found either
        with pytest.raises(TaskNotFoundError):
            await other_tenant.send("Ada", task=task_id, context_id=sent.task.context_id)

    # the same tenant, another principal: not found (as before tenants)
    async with A2AClient.for_endpoint(
        endpoint(server, probed_from), binding=probed_from, tenant="acme", headers=BOB
    ) as other_principal:
        assert await probe_everything(other_principal, task_id) == []

    # no tenant at all (the default interface): not found
    async with A2AClient.for_endpoint(
        endpoint(server, probed_from), binding=probed_from, headers=ALICE
    ) as no_tenant:
        assert await probe_everything(no_tenant, task_id) == []

    # the owner, in its tenant, through the probing binding: everything is there, unchanged
    async with A2AClient.for_endpoint(
        endpoint(server, probed_from), binding=probed_from, tenant="acme", headers=ALICE
    ) as owner:
        after = await owner.get_task(task_id)
        assert after == before
        assert [c.id for c in (await owner.list_push_configs(task_id)).configs] == [config.id]
        assert [t.id for t in (await owner.list_tasks()).tasks] == [task_id]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_0_3_caller_has_no_tenant_and_finds_nothing(server: Any, binding: str) -> None:
    async with A2AClient.for_endpoint(
        server.url, binding=binding, tenant="acme", headers=ALICE
    ) as owner:
        sent = await owner.send("hi")
        assert sent.task is not None
        task_id = sent.task.id
    async with A2AClient.for_endpoint(
        server.url, binding=binding, version="0.3", headers=ALICE
    ) as old:
        assert await probe_everything(old, task_id, list_tasks=False) == []


def test_owner_keys_are_injective() -> None:
    keys = [
        owner_key(None, None),
        owner_key("alice", None),
        owner_key("alice", "acme"),
        owner_key("alice", "globex"),
        owner_key(None, "acme"),
        owner_key("bob", "acme"),
        owner_key(owner_key("alice", "acme"), None),  # a principal id that looks scoped
    ]
    assert len(set(keys)) == len(keys)
    assert owner_key("alice", None) == "alice"  # tasks stored before tenants keep their scope
    for principal in ("alice", None, owner_key("x", "y")):
        for tenant in ("acme", None):
            assert owner_principal(owner_key(principal, tenant)) == principal
