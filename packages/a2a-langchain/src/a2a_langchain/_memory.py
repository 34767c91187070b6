"""Which conversation a served runnable sees, and whose memory keeps it.

The contextId is the conversation. A runnable that takes messages (a chat
model, a chain over a ``MessagesPlaceholder``, a ``MessagesState`` graph or
agent) is given, by default, the context's earlier turns (bounded) before the
task's own messages: a follow-up in the same context is understood. A runnable
that keeps its conversation itself is given only the new message, so nothing
is remembered twice:

- a LangGraph graph with a checkpointer: the contextId is its ``thread_id``;
- a ``RunnableWithMessageHistory``: the history factory's keys are filled from
  the request (``history_keys``), so each context has its own history.

Runnables that take text or fields without a place for earlier turns get
nothing more than the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from a2a_core.server import RequestContext
from langchain_core.runnables import Runnable

from ._card import has_checkpointer
from ._input import unwrap

__all__ = ["Conversation", "history_keys", "message_history", "own_memory"]

Conversation = Literal["auto", "context", "task", "thread"]

_USER_KEYS = frozenset({"user_id", "user", "principal", "principal_id"})


def message_history(runnable: Runnable[Any, Any]) -> Any:
    """The ``RunnableWithMessageHistory`` serving as ``runnable`` (under bindings), or None."""
    from langchain_core.runnables.history import RunnableWithMessageHistory

    inner = unwrap(runnable)
    return inner if isinstance(inner, RunnableWithMessageHistory) else None


def own_memory(runnable: Runnable[Any, Any], graph: bool) -> bool:
    """Whether ``runnable`` keeps its conversation itself (a checkpointer, a message history)."""
    return (graph and has_checkpointer(runnable)) or message_history(runnable) is not None


def history_keys(
    runnable: Runnable[Any, Any], context: RequestContext, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``configurable`` values a message history's factory needs for this request.

    Every key of ``history_factory_config`` the user's ``runnable_config`` does not
    set is the contextId (``session_id``, ``conversation_id``, ``thread_id``...),
    except a user key (``user_id``, ``user``, ``principal``...), which is the
    authenticated caller's id (the contextId for an anonymous caller).
    """
    history = message_history(runnable)
    if history is None:
        return {}
    values: dict[str, Any] = {}
    for spec in cast(list[Any], history.history_factory_config):
        key = str(spec.id)
        if key in given:
            continue
        principal = context.principal
        if key in _USER_KEYS and principal is not None:
            values[key] = principal.id
        else:
            values[key] = context.context_id
    return values
