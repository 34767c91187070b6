"""How an A2A message becomes a Runnable's input, chosen once from its input schema.

- ``text``: the message as one string (data parts as JSON, text files inlined);
- ``messages``: the conversation as LangChain messages, either as a list (chat
  models, chains that start with one) or under a ``messages`` key (LangGraph
  ``MessagesState`` graphs, agents); other keys come from a data part;
- ``dict``: a data part's object, with the text under the one text field the
  schema has (a prompt template's variable, or ``input_key``) and earlier turns
  in a ``MessagesPlaceholder`` field; a required field still missing ends the
  task with a message naming it (``InputPlan.missing``);
- ``any`` (untyped input, e.g. a ``RunnableLambda`` of an untyped function):
  a data-only message gives its data, anything else its text.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from a2a_core.types import Message, Part
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableSequence

from ._convert import parts_text, to_lc_message, to_lc_messages

__all__ = ["InputMode", "InputPlan", "plan_input", "unwrap"]

InputMode = Literal["auto", "text", "messages", "dict"]

_TEXT_KEYS = ("input", "question", "query", "text", "message", "prompt", "request", "topic")


def unwrap(runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The runnable under bindings (``with_config``, ``bind``, ``with_retry``...)."""
    seen = 0
    current = runnable
    while isinstance(current, RunnableBinding) and seen < 32:
        current = current.bound
        seen += 1
    return current


