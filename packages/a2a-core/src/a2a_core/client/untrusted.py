"""Text from a remote agent card is untrusted input: bound it, clean it, label it.

A remote card's names, descriptions, tags and examples end up in tool
descriptions and LLM prompts. A hostile card can hide instructions with
control characters, bidirectional overrides, zero-width or tag characters
(invisible "ASCII smuggling"), or simply be huge. Everything here is
presentation-only: nothing from a card is ever executed or imported.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..types import AgentCard, AgentSkill

__all__ = ["UNTRUSTED_LABEL", "TextLimits", "sanitize_card", "sanitize_text"]

UNTRUSTED_LABEL = "untrusted text from a remote agent card"

_KEEP = frozenset("\n\t")
_SPACES = re.compile(r"[ \t]{2,}")
_BLANK_LINES = re.compile(r"\n{3,}")
_ELLIPSIS = "\u2026"


@dataclass(frozen=True, slots=True)
class TextLimits:
    """How long each kind of card text may be once cleaned (in characters)."""

    name: int = 128
    description: int = 2000
    tag: int = 64
    example: int = 500
    max_tags: int = 32
    max_examples: int = 16
    max_skills: int = 128


DEFAULT_TEXT_LIMITS = TextLimits()


def _allowed(ch: str) -> bool:
    if ch in _KEEP:
        return True
    # Cc: control characters; Cf: format characters, which include the bidi
    # embeddings/overrides/isolates, zero-width joiners and the invisible tag
    # block (U+E0000..); Cs: lone surrogates; Co/Cn: private use, unassigned.
    return unicodedata.category(ch)[0] != "C" and ch not in "\u2028\u2029"


def sanitize_text(value: str | None, max_length: int, *, single_line: bool = False) -> str:
    """``value`` without control, format or invisible characters, at most ``max_length`` long.

    Whitespace runs are collapsed; ``single_line`` also turns newlines into
    spaces (names, tags). Text that had to be cut ends with an ellipsis.
    """
    if not value:
        return ""
    # Look at a bounded prefix only: the rest would be cut anyway.
    window = max_length * 4 + 64
    cut = len(value) > window
    text = value[:window]
    text = unicodedata.normalize("NFC", text)
    if not text.isascii() or not text.isprintable():
        text = "".join(ch for ch in text if _allowed(ch))
    if single_line:
        text = text.replace("\n", " ").replace("\t", " ")
    else:
        text = text.replace("\t", " ")
        text = _BLANK_LINES.sub("\n\n", text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > max_length or cut:
        text = text[: max(0, max_length - 1)].rstrip() + _ELLIPSIS
    return text


def _skill(skill: AgentSkill, limits: TextLimits) -> AgentSkill:
    return skill.model_copy(
        update={
            "id": sanitize_text(skill.id, limits.name, single_line=True),
            "name": sanitize_text(skill.name, limits.name, single_line=True),
            "description": sanitize_text(skill.description, limits.description),
            "tags": [
                sanitize_text(tag, limits.tag, single_line=True)
                for tag in skill.tags[: limits.max_tags]
            ],
            "examples": [
                sanitize_text(e, limits.example) for e in skill.examples[: limits.max_examples]
            ],
        }
    )


def sanitize_card(card: AgentCard, limits: TextLimits = DEFAULT_TEXT_LIMITS) -> AgentCard:
    """A copy of ``card`` whose human-readable text is cleaned and bounded.

    URLs, interfaces and security schemes are left as they are (they are
    data for the client, not text for a reader or a model).
    """
    update: dict[str, object] = {
        "name": sanitize_text(card.name, limits.name, single_line=True),
        "description": sanitize_text(card.description, limits.description),
        "skills": [_skill(s, limits) for s in card.skills[: limits.max_skills]],
    }
    if card.provider is not None:
        update["provider"] = card.provider.model_copy(
            update={
                "organization": sanitize_text(
                    card.provider.organization, limits.name, single_line=True
                )
            }
        )
    return card.model_copy(update=update)
