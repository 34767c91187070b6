"""Shared test setup for a2a-core: make ``strategies`` importable and tame hypothesis deadlines."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# The machine is shared and small: judge correctness, not per-example latency.
settings.register_profile("a2a-core", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("a2a-core")