def _first_step(runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
    current = unwrap(runnable)
    for _ in range(32):
        if isinstance(current, RunnableSequence):
            current = unwrap(current.first)
        else:
            break
    return current


@dataclass(frozen=True, slots=True)
class InputPlan:
    """Where the parts of a message go in the runnable's input."""

    mode: Literal["text", "messages", "dict", "any"]
    messages_key: str | None = None
    """messages mode: the state key of the conversation (None: the input is the list)."""
    text_key: str | None = None
    """dict mode: the field that receives the message text."""
    history_key: str | None = None
    """dict mode: a field of earlier turns (a prompt's ``MessagesPlaceholder``)."""
    inputs: tuple[str, ...] = ()
    """dict mode: the fields the runnable requires (a prompt's variables), in order."""

    @property
    def takes_conversation(self) -> bool:
        """Whether the input has a place for earlier turns (messages, a history field)."""
        return self.mode == "messages" or self.history_key is not None

    def missing(self, value: Any) -> list[str]:
        """The required fields a built input lacks (a client must send them as data)."""
        if self.mode != "dict" or not isinstance(value, Mapping):
            return []
        given = cast(Mapping[str, Any], value)
        return [name for name in self.inputs if name not in given]

    def build(self, message: Message, history: Sequence[Message], *, threaded: bool) -> Any:
        """The input for ``message``; ``history`` is the task's history (``message`` last).

        ``threaded``: the runnable keeps the conversation itself (a checkpointer),
        so only the new message is given.
        """
        data = _merged_data(message.parts)
        if self.mode == "text":
            return parts_text(message.parts)
        if self.mode == "any":
            only_data = all(p.data is not None for p in message.parts)
            if only_data and len(message.parts) == 1:
                return message.parts[0].data
            return parts_text(message.parts)
        if self.mode == "messages":
            conversation = _conversation(message, history, threaded=threaded)
            if self.messages_key is None:
                return conversation
            state: dict[str, Any] = dict(data) if data else {}
            state[self.messages_key] = conversation
            return state
        out: dict[str, Any] = dict(data) if data else {}
        text = parts_text([p for p in message.parts if p.data is None])
        if self.text_key is not None and self.text_key not in out:
            if text or not out:
                out[self.text_key] = text
        elif self.text_key is None and text and not out:
            out["input"] = text
        if self.history_key is not None and self.history_key not in out:
            earlier = [] if threaded else _conversation(message, history, threaded=False)[:-1]
            out[self.history_key] = earlier
        return out


def _merged_data(parts: Sequence[Part]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        data: Any = part.data
        if isinstance(data, Mapping):
            merged.update(cast(Mapping[str, Any], data))
    return merged


def _conversation(
    message: Message, history: Sequence[Message], *, threaded: bool
) -> list[BaseMessage]:
    if threaded or not history:
        return [to_lc_message(message)]
    conversation = to_lc_messages(history)
    if not conversation or conversation[-1].id != message.message_id:
        conversation.append(to_lc_message(message))
    return conversation


def _schema(runnable: Runnable[Any, Any]) -> dict[str, Any]:
    graph_schema = _graph_schema(runnable)
    if graph_schema is not None:
        return graph_schema
    try:
        schema = runnable.get_input_jsonschema()
    except Exception:
        return {}
    properties = cast(Mapping[str, Any], schema.get("properties") or {})
    if list(properties) == ["root"] and "root" not in str(schema.get("title", "")).lower():
        # An untyped input wrapped as a pydantic root model (a dict literal over
        # ``RunnablePassthrough``): it takes any value, not a field named ``root``.
        return {"title": schema.get("title"), **cast(Mapping[str, Any], properties["root"])}
    return schema


def _graph_schema(runnable: Runnable[Any, Any]) -> dict[str, Any] | None:
    """A compiled ``StateGraph``'s input schema, read from its input type's annotations.

    Pydantic cannot build a schema from a ``typing.TypedDict`` before Python 3.12,
    and a graph's state is a partial update: only a separate ``input_schema``
    says which keys a run needs (its required keys); with the whole state as
    input, none is required (output keys are filled by the graph).
    """
    builder = getattr(unwrap(runnable), "builder", None)
    input_type = getattr(builder, "input_schema", None)
    if not isinstance(input_type, type):
        return None
    try:
        hints = typing.get_type_hints(input_type)
    except Exception:
        return None
    properties = {name: _hint_schema(hint) for name, hint in hints.items()}
    required: list[str] = []
    if input_type is not getattr(builder, "state_schema", None):
        keys = getattr(input_type, "__required_keys__", None)
        if keys is None:
            fields = cast(Mapping[str, Any], getattr(input_type, "model_fields", None) or {})
            keys = [n for n, f in fields.items() if f.is_required()]
        required = [n for n in hints if n in keys]
    return {"type": "object", "properties": properties, "required": required}


def _hint_schema(hint: Any) -> dict[str, Any]:
    """Just enough JSON schema for a state key: strings, and lists of messages."""
    if hint is str:
        return {"type": "string"}
    if typing.get_origin(hint) in (list, Sequence):
        return {"type": "array", "items": str(hint)}
    return {"type": "other"}


def _is_message_list(prop: Mapping[str, Any]) -> bool:
    """Whether a JSON-schema property is a list of LangChain messages."""
    if prop.get("type") != "array":
        return False
    return "Message" in str(prop.get("items", ""))


def _text_key(
    properties: Mapping[str, Any], required: Sequence[str], exclude: str | None
) -> str | None:
    names = [n for n in properties if n != exclude]
    textual = [
        n
        for n in names
        if n in required and cast(Mapping[str, Any], properties[n]).get("type") in ("string", None)
    ]
    if len(textual) == 1:
        return textual[0]
    for key in _TEXT_KEYS:
        if key in names:
            return key
    if len(names) == 1:
        return names[0]
    return None


def plan_input(
    runnable: Runnable[Any, Any], mode: InputMode = "auto", input_key: str | None = None
) -> InputPlan:
    """Choose the input mapping for ``runnable`` (``mode`` forces one)."""
    first = _first_step(runnable)
    schema = _schema(runnable)
    properties = cast(Mapping[str, Any], schema.get("properties") or {})
    required = cast(Sequence[str], schema.get("required") or ())
    history_key = next(
        (
            n
            for n, p in properties.items()
            if n != input_key and _is_message_list(cast(Mapping[str, Any], p))
        ),
        None,
    )
    if mode == "text":
        return InputPlan("text")
    if mode == "messages":
        key = input_key or ("messages" if "messages" in properties else None)
        return InputPlan("messages", messages_key=key)
    inputs = tuple(n for n in required if n != history_key and n in properties)
    if mode == "dict":
        key = input_key or _text_key(properties, required, history_key)
        return InputPlan("dict", text_key=key, history_key=history_key, inputs=inputs)
    # auto
    if isinstance(first, BaseLanguageModel):
        return InputPlan("messages")
    kind = schema.get("type")
    if kind == "string":
        return InputPlan("text")
    if kind == "array":
        return InputPlan("messages")
    if kind == "object" or properties:
        if input_key is None and "messages" in properties:
            return InputPlan("messages", messages_key="messages")
        if input_key is not None and _is_message_list(
            cast(Mapping[str, Any], properties.get(input_key, {}))
        ):
            return InputPlan("messages", messages_key=input_key)
        key = input_key or _text_key(properties, required, history_key)
        return InputPlan("dict", text_key=key, history_key=history_key, inputs=inputs)
    return InputPlan("any")
