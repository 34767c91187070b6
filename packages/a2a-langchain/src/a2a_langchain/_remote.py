"""What LangChain adds to a remote agent session: the conversation key of a call.

The remote-agent plumbing (card text, per-conversation remote state,
answers, cancel, the sync bridge) is ``a2a_core.client.RemoteAgentSession``;
LangChain's conversations are LangGraph threads (``thread_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig

__all__ = ["thread_key"]


def thread_key(config: RunnableConfig | None) -> str:
    """The local conversation a call belongs to: the LangGraph ``thread_id`` ("" if none)."""
    configurable = cast(Mapping[str, Any], (config or {}).get("configurable") or {})
    value = configurable.get("thread_id")
    return str(value) if value is not None else ""
