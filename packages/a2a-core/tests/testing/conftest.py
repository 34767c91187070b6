"""The conformance suites' own tests: the ``a2a_opt_out`` marker is declared here."""

from __future__ import annotations

import pytest
from a2a_core.testing.pytest_plugin import register_markers


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)
