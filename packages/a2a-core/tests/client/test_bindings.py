"""The binding table: one registration makes a binding selectable, built and named everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import a2a_core.bindings as registry
import pytest
from a2a_core import AgentCard, AgentInterface, Task, TaskState, TaskStatus
from a2a_core.bindings import Binding, BindingUnavailableError, register_binding
from a2a_core.client import A2AClient
from a2a_core.client.interfaces import (
    NoCompatibleInterfaceError,
    select_interface,
    supported_bindings,
)
from a2a_core.client.transports import TransportConfig
from a2a_core.client.transports.base import CallOptions, EventIterator
from a2a_core.wire.operations import Operation
from pydantic import BaseModel


class FakeTransport:
    """Answers GetTask with a fixed task; records which interface built it."""

    binding = "X-FAKE"
    version = "1.0"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(self, interface: AgentInterface, config: TransportConfig) -> None:
        self.interface = interface
        self.config = config

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        assert op is Operation.GET_TASK
        return Task(id="t-1", context_id="c", status=TaskStatus(state=TaskState.COMPLETED))

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def fake_factory(interface: AgentInterface, config: TransportConfig) -> FakeTransport:
    return FakeTransport(interface, config)


@pytest.fixture
def fake_binding() -> Iterator[Binding]:
    entry = Binding(
        name="X-FAKE",
        aliases=("FAKE",),
        cli_names=("fake",),
        versions=("1.0",),
        client=f"{__name__}:fake_factory",
    )
    saved = (dict(registry._REGISTRY), dict(registry._ALIASES))  # pyright: ignore[reportPrivateUsage]
    register_binding(entry)
    try:
        yield entry
    finally:
        registry._REGISTRY.clear()  # pyright: ignore[reportPrivateUsage]
        registry._REGISTRY.update(saved[0])  # pyright: ignore[reportPrivateUsage]
        registry._ALIASES.clear()  # pyright: ignore[reportPrivateUsage]
        registry._ALIASES.update(saved[1])  # pyright: ignore[reportPrivateUsage]


def _card(*interfaces: tuple[str, str, str]) -> AgentCard:
    return AgentCard(
        name="a",
        description="",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=b, protocol_version=v)
            for url, b, v in interfaces
        ],
    )


def test_builtin_bindings_are_registered_with_their_spellings() -> None:
    assert registry.normalize_binding("rest") == "HTTP+JSON"
    assert registry.normalize_binding("json-rpc") == "JSONRPC"
    assert registry.cli_bindings()["rest"] == "HTTP+JSON"
    assert {"JSONRPC", "HTTP+JSON"} <= set(supported_bindings())


async def test_one_registration_makes_a_binding_selectable_and_built(fake_binding: Binding) -> None:
    card = _card(("fake://agent", "fake", "1.0"), ("http://a/", "JSONRPC", "1.0"))
    chosen = select_interface(card, base_url="http://a/.well-known/agent-card.json")
    assert (chosen.protocol_binding, chosen.url) == ("X-FAKE", "fake://agent")
    assert registry.cli_bindings()["fake"] == "X-FAKE"
    async with A2AClient.for_endpoint(
        "fake://agent", binding="fake", headers={"Authorization": "Bearer t"}
    ) as client:
        assert isinstance(client.transport, FakeTransport)
        assert client.transport.config.headers == {"Authorization": "Bearer t"}
        task = await client.get_task("t-1")
    assert task.status.state is TaskState.COMPLETED


def test_a_binding_only_carries_its_versions(fake_binding: Binding) -> None:
    card = _card(("fake://agent", "X-FAKE", "0.3"), ("http://a/", "JSONRPC", "0.3"))
    chosen = select_interface(card, preferred_versions=("0.3",))
    assert chosen.protocol_binding == "JSONRPC"


def test_a_binding_without_its_extra_is_skipped_and_named(fake_binding: Binding) -> None:
    register_binding(
        Binding(
            name="X-FAKE",
            client=f"{__name__}:fake_factory",
            requires=("a2a_core_no_such_module",),
            extra="fake",
        )
    )
    card = _card(("fake://agent", "X-FAKE", "1.0"), ("http://a/", "JSONRPC", "1.0"))
    assert select_interface(card).protocol_binding == "JSONRPC"
    assert "X-FAKE" not in supported_bindings()
    with pytest.raises(NoCompatibleInterfaceError, match=r"a2a-adapters-core\[fake\]"):
        select_interface(card, preferred_bindings=("X-FAKE",))


def test_a_transport_that_cannot_be_imported_names_the_extra() -> None:
    entry = Binding(name="X-BROKEN", client="a2a_core_no_such_module:make", extra="broken")
    with pytest.raises(BindingUnavailableError, match=r"a2a-adapters-core\[broken\]"):
        entry.transport_factory()
