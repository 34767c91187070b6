"""Fixtures for the server-core tests: services built and shut down per test."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a_core.server import A2AService

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from server_core_support import ServiceFactory, make_card  # noqa: E402


@pytest.fixture
async def make_service() -> AsyncIterator[ServiceFactory]:
    """Build services for a test; every one is closed (agents stopped) afterwards."""
    services: list[A2AService] = []

    def factory(agent: Any, **options: Any) -> A2AService:
        card = options.pop("card", None) or make_card()
        service = A2AService(agent, card, **options)
        services.append(service)
        return service

    yield factory
    for service in services:
        await service.aclose()
