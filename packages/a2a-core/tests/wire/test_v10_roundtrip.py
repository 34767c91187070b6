"""Every model survives the 1.0 codec: encode -> JSON bytes -> decode gives it back."""

from __future__ import annotations

from typing import Any

import pytest
import strategies as s
from a2a_core import types as t
from a2a_core.wire import Operation, V10Codec, dumps, loads
from hypothesis import given, settings
from hypothesis import strategies as st

CODEC = V10Codec()
OPS = list(Operation)


def _wire(value: Any) -> Any:
    """Through real bytes, as a peer would see it."""
    return loads(dumps(value))


def _find_nulls(value: Any, path: str = "$") -> list[str]:
    """JSON nulls outside free-form Struct/Value content (which may hold them)."""
    found: list[str] = []
    if value is None:
        return [path]
    if isinstance(value, dict):
        for key, child in value.items():
            if key in ("metadata", "data", "params", "header"):
                continue
            found += _find_nulls(child, f"{path}.{key}")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _find_nulls(child, f"{path}[{i}]")
    return found


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=40)
@given(data=st.data())
def test_request_roundtrip(op: Operation, data: st.DataObject) -> None:
    request = data.draw(s.requests(op))
    wire = _wire(CODEC.encode_request(op, request))
    assert CODEC.decode_request(op, wire) == request
    assert _find_nulls(wire) == []


@pytest.mark.parametrize("op", [op for op in OPS if op is not Operation.GET_EXTENDED_CARD], ids=str)
@settings(max_examples=40)
@given(data=st.data())
def test_result_roundtrip(op: Operation, data: st.DataObject) -> None:
    result = data.draw(s.results(op))
    wire = _wire(CODEC.encode_result(op, result))
    assert CODEC.decode_result(op, wire) == result
    assert _find_nulls(wire) == []


@settings(max_examples=60)
@given(s.events())
def test_event_roundtrip(event: t.StreamEvent) -> None:
    wire = _wire(CODEC.encode_event(event))
    assert len(wire) == 1  # a StreamResponse oneof: exactly one member
    decoded = CODEC.decode_event(wire)
    assert type(decoded) is type(event)
    assert decoded == event


@settings(max_examples=60)
@given(s.agent_cards())
def test_card_roundtrip(card: t.AgentCard) -> None:
    wire = _wire(CODEC.encode_card(card))
    assert CODEC.decode_card(wire) == card
    assert _find_nulls(wire) == []  # unset capabilities are omitted, not null
    assert CODEC.decode_result(Operation.GET_EXTENDED_CARD, _wire(card)) == card


@pytest.mark.parametrize(
    ("model", "strategy"),
    [
        (t.Part, s.parts()),
        (t.Message, s.messages()),
        (t.TaskStatus, s.task_statuses()),
        (t.Artifact, s.artifacts()),
        (t.Task, s.tasks()),
        (t.TaskStatusUpdateEvent, s.status_events()),
        (t.TaskArtifactUpdateEvent, s.artifact_events()),
        (t.TaskPushNotificationConfig, s.push_configs()),
        (t.SecurityScheme, s.security_schemes()),
        (t.AgentInterface, s.interfaces()),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
@settings(max_examples=30)
@given(data=st.data())
def test_model_roundtrip(model: type[t.A2AModel], strategy: Any, data: st.DataObject) -> None:
    value = data.draw(strategy)
    assert model.model_validate(_wire(value)) == value
    assert model.model_validate_json(dumps(value)) == value


@settings(max_examples=30)
@given(s.tasks())
def test_snake_case_input_decodes_equal(task: t.Task) -> None:
    """ProtoJSON parsers accept the proto (snake_case) names too."""
    snake = task.model_dump(mode="json", by_alias=False)
    decoded = CODEC.decode_result(Operation.GET_TASK, snake)
    assert decoded == task


@settings(max_examples=30)
@given(s.requests(Operation.LIST_TASKS))
def test_snake_case_request_decodes_equal(request: t.ListTasksRequest) -> None:
    snake = request.model_dump(mode="json", by_alias=False, exclude_none=True)
    assert CODEC.decode_request(Operation.LIST_TASKS, snake) == request
