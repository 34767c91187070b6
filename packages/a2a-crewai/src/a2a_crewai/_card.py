"""What the agent card says by default about a served crew or agent.

A crew is named after ``crew.name`` (when it is not CrewAI's default
"crew"), described by its agents and tasks, and offers one skill: running
the whole crew, with the inputs it expects listed. A lone agent is named
after its role and described by its goal. Every field can be overridden
(``CrewAgent(name=..., description=..., skills=...)``).
"""

from __future__ import annotations

import re
from typing import Any

from a2a_core.server.named_inputs import describe_inputs
from a2a_core.types import AgentSkill

from ._events import short

__all__ = ["INPUT_MODES", "OUTPUT_MODES", "default_description", "default_name", "default_skill"]

INPUT_MODES = ("text/plain", "application/json")
OUTPUT_MODES = ("text/plain", "application/json")


_PLACEHOLDER = re.compile(
    r"(\b(?:the|a|an|your|this|that|each|any|its|their|our)\s+)?\{([A-Za-z_][A-Za-z0-9_\-]*)}",
    re.IGNORECASE,
)


def readable(text: str) -> str:
    """``text`` with its ``{placeholders}`` in words, as a reader of the card expects them.

    ``Research {topic}`` reads "Research the topic", ``{topic} analyst`` reads
    "Topic analyst"; an article already there is kept (``the {topic}``).
    """

    def words(match: re.Match[str]) -> str:
        article, name = match.group(1), match.group(2).replace("_", " ").replace("-", " ")
        if article:
            return article + name
        if match.start() == 0:
            return name[:1].upper() + name[1:]
        return "the " + name

    return _PLACEHOLDER.sub(words, text)


def _sentence(text: str) -> str:
    """``text`` without its closing period (a period follows, or a separator)."""
    return text.rstrip().rstrip(".").rstrip()


def _is_crew(target: Any) -> bool:
    return hasattr(target, "tasks") and hasattr(target, "agents")


def slug(text: str, fallback: str = "crew") -> str:
    """Lowercase words joined by dashes (skill ids, tags)."""
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return out[:64].rstrip("-") or fallback


def default_name(target: Any) -> str:
    if _is_crew(target):
        name = str(getattr(target, "name", "") or "")
        return readable(name) if name and name != "crew" else "CrewAI crew"
    return short(readable(getattr(target, "role", "") or "CrewAI agent"), 80)


def _roles(target: Any) -> list[str]:
    agents = getattr(target, "agents", None) or []
    return [short(readable(a.role), 60) for a in agents if getattr(a, "role", "")]


def default_description(target: Any) -> str:
    if not _is_crew(target):
        goal = short(readable(getattr(target, "goal", "") or ""), 300)
        return goal or "A CrewAI agent"
    roles = _roles(target)
    tasks = [
        _sentence(short(readable(getattr(t, "name", None) or getattr(t, "description", "")), 100))
        for t in target.tasks
    ]
    text = "A CrewAI crew"
    if roles:
        text += " of " + ", ".join(roles)
    if any(tasks):
        text += ". Tasks: " + "; ".join(t for t in tasks if t)
    return short(text, 500)


def default_skill(
    target: Any, name: str, description: str, inputs: list[str], text_input: str | None = None
) -> AgentSkill:
    """One skill describing the whole crew (or agent), with the inputs it expects.

    ``text_input``: the input the message text fills (None: whichever is left unfilled).
    """
    text = description
    if inputs:
        if text_input is None and len(inputs) == 1:
            text_input = inputs[0]
        text = f"{_sentence(text)}. {describe_inputs(inputs, text_input)}"
    tags = ["crewai", *(slug(r, "agent") for r in _roles(target))]
    if not _is_crew(target):
        tools = getattr(target, "tools", None) or []
        tags += [slug(str(getattr(t, "name", "")), "tool") for t in tools]
    return AgentSkill(
        id=slug(name),
        name=name,
        description=text,
        tags=list(dict.fromkeys(tags))[:16],
        input_modes=list(INPUT_MODES),
        output_modes=list(OUTPUT_MODES),
    )
