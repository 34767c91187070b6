"""pytest plugin for ``a2a_core.testing``: registers the ``a2a_opt_out`` marker.

Needed only for the marker form of opt-outs under ``--strict-markers``
(the ``opt_out`` class attribute and decorator need nothing). Load it with
``-p a2a_core.testing.pytest_plugin``, ``pytest_plugins = [...]`` in a
root conftest, or call ``register_markers(config)`` from a ``pytest_configure``.
"""

from __future__ import annotations

import pytest

from ._suite import OPT_OUT_MARKER

__all__ = ["pytest_configure", "register_markers"]


def register_markers(config: pytest.Config) -> None:
    """Declare the suite's markers on ``config``."""
    config.addinivalue_line(
        "markers",
        f"{OPT_OUT_MARKER}(*tests, reason): leave these conformance-suite tests out of the "
        "marked class, for the given reason (required)",
    )


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)
