"""The internal model itself: invariants, helpers, enums, names and timestamps."""

from __future__ import annotations

import os
import re
import warnings
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import strategies as s
from a2a_core import types as t
from a2a_core.wire import Operation
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

# enums ------------------------------------------------------------------------

SPEC_STATE_NUMBERS = {
    "TASK_STATE_UNSPECIFIED": 0,
    "TASK_STATE_SUBMITTED": 1,
    "TASK_STATE_WORKING": 2,
    "TASK_STATE_COMPLETED": 3,
    "TASK_STATE_FAILED": 4,
    "TASK_STATE_CANCELED": 5,
    "TASK_STATE_INPUT_REQUIRED": 6,
    "TASK_STATE_REJECTED": 7,
    "TASK_STATE_AUTH_REQUIRED": 8,
}


def test_task_states_match_the_spec() -> None:
    assert {state.value: state.number for state in t.TaskState} == SPEC_STATE_NUMBERS
    assert {s.value for s in t.TERMINAL_STATES} == {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
    }
    assert {s.value for s in t.INTERRUPTED_STATES} == {
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
    }
    for state in t.TaskState:
        assert state.is_terminal == (state in t.TERMINAL_STATES)
        assert state.is_interrupted == (state in t.INTERRUPTED_STATES)
        assert not (state.is_terminal and state.is_interrupted)


def test_roles_match_the_spec() -> None:
    assert {r.value: r.number for r in t.Role} == {
        "ROLE_UNSPECIFIED": 0,
        "ROLE_USER": 1,
        "ROLE_AGENT": 2,
    }


@pytest.mark.parametrize("state", list(t.TaskState))
def test_enum_accepts_name_and_number(state: t.TaskState) -> None:
    assert t.TaskState(state.value) is state
    assert t.TaskState(state.number) is state
    assert state == state.value  # a StrEnum compares equal to its wire name


@pytest.mark.parametrize("bad", [True, False, 9, -1, 2.0, "2", "working", "TASK_STATE_"])
def test_enum_rejects_other_values(bad: Any) -> None:
    with pytest.raises(ValidationError):
        t.TaskStatus.model_validate({"state": bad})


