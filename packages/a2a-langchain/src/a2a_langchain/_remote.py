"""What LangChain adds to a remote agent session: the conversation and caller of a call.

The remote-agent plumbing (card text, per-conversation remote state,
answers, cancel, the sync bridge, token passthrough) is
``a2a_core.client.RemoteAgentSession``; LangChain's conversations are
LangGraph threads (``thread_id``), and the caller's credential rides in the
run's config (``CREDENTIAL_KEY``), or is the one of the A2A request a served
LangChain agent answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from a2a_core.identity import Credential
from langchain_core.runnables import RunnableConfig

__all__ = ["CREDENTIAL_KEY", "caller_credential", "thread_key"]

CREDENTIAL_KEY = "a2a_credential"
"""The ``configurable`` key of the caller's ``Credential``, forwarded by remote-agent tools
and runnables built with ``passthrough=True`` (ignored by the others)."""

_CONTEXT_KEY = "a2a_context"  # a2a_langchain.agent.CONTEXT_KEY: the served A2A request


def thread_key(config: RunnableConfig | None) -> str:
    """The local conversation a call belongs to: the LangGraph ``thread_id`` ("" if none)."""
    configurable = cast(Mapping[str, Any], (config or {}).get("configurable") or {})
    value = configurable.get("thread_id")
    return str(value) if value is not None else ""


def caller_credential(config: RunnableConfig | None) -> Credential | None:
    """The credential a call acts with: ``configurable["a2a_credential"]``, else the one
    the served A2A request was authenticated with (None: neither).

    The config value must be a ``Credential``: LangChain copies string
    ``configurable`` values into tracing metadata and LangGraph into checkpoint
    metadata, where a token must never go.
    """
    configurable = cast(Mapping[str, Any], (config or {}).get("configurable") or {})
    value = configurable.get(CREDENTIAL_KEY)
    if value is not None:
        if not isinstance(value, Credential):
            raise TypeError(
                f'configurable["{CREDENTIAL_KEY}"] must be an a2a_core Credential '
                "(Credential.bearer(token)), not a plain string: LangChain traces and "
                "LangGraph checkpoints copy string config values"
            )
        return value
    served = configurable.get(_CONTEXT_KEY)
    found = getattr(served, "credential", None)
    return found if isinstance(found, Credential) else None
