"""MCP tool definitions from agent cards: one tool per skill (or per agent), typed inputs.

A tool's name is made from the agent's and the skill's names, cut to what
every MCP host accepts (``[A-Za-z0-9_-]``, at most 64 characters) and made
unique among the bridge's tools. Its input schema has ``text``, the data
fields the skill names (the keys of a skill example written as a JSON
object), a free ``data`` object when the skill takes JSON, optional
``files``, and ``task_id`` to answer a task that asked for input.
Descriptions come from the card, cleaned and labelled as remote text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from a2a_core import AgentCard
from a2a_core.client import RemoteSkill, describe_card, remote_skills

__all__ = [
    "MAX_NAME",
    "ToolDef",
    "input_schema",
    "skill_fields",
    "tool_name",
    "tools_for_card",
    "unique_names",
]

MAX_NAME = 64
"""The longest tool name every host takes (some allow 128: 64 fits them all)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_JSON_MODES = ("application/json", "application/*", "*/*")
_FIELD_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One MCP tool and what it calls: an agent (by its index), and a skill or the whole agent."""

    name: str
    title: str
    description: str
    schema: dict[str, Any]
    agent: int
    skill_id: str | None
    data_fields: tuple[str, ...] = ()


def tool_name(*words: str) -> str:
    """A valid tool name from ``words`` (joined with ``_``, unsafe characters dropped)."""
    cleaned = [_UNSAFE.sub("_", w).strip("_") for w in words]
    name = "_".join(w for w in cleaned if w) or "agent"
    return name[:MAX_NAME].rstrip("_-") or "agent"


def unique_names(names: Iterable[str]) -> list[str]:
    """``names`` with repeats suffixed ``_2``, ``_3``... (still at most ``MAX_NAME`` long)."""
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate.lower() in seen:
            n += 1
            suffix = f"_{n}"
            candidate = name[: MAX_NAME - len(suffix)] + suffix
        seen.add(candidate.lower())
        out.append(candidate)
    return out


def skill_fields(skill: RemoteSkill) -> dict[str, dict[str, Any]]:
    """The data fields a skill names: the keys of its examples written as JSON objects."""
    fields: dict[str, dict[str, Any]] = {}
    for example in skill.examples:
        try:
            value: object = json.loads(example)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        for key, item in cast(dict[str, object], value).items():
            if key in fields or tool_name(key) != key or key in _RESERVED:
                continue
            kind = next((t for cls, t in _FIELD_TYPES if type(item) is cls), None)
            fields[key] = {"type": kind} if kind else {}
            fields[key]["description"] = f"the {key!r} field of the skill's JSON input"
    return fields


_RESERVED = frozenset({"text", "data", "files", "task_id"})

_FILES = {
    "type": "array",
    "description": (
        "Files to send with the message: each with base64 `data` (and a `name` and "
        "`mimeType`), or a `uri` the agent can fetch."
    ),
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "the file name"},
            "mimeType": {"type": "string", "description": "its media type"},
            "data": {"type": "string", "description": "its content, base64"},
            "uri": {"type": "string", "description": "where the agent can fetch it"},
        },
    },
}

_TASK_ID = {
    "type": "string",
    "description": (
        "Answer a task that asked for input: the task_id an earlier call returned "
        "(give the answer as text)."
    ),
}


def input_schema(
    fields: Mapping[str, Mapping[str, Any]], *, takes_json: bool, what: str
) -> dict[str, Any]:
    """The JSON schema of a tool's arguments."""
    properties: dict[str, Any] = {
        "text": {"type": "string", "description": f"The message to {what}."}
    }
    properties.update({k: dict(v) for k, v in fields.items()})
    if takes_json or not fields:
        properties["data"] = {
            "type": "object",
            "description": "Structured input, sent as a JSON data part.",
            "additionalProperties": True,
        }
    properties["files"] = _FILES
    properties["task_id"] = _TASK_ID
    return {
        "type": "object",
        "properties": properties,
        "required": [] if fields else ["text"],
    }


def _takes_json(skill: RemoteSkill, card: AgentCard) -> bool:
    modes = skill.input_modes or tuple(card.default_input_modes)
    return any(m in _JSON_MODES for m in modes)


def tools_for_card(
    index: int, card: AgentCard, url: str, *, per_agent: bool = False, prefix: str | None = None
) -> list[ToolDef]:
    """The tools of one agent (names not yet unique across agents)."""
    skills = remote_skills(card, url)
    agent = prefix or card.name
    if per_agent or not skills:
        return [
            ToolDef(
                name=tool_name(agent),
                title=card.name,
                description=describe_card(card, url, lead="Ask"),
                schema=input_schema({}, takes_json=True, what=f"send to {card.name!r}"),
                agent=index,
                skill_id=None,
            )
        ]
    tools: list[ToolDef] = []
    for skill in skills:
        fields = skill_fields(skill)
        tools.append(
            ToolDef(
                name=tool_name(agent, skill.id or skill.name),
                title=f"{skill.agent_name}: {skill.name}",
                description=skill.labelled_description(),
                schema=input_schema(
                    fields, takes_json=_takes_json(skill, card), what=f"send to {skill.name!r}"
                ),
                agent=index,
                skill_id=skill.id,
                data_fields=tuple(fields),
            )
        )
    return tools