# parts and messages -----------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "kind"),
    [({"text": ""}, "text"), ({"raw": b""}, "raw"), ({"url": "u"}, "url"), ({"data": 0}, "data")],
)
def test_part_kind(fields: dict[str, Any], kind: str) -> None:
    assert t.Part(**fields).kind == kind


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"filename": "a.txt", "media_type": "text/plain"},
        {"text": "a", "raw": b"b"},
        {"url": "u", "data": {}},
        {"text": "a", "raw": b"", "url": "", "data": 1},
    ],
)
def test_part_needs_exactly_one_content(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        t.Part(**fields)


def test_message_helpers() -> None:
    first = t.Message.user("hello", context_id="c")
    second = t.Message.agent("hi")
    assert first.role is t.Role.USER
    assert second.role is t.Role.AGENT
    assert first.context_id == "c"
    assert first.message_id != second.message_id
    both = t.Message(
        message_id="m",
        role=t.Role.AGENT,
        parts=[t.Part(text="a"), t.Part(data={"x": 1}), t.Part(text="b")],
    )
    assert both.text == "ab"


def test_message_needs_parts() -> None:
    with pytest.raises(ValidationError):
        t.Message(message_id="m", role=t.Role.USER, parts=[])


def test_artifact_needs_parts() -> None:
    with pytest.raises(ValidationError):
        t.Artifact(artifact_id="a", parts=[])


def test_status_now_is_utc() -> None:
    status = t.TaskStatus.now(t.TaskState.WORKING)
    assert status.timestamp is not None
    assert status.timestamp.tzinfo is UTC
    assert abs(datetime.now(UTC) - status.timestamp) < timedelta(minutes=1)


# oneofs -----------------------------------------------------------------------


@settings(max_examples=40)
@given(s.events())
def test_stream_response_wraps_every_event(event: t.StreamEvent) -> None:
    wrapped = t.StreamResponse.wrap(event)
    assert wrapped.event is event
    members = [wrapped.task, wrapped.message, wrapped.status_update, wrapped.artifact_update]
    assert sum(m is not None for m in members) == 1


def test_stream_response_needs_exactly_one_member() -> None:
    task = t.Task(id="t", status=t.TaskStatus(state=t.TaskState.WORKING))
    with pytest.raises(ValidationError):
        t.StreamResponse()
    with pytest.raises(ValidationError):
        t.StreamResponse(task=task, message=t.Message.user("x"))


def test_send_message_response_result() -> None:
    task = t.Task(id="t", status=t.TaskStatus(state=t.TaskState.WORKING))
    message = t.Message.agent("x")
    assert t.SendMessageResponse(task=task).result is task
    assert t.SendMessageResponse(message=message).result is message
    with pytest.raises(ValidationError):
        t.SendMessageResponse()
    with pytest.raises(ValidationError):
        t.SendMessageResponse(task=task, message=message)


def test_security_scheme_and_flows_are_oneofs() -> None:
    key = t.APIKeySecurityScheme(location="header", name="k")
    with pytest.raises(ValidationError):
        t.SecurityScheme()
    with pytest.raises(ValidationError):
        t.SecurityScheme(
            api_key_security_scheme=key, mtls_security_scheme=t.MutualTlsSecurityScheme()
        )
    flow = t.ClientCredentialsOAuthFlow(token_url="https://t")
    with pytest.raises(ValidationError):
        t.OAuthFlows()
    with pytest.raises(ValidationError):
        t.OAuthFlows(client_credentials=flow, password=t.PasswordOAuthFlow(token_url="https://t"))


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (t.ListTasksRequest, {"page_size": 0}),
        (t.ListTasksRequest, {"page_size": 101}),
        (t.ListTasksRequest, {"history_length": -1}),
        (t.GetTaskRequest, {"id": "t", "history_length": -5}),
        (t.ListTaskPushNotificationConfigsRequest, {"task_id": "t", "page_size": -1}),
    ],
)
def test_numeric_bounds(model: type[t.A2AModel], fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(fields)


def test_int32_fields_are_bounded() -> None:
    """int32 proto fields refuse what every ProtoJSON peer would refuse."""
    assert t.GetTaskRequest(id="t", history_length=2**31 - 1).history_length == 2**31 - 1
    with pytest.raises(ValidationError):
        t.GetTaskRequest(id="t", history_length=2**31)
    with pytest.raises(ValidationError):
        t.SendMessageConfiguration(history_length=2**31)
    with pytest.raises(ValidationError):
        t.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=2**31)


# names ------------------------------------------------------------------------

CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
FREE_FORM = {"metadata", "data", "params", "header", "scopes", "securitySchemes", "schemes"}


def _keys(value: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            keys.append(key)
            if key not in FREE_FORM:
                keys += _keys(child)
            elif key in ("securitySchemes", "schemes") and isinstance(child, dict):
                for inner in child.values():
                    keys += _keys(inner)
    elif isinstance(value, list):
        for child in value:
            keys += _keys(child)
    return keys


@settings(max_examples=40)
@given(st.one_of(s.tasks(), s.agent_cards(), s.requests(Operation.SEND_MESSAGE)))
def test_wire_names_are_camel_case(model: t.A2AModel) -> None:
    for key in _keys(model.model_dump(mode="json", by_alias=True)):
        assert CAMEL.match(key), key


def test_python_and_wire_names() -> None:
    config = t.TaskPushNotificationConfig(task_id="t", url="u")
    assert config.model_dump(mode="json", by_alias=True) == {"taskId": "t", "url": "u"}
    assert t.TaskPushNotificationConfig.model_validate({"task_id": "t", "url": "u"}) == config
    assert t.TaskPushNotificationConfig.model_validate({"taskId": "t", "url": "u"}) == config
    card = t.OAuth2SecurityScheme(
        flows=t.OAuthFlows(
            device_code=t.DeviceCodeOAuthFlow(device_authorization_url="d", token_url="t")
        ),
        oauth2_metadata_url="m",
    )
    assert card.model_dump(mode="json", by_alias=True) == {
        "flows": {"deviceCode": {"deviceAuthorizationUrl": "d", "tokenUrl": "t", "scopes": {}}},
        "oauth2MetadataUrl": "m",
    }


def test_unknown_fields_are_ignored() -> None:
    part = t.Part.model_validate({"text": "x", "kind": "text", "somethingNew": {"a": 1}})
    assert part == t.Part(text="x")
    assert not hasattr(part, "somethingNew")


# timestamps -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05.000Z"),
        (datetime(2024, 1, 2, 3, 4, 5, 120000, tzinfo=UTC), "2024-01-02T03:04:05.120Z"),
        (datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), "2024-01-02T03:04:05.123456Z"),
        (datetime(2024, 1, 2, 3, 4, 5, 1000, tzinfo=UTC), "2024-01-02T03:04:05.001Z"),
        (datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05.000Z"),  # naive means UTC
        (
            datetime(2024, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2))),
            "2024-01-02T03:04:05.000Z",
        ),
    ],
)
def test_format_timestamp(value: datetime, text: str) -> None:
    assert t.format_timestamp(value) == text


