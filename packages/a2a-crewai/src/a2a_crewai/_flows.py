"""CrewAI Flows as A2A agents: what a message kicks a flow off with, and what it answers.

A ``Flow`` (``@start`` / ``@listen`` methods over a state) is served like a
crew, on a fresh instance per request (a flow keeps its state on the
instance). The message fills the flow's state through ``kickoff(inputs=...)``:
a data part holding a JSON object gives fields by name, and the message text
fills one more: ``inputs_key`` when set, else the only text field of a
structured state, else ``input``. The state's ``id`` is the flow's own (it
loads persisted state), so a message cannot set it. The flow's final output
(its last method's return value) is the answer: text as text, a model or a
dict as data (with its JSON as text); a flow that returns nothing answers with
its final state.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from a2a_core.types import Message
from pydantic import BaseModel, ValidationError

from ._events import short
from ._inputs import DEFAULT_KEY, message_parts

__all__ = [
    "FlowOutput",
    "check_flow",
    "flow_description",
    "flow_inputs",
    "flow_name",
    "flow_text_input",
    "is_flow",
    "new_flow",
    "state_fields",
]

_STATE_ID = "id"


def is_flow(target: object) -> bool:
    """Whether ``target`` is a CrewAI ``Flow`` or a ``Flow`` subclass."""
    from crewai.flow.flow import Flow

    if isinstance(target, type):
        return issubclass(target, Flow)
    return isinstance(target, Flow)


def new_flow(template: Any) -> Any:
    """A fresh flow for one request: the class called again with the template's settings."""
    if isinstance(template, type):
        return template()
    cls = type(template)
    return cls(**{name: getattr(template, name) for name in template.model_fields_set})


def check_flow(target: Any) -> None:
    """Build one flow the way each request will, so a flow that cannot be served says so now."""
    try:
        new_flow(target)
    except Exception as exc:
        cls = target if isinstance(target, type) else type(target)
        raise TypeError(
            f"a served flow runs each task on a new {cls.__name__}, built by calling the class "
            f"with the served instance's field values, and that failed ({exc}); give the "
            "constructor's own arguments defaults"
        ) from exc


def _template(target: Any) -> Any:
    return new_flow(target) if isinstance(target, type) else target


def state_fields(target: Any) -> dict[str, Any] | None:
    """The fields of a flow's structured state and their types (None: an open dict state)."""
    state = _template(target).state
    if not isinstance(state, BaseModel):
        return None
    fields = type(state).model_fields
    return {name: info.annotation for name, info in fields.items() if name != _STATE_ID}


def flow_text_input(target: Any, inputs_key: str | None) -> str:
    """The state field the message text fills."""
    if inputs_key:
        return inputs_key
    fields = state_fields(target)
    if fields:
        texts = [name for name, kind in fields.items() if _is_text(kind)]
        if len(texts) == 1:
            return texts[0]
    return DEFAULT_KEY


def _is_text(kind: Any) -> bool:
    if kind is str:
        return True
    args = typing.get_args(kind)
    return str in args and all(a in (str, type(None)) for a in args)


def flow_name(target: Any) -> str:
    cls = target if isinstance(target, type) else type(target)
    name = None if isinstance(target, type) else getattr(target, "name", None)
    return short(name or cls.__name__, 80)


def flow_description(target: Any) -> str:
    cls = target if isinstance(target, type) else type(target)
    doc = (cls.__doc__ or "").strip()
    if doc and cls.__doc__ != _base_doc():
        return short(doc.split("\n\n", 1)[0], 300)
    definition = getattr(_template(target), "_definition", None)  # CrewAI 1.15's flow graph
    steps = list(getattr(definition, "methods", None) or [])
    text = "A CrewAI flow"
    return short(f"{text} of the steps {', '.join(steps)}" if steps else text, 300)


def _base_doc() -> str | None:
    from crewai.flow.flow import Flow

    return Flow.__doc__


def flow_inputs(
    message: Message, target: Any, inputs_key: str | None, files_text: str | None = None
) -> dict[str, Any] | str:
    """The ``kickoff`` inputs a message gives a flow, or why it cannot run (the client's
    mistake, said plainly)."""
    text, inputs = message_parts(message)
    if files_text:
        text = f"{text}\n\n{files_text}" if text else files_text
    if _STATE_ID in inputs:
        return (
            f'"{_STATE_ID}" is the flow\'s own state id and cannot be set by a message; '
            "leave it out of the data part"
        )
    if text:
        inputs.setdefault(flow_text_input(target, inputs_key), text)
    fields = state_fields(target)
    if fields is None:
        return inputs
    state = _template(target).state
    unknown = [name for name in inputs if name not in fields]
    if unknown and type(state).model_config.get("extra") != "allow":
        return (
            f"This flow's state has no field {', '.join(unknown)}; its fields are "
            f"{', '.join(fields)} (send them as a data part holding a JSON object)"
        )
    try:
        type(state).model_validate({**state.model_dump(exclude={_STATE_ID}), **inputs})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        return f"This flow's inputs are not valid: {problems}"
    return inputs


@dataclass(frozen=True, slots=True)
class FlowOutput:
    """A flow's final output, read the way a crew's is (``raw`` text, ``json_dict`` data)."""

    raw: str
    json_dict: dict[str, Any] | None = None

    @classmethod
    def of(cls, flow: Any, result: Any) -> FlowOutput:
        from crewai.flow import HumanFeedbackPending, HumanFeedbackResult  # CrewAI 1.x

        if isinstance(result, HumanFeedbackPending):
            raise RuntimeError(
                "the flow paused for feedback through its own provider (HumanFeedbackPending); "
                "served over A2A, leave the @human_feedback provider out so the client is asked"
            )
        if isinstance(result, HumanFeedbackResult):
            result = result.output
        if result is None:
            result = flow.state
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json")
        if isinstance(result, Mapping):
            data = {str(k): v for k, v in cast(Mapping[Any, Any], result).items()}
            return cls(json.dumps(data, ensure_ascii=False, default=str), data)
        return cls(str(result))
