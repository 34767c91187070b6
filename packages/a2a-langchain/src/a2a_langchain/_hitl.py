"""LangChain's human-in-the-loop middleware, asked and answered in plain words.

``create_agent(..., middleware=[HumanInTheLoopMiddleware(...)])`` pauses with
``interrupt()`` before a gated tool runs: a ``HITLRequest`` (the default,
every gated call of a model turn at once) or a ``ToolApprovalRequest``
(``interrupt_mode="per_call"``). The client is shown the pending calls as
text (the request itself stays beside it as a data part), and its reply is
mapped onto the middleware's decisions:

- ``approve`` (or yes, ok, accept...): run the call(s) as they are;
- ``reject`` (or no, deny...), optionally with a reason (``reject: not on
  prod``): do not run them; the model is told why;
- ``edit`` followed by a JSON object of arguments, or a data part with the
  arguments: run the call with those arguments (one pending call);
- a data part in the middleware's own shape (``{"decisions": [...]}`` or one
  decision ``{"type": ...}``) is passed on as it is;
- any other text answers for the tool when ``respond`` is allowed, else is a
  rejection with the text as its reason.

One decision covers every pending call of the request. A decision a call does
not allow is not sent on: the client is asked again, told what is allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from a2a_core.types import Message

__all__ = ["NotAllowedError", "hitl_resume", "hitl_text", "is_hitl"]

_APPROVE = frozenset({"approve", "approved", "yes", "y", "ok", "okay", "accept", "go", "go ahead"})
_REJECT = frozenset({"reject", "rejected", "no", "n", "deny", "denied", "decline", "stop"})
_REASON = re.compile(
    r"^(?P<word>[a-z ]+?)\s*(?:[:,\-\u2014]|\bbecause\b)\s*(?P<reason>.+)$", re.S | re.I
)


_DEFAULT_DESCRIPTION = "Tool execution requires approval"
"""How the middleware's own description starts (it only repeats the call)."""


class NotAllowedError(ValueError):
    """The reply maps to a decision a pending call does not allow (the text says which)."""


def is_hitl(value: Any) -> bool:
    """Whether an interrupt's value is a human-in-the-loop middleware request."""
    if not isinstance(value, Mapping):
        return False
    request = cast(Mapping[str, Any], value)
    return ("action_requests" in request and "review_configs" in request) or request.get(
        "type"
    ) == "tool_approval"


def _actions(value: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], list[str]]]:
    """Each pending call with the decisions it allows."""
    if value.get("type") == "tool_approval":
        return [(value, ["approve", "edit", "reject", "respond"])]
    configs = {
        str(c.get("action_name")): list(c.get("allowed_decisions") or [])
        for c in cast(Sequence[Mapping[str, Any]], value.get("review_configs") or [])
    }
    return [
        (a, configs.get(str(a.get("name")), []))
        for a in cast(Sequence[Mapping[str, Any]], value.get("action_requests") or [])
    ]


def _call(action: Mapping[str, Any]) -> str:
    args = cast(Mapping[str, Any], action.get("args") or {})
    shown = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in args.items()
    )
    return f"{action.get('name')}({shown})"


def hitl_text(value: Mapping[str, Any]) -> str:
    """The pending calls and how to answer, for a person to read."""
    actions = _actions(value)
    lines = ["The agent wants to run:"]
    allowed: list[str] = []
    for index, (action, decisions) in enumerate(actions, start=1):
        prefix = f"{index}. " if len(actions) > 1 else ""
        lines.append(f"{prefix}{_call(action)}")
        description = str(action.get("description") or "")
        if description and not description.startswith(_DEFAULT_DESCRIPTION):
            lines.append(f"   {description}")
        allowed.extend(d for d in decisions if d not in allowed)
    how = {
        "approve": "approve",
        "reject": "reject (optionally with a reason: reject: ...)",
        "edit": 'edit {"arg": value, ...} (new arguments)',
        "respond": "any other text to answer in the tool's place",
    }
    lines.append("Reply " + ", or ".join(how[d] for d in allowed if d in how) + ".")
    return "\n".join(lines)


def _reply(message: Message) -> tuple[str, Any]:
    """The reply's text and its one data value (None when it has no data part)."""
    data = [p.data for p in message.parts if p.data is not None]
    text = "\n".join(p.text for p in message.parts if p.text).strip()
    return text, (data[0] if len(data) == 1 else None)


def _decision(value: Mapping[str, Any], message: Message) -> Any:
    """The middleware decision (or exact response) the reply stands for."""
    text, data = _reply(message)
    if isinstance(data, Mapping):
        given = cast(Mapping[str, Any], data)
        if "decisions" in given or "type" in given:
            return dict(given)
        return {"type": "edit", "args": dict(given)}
    word = text.lower().rstrip(".!")
    if word in _APPROVE:
        return {"type": "approve"}
    if word in _REJECT:
        return {"type": "reject"}
    if word.startswith("edit"):
        try:
            args = json.loads(text[4:].strip())
        except ValueError:
            args = None
        if isinstance(args, dict):
            return {"type": "edit", "args": args}
        raise NotAllowedError('An edit needs the new arguments as JSON: edit {"arg": value}.')
    match = _REASON.match(text)
    if match and match.group("word").lower().strip() in _REJECT:
        return {"type": "reject", "message": match.group("reason").strip()}
    if match and match.group("word").lower().strip() in _APPROVE:
        return {"type": "approve"}
    allowed = {d for _, ds in _actions(value) for d in ds}
    if "respond" in allowed:
        return {"type": "respond", "message": text}
    return {"type": "reject", "message": text}


def _for_action(decision: Mapping[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    if decision.get("type") == "edit" and "args" in decision:
        return {
            "type": "edit",
            "edited_action": {"name": action.get("name"), "args": decision["args"]},
        }
    return dict(decision)


def hitl_resume(value: Mapping[str, Any], message: Message) -> Any:
    """What the middleware is resumed with for ``message``; ``NotAllowedError`` when a
    pending call does not allow that decision."""
    decision = _decision(value, message)
    if "decisions" in decision:
        return decision  # the middleware's own response shape
    actions = _actions(value)
    kind = str(decision.get("type"))
    if kind == "edit" and len(actions) > 1 and "edited_action" not in decision:
        raise NotAllowedError(
            "Edit one call at a time: approve or reject them all, or send "
            'the decisions as data: {"decisions": [...]}.'
        )
    refused = [str(a.get("name")) for a, allowed in actions if kind not in allowed]
    if refused:
        allowed = sorted({d for a, ds in actions if str(a.get("name")) in refused for d in ds})
        raise NotAllowedError(
            f"{kind} is not allowed for {', '.join(refused)}: reply {' or '.join(allowed)}."
        )
    decisions = [_for_action(decision, action) for action, _ in actions]
    if value.get("type") == "tool_approval":
        return decisions[0]
    return {"decisions": decisions}