@given(
    st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31))
    | st.datetimes(
        min_value=datetime(2, 1, 1),
        max_value=datetime(9998, 12, 31),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-9, minutes=-30))]),
    )
)
def test_format_timestamp_is_rfc3339_utc_with_millis_or_micros(value: datetime) -> None:
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    micros = utc.microsecond
    fraction = f"{micros // 1000:03d}" if micros % 1000 == 0 else f"{micros:06d}"
    expected = (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{fraction}Z"
    )
    assert t.format_timestamp(value) == expected


RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.(\d{3}|\d{6})Z$")


@settings(max_examples=200)
@given(st.datetimes(timezones=st.just(UTC)))
def test_format_timestamp_is_rfc3339_utc(value: datetime) -> None:
    text = t.format_timestamp(value)
    assert RFC3339.match(text), text
    parsed = t.TaskStatus.model_validate({"state": 1, "timestamp": text}).timestamp
    assert parsed == value


def test_format_timestamp_pads_early_years() -> None:
    """Proto Timestamps reach back to year 1; RFC 3339 needs four year digits."""
    assert t.format_timestamp(datetime(999, 1, 2, tzinfo=UTC)) == "0999-01-02T00:00:00.000Z"
    assert t.format_timestamp(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00.000Z"


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_out_of_range_timestamp_is_a_validation_error(text: str) -> None:
    """An offset that moves the instant outside datetime's range is invalid input."""
    with pytest.raises(ValidationError):
        t.TaskStatus.model_validate({"state": 1, "timestamp": text})


def test_new_id_is_a_random_uuid4() -> None:
    import uuid

    ids = {t.new_id() for _ in range(1000)}
    assert len(ids) == 1000
    for value in list(ids)[:50]:
        parsed = uuid.UUID(value)
        assert parsed.version == 4
        assert str(parsed) == value


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_never_hands_out_its_parents_ids() -> None:
    """Ids are made in batches: a child must not inherit the parent's unused ones."""
    t.new_id()  # the parent holds a batch
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.write(write, "\n".join(t.new_id() for _ in range(8)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = set(pipe.read().split())
    os.waitpid(pid, 0)
    parent = {t.new_id() for _ in range(8)}
    assert len(child) == 8
    assert not child & parent


# copies on hot paths -------------------------------------------------------------


@given(s.tasks(), s.task_statuses(), st.lists(s.messages(), max_size=3))
@settings(max_examples=60)
def test_changed_copies_like_model_copy(
    task: t.Task, status: t.TaskStatus, history: list[t.Message]
) -> None:
    from a2a_core.types._base import changed

    update: dict[str, Any] = {"status": status, "history": history}
    ours, theirs = changed(task, update), task.model_copy(update=update)
    assert ours == theirs
    assert ours.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours is not task
    assert changed(task, {}) == task


@given(st.sampled_from(list(t.TaskState)), st.one_of(st.none(), s.messages()))
@settings(max_examples=40)
def test_status_now_without_validation_equals_the_validated_one(
    state: t.TaskState, message: t.Message | None
) -> None:
    fast = t.TaskStatus.now(state, message)
    assert fast.timestamp is not None
    assert fast.timestamp.tzinfo is UTC
    checked = t.TaskStatus(state=state, message=message, timestamp=fast.timestamp)
    assert fast == checked
    assert fast.model_dump_json() == checked.model_dump_json()
    assert fast.__pydantic_fields_set__ == checked.__pydantic_fields_set__


def test_status_now_still_validates_what_it_cannot_trust() -> None:
    status = t.TaskStatus.now("TASK_STATE_WORKING")  # type: ignore[arg-type]
    assert status.state is t.TaskState.WORKING
    with pytest.raises(ValidationError):
        t.TaskStatus.now(t.TaskState.WORKING, {"parts": "not a list"})  # type: ignore[arg-type]
