"""What the agent card says by default about a served Runnable.

The name is the runnable's own name when someone gave it one (``.with_config
(run_name=...)``, ``graph.compile(name=...)``, a ``RunnableLambda``'s
function), else a generic "LangChain agent" / "LangGraph agent"; the
description comes from a docstring when there is one; one skill describes
the whole agent. Every field can be overridden.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from a2a_core.server.named_inputs import describe_inputs, inputs_example
from a2a_core.types import AgentSkill
from langchain_core.runnables import Runnable, RunnableBinding, RunnableLambda

from ._input import InputPlan, unwrap

__all__ = ["default_description", "default_name", "default_skill", "input_modes", "is_graph"]

_GENERIC_NAMES = frozenset({"LangGraph", "RunnableSequence", "RunnableLambda", "RunnableParallel"})


def is_graph(runnable: Runnable[Any, Any]) -> bool:
    """Whether ``runnable`` is a compiled LangGraph graph (without importing LangGraph)."""
    inner = unwrap(runnable)
    return any(cls.__module__.startswith("langgraph.") for cls in type(inner).__mro__[:4]) and (
        hasattr(inner, "aget_state")
    )


def has_checkpointer(runnable: Runnable[Any, Any]) -> bool:
    """Whether a graph keeps its conversations (a checkpointer is attached)."""
    checkpointer = getattr(unwrap(runnable), "checkpointer", None)
    return checkpointer not in (None, False, True)


def _run_name(runnable: Runnable[Any, Any]) -> str | None:
    current = runnable
    for _ in range(32):
        if isinstance(current, RunnableBinding):
            config = cast(Mapping[str, Any], current.config or {})
            name = config.get("run_name")
            if isinstance(name, str) and name:
                return name
            current = current.bound
        else:
            break
    # A compiled graph keeps ``with_config(run_name=...)`` in its own config, not a binding.
    own = getattr(current, "config", None)
    if isinstance(own, Mapping):
        name = cast(Mapping[str, Any], own).get("run_name")
        if isinstance(name, str) and name:
            return name
    # A ``RunnableLambda`` of a lambda has no ``name`` attribute at all.
    name = (
        current.get_name()
        if isinstance(current, RunnableLambda)
        else getattr(current, "name", None)
    )
    if name and name not in _GENERIC_NAMES and not name.startswith(("Runnable", "<")):
        return name
    return None


def default_name(runnable: Runnable[Any, Any]) -> str:
    found = _run_name(runnable)
    if found:
        return found
    return "LangGraph agent" if is_graph(runnable) else "LangChain agent"


def default_description(runnable: Runnable[Any, Any], name: str) -> str:
    inner = unwrap(runnable)
    func = getattr(inner, "func", None) or getattr(inner, "afunc", None)
    doc = inspect.getdoc(func) if func is not None else None
    if doc:
        first = doc.split("\n\n", 1)[0]
        return " ".join(first.split())
    kind = "LangGraph graph" if is_graph(runnable) else "LangChain runnable"
    return f"{name}: a {kind} served over A2A"


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "agent"


def default_skill(
    runnable: Runnable[Any, Any],
    name: str,
    description: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    plan: InputPlan | None = None,
) -> AgentSkill:
    """One skill for the whole runnable; with several named inputs it says how to send them."""
    tags = ["langchain", "langgraph"] if is_graph(runnable) else ["langchain"]
    examples: list[str] = []
    if plan is not None and len(plan.inputs) > 1:
        description = f"{description.rstrip('.')}. {describe_inputs(plan.inputs, plan.text_key)}"
        examples.append(inputs_example(plan.inputs))
    return AgentSkill(
        id=_slug(name),
        name=name,
        description=description,
        tags=tags,
        examples=examples,
        input_modes=list(inputs),
        output_modes=list(outputs),
    )


def input_modes(plan: InputPlan) -> list[str]:
    """The media types the input mapping makes use of (files are passed on too, see the docs).

    Whether a chat model reads images or PDFs depends on the model, so they are
    not claimed by default: pass ``input_modes`` to say so.
    """
    del plan
    return ["text/plain", "application/json"]


def output_modes(runnable: Runnable[Any, Any]) -> list[str]:
    try:
        schema = runnable.get_output_jsonschema()
    except Exception:
        schema = {}
    if schema.get("type") == "string":
        return ["text/plain"]
    return ["text/plain", "application/json"]
