"""Telling clients about an agent's named inputs, in the card and when one is missing.

Framework agents often take several named inputs (a prompt's ``{language}``
and ``{question}``, a crew's ``{topic}``), while an A2A message is text and
parts. The adapters' convention: a data part holding a JSON object gives the
inputs by name, and the message text fills one of them. These helpers word
that the same way for every adapter: on the card's skill, and in the
failure a task ends with when an input is missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = ["describe_inputs", "inputs_example", "missing_inputs_text"]


def inputs_example(names: Sequence[str]) -> str:
    """A JSON object with the given fields, as a client would send it in a data part."""
    return json.dumps(dict.fromkeys(names, "..."))


def describe_inputs(names: Sequence[str], text_field: str | None = None) -> str:
    """A sentence for a skill's description: which inputs, and how to send them.

    ``text_field``: the input the message text fills (None: any one left unfilled).
    """
    listed = ", ".join(names)
    others = [n for n in names if n != text_field]
    if text_field is None or text_field not in names:
        return (
            f"Inputs: {listed} (send the text of a message for one of them, or a data "
            "part with a JSON object naming them)"
        )
    if not others:
        return f"Input: {text_field} (the text of the message)"
    return (
        f"Inputs: {listed} (the message text fills {text_field}; send "
        f"{', '.join(others)} as a data part holding a JSON object, "
        f"e.g. {inputs_example(others)})"
    )


def missing_inputs_text(agent: str, missing: Sequence[str]) -> str:
    """The message a task fails with when inputs are missing: which, and how to send them.

    ``agent`` names the kind of agent ("crew", "agent", "chain").
    """
    return (
        f"This {agent} needs the inputs {', '.join(missing)}: send them as a data part "
        f"holding a JSON object, e.g. {inputs_example(missing)}"
    )
