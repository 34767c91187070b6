"""From an A2A message to what a crew or agent is kicked off with.

A crew takes named inputs that fill the ``{placeholders}`` of its tasks and
agents. A data part holding a JSON object gives them by name; the text of
the message fills one more: ``inputs_key`` when set, else the only
placeholder the data left unfilled, else ``input``. A lone agent is
kicked off with the task's conversation as chat messages instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from a2a_core.types import Message, Role

__all__ = ["KickoffInputs", "chat_messages", "crew_inputs", "message_parts", "placeholders"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)}")
DEFAULT_KEY = "input"
FILES_KEY = "files"


def _texts_of(target: Any) -> Iterable[str]:
    for task in getattr(target, "tasks", None) or []:
        yield str(getattr(task, "description", "") or "")
        yield str(getattr(task, "expected_output", "") or "")
    agents = getattr(target, "agents", None)
    for agent in agents if agents is not None else [target]:
        for attr in ("role", "goal", "backstory"):
            yield str(getattr(agent, attr, "") or "")


def placeholders(target: Any) -> list[str]:
    """The ``{names}`` a crew's (or an agent's) texts expect, in order of appearance."""
    found: dict[str, None] = {}
    for text in _texts_of(target):
        for match in _PLACEHOLDER.finditer(text):
            found.setdefault(match.group(1), None)
    return list(found)


@dataclass(frozen=True, slots=True)
class KickoffInputs:
    """The inputs for ``crew.kickoff`` and the placeholders nothing filled."""

    inputs: dict[str, Any]
    missing: tuple[str, ...]


def message_parts(message: Message) -> tuple[str, dict[str, Any]]:
    """The message's text (text parts, and data that is not an object, as JSON) and the
    keys of its object data parts (shared by crew and flow inputs)."""
    texts: list[str] = []
    data: dict[str, Any] = {}
    for part in message.parts:
        if part.text is not None:
            texts.append(part.text)
        elif isinstance(part.data, dict):
            for key, value in cast(dict[Any, Any], part.data).items():
                data[str(key)] = value
        elif part.data is not None:
            texts.append(json.dumps(part.data, ensure_ascii=False))
    return "\n".join(t for t in texts if t), data


def crew_inputs(
    message: Message,
    expected: Sequence[str],
    inputs_key: str | None = None,
    files_text: str | None = None,
) -> KickoffInputs:
    """The kickoff inputs a message gives (see the module docstring for the rules).

    ``files_text`` (the list of received files) fills a ``{files}`` placeholder,
    else follows the message text.
    """
    text, inputs = message_parts(message)
    if files_text:
        if FILES_KEY in expected and FILES_KEY not in inputs:
            inputs[FILES_KEY] = files_text
        else:
            text = f"{text}\n\n{files_text}" if text else files_text
    unfilled = [name for name in expected if name not in inputs]
    if text:
        key = inputs_key or (unfilled[0] if len(unfilled) == 1 else DEFAULT_KEY)
        inputs.setdefault(key, text)
    missing = tuple(name for name in expected if name not in inputs)
    return KickoffInputs(inputs, missing)


def chat_messages(
    history: Sequence[Message], current: Message, files_text: str | None = None
) -> list[dict[str, str]]:
    """A task's conversation as ``Agent.kickoff`` messages (the current message last,
    followed by ``files_text``, the list of the files it brought)."""
    turns = [m for m in history if m.message_id != current.message_id]
    out: list[dict[str, str]] = []
    for message in [*turns, current]:
        text, data = message_parts(message)
        if data:
            text = "\n".join(t for t in (text, json.dumps(data, ensure_ascii=False)) if t)
        if files_text and message is current:
            text = f"{text}\n\n{files_text}" if text else files_text
        if text:
            role = "user" if message.role is Role.USER else "assistant"
            out.append({"role": role, "content": text})
    return out
