"""Telemetry enabled into memory for each test (``a2a_core.testing.otel``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from a2a_core.testing.otel import InMemoryTelemetry


@pytest.fixture
def otel() -> Iterator[InMemoryTelemetry]:
    with InMemoryTelemetry() as captured:
        yield captured
