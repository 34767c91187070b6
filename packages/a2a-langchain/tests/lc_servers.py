"""Served LangChain agents on 127.0.0.1 that outlive pytest-asyncio's per-test event loops."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from a2a_core.testing import served_in_thread as core_served_in_thread
from a2a_langchain import running_server


@contextlib.contextmanager
def served_in_thread(runnable: Any, **options: Any) -> Iterator[str]:
    """``a2a_langchain.running_server`` (agent and server options) in a thread; the base URL."""
    with core_served_in_thread(runnable, running=running_server, **options) as url:
        yield url
