"""Capture this process's A2A telemetry in memory, for tests (needs ``opentelemetry-sdk``).

    with InMemoryTelemetry() as otel:
        ...  # serve, call
    assert otel.named("a2a.agent.run")

``telemetry.enable`` is given an SDK tracer provider with the in-memory span
exporter and a meter provider with an in-memory reader; leaving the block
disables telemetry and shuts both down.
"""

from __future__ import annotations

from typing import Any, Self

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from .. import telemetry

__all__ = ["InMemoryTelemetry"]


class InMemoryTelemetry:
    """Spans and metrics of ``a2a_core.telemetry`` (and the adapters) kept in memory."""

    def __init__(self, **options: Any) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.options = options
        """More ``telemetry.enable`` options (``record_content``, ``baggage``)."""

    def __enter__(self) -> Self:
        telemetry.enable(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **self.options
        )
        return self

    def __exit__(self, *exc: object) -> None:
        telemetry.disable()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()

    def spans(self) -> list[ReadableSpan]:
        """Every finished span, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        """Finished spans whose name starts with ``prefix``."""
        return [span for span in self.spans() if span.name.startswith(prefix)]

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Metric name -> [(attributes, value)]: a sum's value, a histogram's count."""
        found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        if value is None:
                            value = getattr(point, "count", None)
                        found.setdefault(metric.name, []).append(
                            (dict(point.attributes or {}), value)
                        )
        return found
