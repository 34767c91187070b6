"""The ``a2a_core`` meter's instruments (created once per ``enable()``)."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics

__all__ = ["Instruments"]

_SECONDS_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


def core_version() -> str:
    """The installed a2a-adapters-core version, for the tracer's and meter's scope."""
    from importlib import metadata

    try:
        return metadata.version("a2a-adapters-core")
    except metadata.PackageNotFoundError:
        return "0"


class Instruments:
    """Counters, histograms and gauges of A2A serving and calling."""

    def __init__(self, meter_provider: Any) -> None:
        meter = metrics.get_meter("a2a_core", core_version(), meter_provider=meter_provider)
        hist: dict[str, Any] = {
            "unit": "s",
            "explicit_bucket_boundaries_advisory": _SECONDS_BUCKETS,
        }
        self.requests = meter.create_counter(
            "a2a.server.requests", unit="{request}", description="A2A requests answered"
        )
        self.request_duration = meter.create_histogram(
            "a2a.server.request.duration", description="Time to answer a request", **hist
        )
        self.client_duration = meter.create_histogram(
            "a2a.client.request.duration", description="Time of a call to a remote agent", **hist
        )
        self.tasks = meter.create_counter(
            "a2a.server.tasks", unit="{task}", description="Agent runs ended, by the task's state"
        )
        self.task_duration = meter.create_histogram(
            "a2a.server.task.duration", description="Time an agent run took", **hist
        )
        self.active_tasks = meter.create_up_down_counter(
            "a2a.server.active_tasks", unit="{task}", description="Agent runs in progress"
        )
        self.active_streams = meter.create_up_down_counter(
            "a2a.server.active_streams", unit="{stream}", description="Event streams open"
        )
        self.push_deliveries = meter.create_counter(
            "a2a.server.push.deliveries",
            unit="{delivery}",
            description="Push notifications sent, by outcome (delivered or failed)",
        )
        self.store_duration = meter.create_histogram(
            "a2a.server.store.duration", description="Time of one task store operation", **hist
        )
