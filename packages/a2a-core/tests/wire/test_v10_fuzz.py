"""Property tests: the 1.0 codec fails only with our error types, on anything.

Two kinds of hostile input: arbitrary JSON values built from the model's own
field names and plausible scalars (so validation gets deep), and valid
documents with a few random subtrees replaced, deleted or added.
Whatever decodes must also re-encode and decode to the same value.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import strategies as s
from a2a_core import types as t
from a2a_core.errors import (
    A2AError,
    InvalidAgentResponseError,
    InvalidParamsError,
    PayloadTooLargeError,
)
from a2a_core.wire import REQUEST_TYPES, Operation, V10Codec, dumps, loads
from hypothesis import event, given, settings
from hypothesis import strategies as st

CODEC = V10Codec()
OPS = list(Operation)


def _field_names() -> list[str]:
    names: set[str] = set()
    for name in t.__all__:
        obj = getattr(t, name)
        if isinstance(obj, type) and issubclass(obj, t.A2AModel) and obj is not t.A2AModel:
            for field_name, field in obj.model_fields.items():
                names.update((field_name, field.alias or field_name))
    return sorted(names)


FIELD_NAMES = _field_names()

# Plausible scalars: enum names and numbers, base64, timestamps (at the edges of the
# datetime range too), ids.
PLAUSIBLE = st.one_of(
    st.sampled_from([m.value for m in (*t.TaskState, *t.Role)]),
    st.sampled_from(
        [
            "AAE=",
            "AA",
            "-_8",
            "2024-01-02T03:04:05.678Z",
            "2024-01-02T03:04:05+01:00",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "0999-01-01T00:00:00Z",
            "1.0",
            "JSONRPC",
            "",
            "working",
        ]
    ),
    st.integers(-3, 12),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
)
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=6))
JSON = st.recursive(
    PLAUSIBLE,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=6)
    ),
    max_leaves=24,
)


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON document."""
    found: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                found.append((node, key))
                stack.append(child)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                found.append((node, i))
                stack.append(child)
    return found


@st.composite
def mutated(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> Any:
    """A valid document with one to three random edits."""
    doc = copy.deepcopy(draw(documents))
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(doc)
        if not slots:
            return draw(JSON)
        container, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            container[key] = draw(JSON)
        elif action == "delete":
            del container[key]
        elif isinstance(container, dict):
            container[draw(KEYS)] = draw(JSON)
        else:
            container.insert(key, draw(JSON))
    return doc


def _request_docs(op: Operation) -> st.SearchStrategy[Any]:
    flavor = s.Flavor(big_bytes=False)
    return s.requests(op, flavor).map(lambda r: loads(dumps(CODEC.encode_request(op, r))))


def _result_docs(op: Operation) -> st.SearchStrategy[Any]:
    flavor = s.Flavor(big_bytes=False)
    return s.results(op, flavor).map(lambda r: loads(dumps(CODEC.encode_result(op, r))))


def _check_request(op: Operation, value: Any) -> None:
    try:
        decoded = CODEC.decode_request(op, value)
    except (InvalidParamsError, PayloadTooLargeError) as exc:
        event(f"rejected: {type(exc).__name__}")
        return
    except A2AError as exc:  # an A2AError, but not one a bad request should give
        pytest.fail(f"unexpected error class {type(exc).__name__}: {exc}")
    event("decoded")
    assert isinstance(decoded, REQUEST_TYPES[op])
    # What decodes re-encodes to a fixpoint (empty Structs fold into unset on the way).
    wire = loads(dumps(CODEC.encode_request(op, decoded)))
    again = CODEC.decode_request(op, wire)
    assert loads(dumps(CODEC.encode_request(op, again))) == wire


def _check_result(op: Operation, value: Any) -> None:
    try:
        decoded = CODEC.decode_result(op, value)
    except InvalidAgentResponseError:
        event("rejected")
        return
    event("decoded")
    wire = loads(dumps(CODEC.encode_result(op, decoded)))
    again = CODEC.decode_result(op, wire)
    assert loads(dumps(CODEC.encode_result(op, again))) == wire


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=60)
@given(value=JSON)
def test_decode_request_arbitrary_json(op: Operation, value: Any) -> None:
    _check_request(op, value)


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=60)
@given(data=st.data())
def test_decode_request_mutated(op: Operation, data: st.DataObject) -> None:
    _check_request(op, data.draw(mutated(_request_docs(op))))


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=40)
@given(value=JSON)
def test_decode_result_arbitrary_json(op: Operation, value: Any) -> None:
    _check_result(op, value)


@pytest.mark.parametrize(
    "op", [op for op in OPS if op is not Operation.DELETE_PUSH_CONFIG], ids=str
)
@settings(max_examples=40)
@given(data=st.data())
def test_decode_result_mutated(op: Operation, data: st.DataObject) -> None:
    _check_result(op, data.draw(mutated(_result_docs(op))))


@settings(max_examples=150)
@given(value=st.one_of(JSON, mutated(_result_docs(Operation.SUBSCRIBE_TO_TASK))))
def test_decode_event_only_invalid_agent_response(value: Any) -> None:
    try:
        event = CODEC.decode_event(value)
    except InvalidAgentResponseError:
        return
    assert isinstance(
        event, t.Task | t.Message | t.TaskStatusUpdateEvent | t.TaskArtifactUpdateEvent
    )
    wire = loads(dumps(CODEC.encode_event(event)))
    assert loads(dumps(CODEC.encode_event(CODEC.decode_event(wire)))) == wire


@settings(max_examples=150)
@given(
    value=st.one_of(
        JSON, mutated(s.agent_cards().map(lambda c: loads(dumps(CODEC.encode_card(c)))))
    )
)
def test_decode_card_only_invalid_agent_response(value: Any) -> None:
    try:
        card = CODEC.decode_card(value)
    except InvalidAgentResponseError:
        return
    wire = loads(dumps(CODEC.encode_card(card)))
    assert loads(dumps(CODEC.encode_card(CODEC.decode_card(wire)))) == wire


@settings(max_examples=100)
@given(value=JSON)
def test_decode_error_never_raises(value: Any) -> None:
    """A peer's error object, however malformed, becomes one of our errors."""
    error = CODEC.decode_error(value)
    assert isinstance(error, A2AError)
    assert isinstance(error.code, int)
    assert isinstance(error.message, str)
