"""Telemetry on: services on one store still share its channel (the timing wrapper hides none)."""

from __future__ import annotations

from a2a_core.adapters import open_task_store
from a2a_core.compose.builder import configure_service
from a2a_core.server.memory_channel import channel_for
from a2a_core.testing.cluster_suite import GatedAgent
from a2a_core.testing.otel import InMemoryTelemetry


async def test_two_services_on_one_store_share_its_channel(otel: InMemoryTelemetry) -> None:
    store = open_task_store("memory://")
    first = configure_service(GatedAgent(), name="one", store=store)
    second = configure_service(GatedAgent(), name="two", store=store)
    try:
        assert first.manager.store is not store, "telemetry wraps the store to time it"
        assert first.manager.channel is second.manager.channel is channel_for(store)
        assert first.manager.channel.shared, "two instances attached: events are shared"
    finally:
        await first.aclose()
        await second.aclose()
