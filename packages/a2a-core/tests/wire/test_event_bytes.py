"""Stream frames and 1.0 send results come straight from the event: the wrapper's bytes.

``Codec.encode_event_json`` is what the SSE edges write per event; 1.0 writes the
``StreamResponse`` JSON without building the wrapper model. For every kind of event the
bytes must equal the wrapper's, and decode back to the event.
"""

from __future__ import annotations

import strategies as s
from a2a_core import types as t
from a2a_core.types._json import event_json, task_json
from a2a_core.wire import Operation, V03JsonRpcCodec, V10Codec, dumps, loads
from hypothesis import given, settings


@settings(max_examples=60)
@given(s.events())
def test_v10_event_bytes_are_the_stream_response_bytes(event: t.StreamEvent) -> None:
    codec = V10Codec()
    fast = codec.encode_event_json(event)
    assert fast == dumps(t.StreamResponse.wrap(event))
    assert codec.decode_event(loads(fast)) == event


@settings(max_examples=100)
@given(s.artifact_events())
def test_artifact_update_bytes_are_the_stream_response_bytes(
    event: t.TaskArtifactUpdateEvent,
) -> None:
    """Built in pieces (the ids and name once per artifact): the same bytes as the model's."""
    assert event_json(event) == dumps(t.StreamResponse.wrap(event))
    assert event_json(event) == dumps(t.StreamResponse.wrap(event))  # its head kept: the same


@settings(max_examples=30)
@given(s.events())
def test_v03_event_bytes_are_its_encoded_event(event: t.StreamEvent) -> None:
    codec = V03JsonRpcCodec()
    assert codec.encode_event_json(event) == dumps(codec.encode_event(event))


def test_a_subclassed_event_still_goes_through_the_wrapper() -> None:
    class Mine(t.TaskStatusUpdateEvent):
        pass

    event = Mine(task_id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.WORKING))
    fast = V10Codec().encode_event_json(event)
    assert fast.startswith(b'{"statusUpdate":')
    assert fast == dumps(t.StreamResponse.wrap(event))


def _edge_events() -> list[t.StreamEvent]:
    """Values the canonical strategies avoid: empty strings, lists and maps, non-finite
    numbers and bytes inside data and metadata, every optional field set or unset."""
    odd: dict[str, object] = {"inf": float("inf"), "nan": float("nan"), "b": b"\x00\xff", "": {}}
    parts = [
        t.Part(text=""),
        t.Part(text='é\u2028"\\/\x01', metadata={}, filename="", media_type=""),
        t.Part(raw=b"\x00\xfe\xff", filename="f.bin", media_type="application/octet-stream"),
        t.Part(raw=b""),
        t.Part(url="https://x/y?z=1", metadata={"k": [1, None, 2.5]}),
        t.Part(data=0),
        t.Part(data=False),
        t.Part(data=""),
        t.Part(data=[]),
        t.Part(data=odd),
    ]
    message = t.Message(
        message_id="m",
        context_id="",
        task_id="",
        role=t.Role.AGENT,
        parts=parts,
        metadata={},
        extensions=["e"],
        reference_task_ids=["r1", "r2"],
    )
    bare = t.Message(message_id="m2", role=t.Role.USER, parts=[t.Part(text="x")])
    artifact = t.Artifact(
        artifact_id="a", name="", description="", parts=parts, metadata=odd, extensions=[]
    )
    stamp = t.TaskStatus.now(t.TaskState.INPUT_REQUIRED, message)
    return [
        message,
        bare,
        t.Task(id="t", status=t.TaskStatus(state=t.TaskState.SUBMITTED)),
        t.Task(
            id="t",
            context_id="c",
            status=stamp,
            artifacts=[artifact],
            history=[bare, message],
            metadata=odd,
        ),
        t.TaskStatusUpdateEvent(task_id="t", status=stamp, metadata={}),
        t.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.WORKING)
        ),
        t.TaskArtifactUpdateEvent(task_id="t", artifact=artifact),
        t.TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=artifact,
            append=True,
            last_chunk=True,
            metadata={"m": 1},
        ),
    ]


def test_v10_event_bytes_for_edge_values() -> None:
    codec = V10Codec()
    for event in _edge_events():
        assert codec.encode_event_json(event) == dumps(t.StreamResponse.wrap(event)), event


@settings(max_examples=40)
@given(s.events())
def test_v10_send_result_bytes_are_the_encoded_result(event: t.StreamEvent) -> None:
    codec = V10Codec()
    expected = dumps(codec.encode_result(Operation.SEND_MESSAGE, event))
    if isinstance(event, t.Task | t.Message):
        assert codec.encode_result_json(Operation.SEND_MESSAGE, event) == expected
    for edge in _edge_events():
        if isinstance(edge, t.Task | t.Message):
            assert codec.encode_result_json(Operation.SEND_MESSAGE, edge) == dumps(
                codec.encode_result(Operation.SEND_MESSAGE, edge)
            )


@settings(max_examples=40)
@given(s.tasks())
def test_task_json_is_the_models_json(task: t.Task) -> None:
    """What the memory store keeps of a finished task: the model's own bytes."""
    assert task_json(task) == dumps(task)
    for edge in _edge_events():
        if isinstance(edge, t.Task):
            assert task_json(edge) == dumps(edge)


@settings(max_examples=30)
@given(s.tasks(), s.tasks())
def test_a_task_encoded_twice_gives_its_own_bytes_each_time(first: t.Task, other: t.Task) -> None:
    """The store's encoding of a finished task is reused for the send result (the same
    object), and never for another task."""
    codec = V10Codec()
    for task in (first, other, first):
        assert task_json(task) == dumps(task)
        assert codec.encode_result_json(Operation.SEND_MESSAGE, task) == dumps(
            codec.encode_result(Operation.SEND_MESSAGE, task)
        )
        changed = task.model_copy(update={"id": task.id + "x"})
        assert task_json(changed) == dumps(changed)
        assert codec.encode_event_json(changed) == dumps(t.StreamResponse.wrap(changed))


def test_encoding_a_task_keeps_nothing_alive() -> None:
    import gc
    import weakref

    task = t.Task(id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.COMPLETED))
    assert task_json(task) == dumps(task)
    ref = weakref.ref(task)
    del task
    gc.collect()
    assert ref() is None


def _replayed(events: list[t.StreamEvent]) -> list[tuple[t.StreamEvent, bytes | None]]:
    """The events, and their JSON, as a ``MemoryEventBus`` replays them (kept as bytes)."""
    from a2a_core.server import MemoryEventBus

    bus = MemoryEventBus()
    bus.subscribe("t", current=0).close()  # starts the task's record
    for i, event in enumerate(events, 1):
        bus.publish("t", event, i)
    bus.end("t")
    sub = bus.subscribe("t", after=0)
    replayed: list[tuple[t.StreamEvent, bytes | None]] = []
    while sub.pending:
        event = sub.take_ready()
        assert event is not None
        replayed.append((event, sub.encoded))
    sub.close()
    return replayed


@settings(max_examples=40)
@given(s.events())
def test_a_packed_replay_buffer_gives_back_equal_events_and_bytes(event: t.StreamEvent) -> None:
    """A task's events are kept as their JSON and decoded for a replay.

    Equal on the wire (an empty string the JSON omits comes back as None).
    """
    events = [event, *_edge_events()]
    replayed = _replayed(events)
    assert replayed[0][0] == event
    v10 = V10Codec()
    assert [v10.encode_event_json(e) for e, _ in replayed] == [
        v10.encode_event_json(e) for e in events
    ]
    assert [data for _, data in replayed] == [event_json(e) for e in events]
    v03 = V03JsonRpcCodec()
    assert v03.encode_event_json(replayed[0][0]) == v03.encode_event_json(event)


def test_a_10_frame_is_the_model_json_it_is_given_and_a_03_frame_its_own() -> None:
    """The bus's bytes for an event (``event_json``) are a 1.0 frame as they are; a 0.3
    codec writes its own shape whatever it is given."""
    chunk = t.TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=t.Artifact(artifact_id="a", parts=[t.Part(text="x")])
    )
    data = event_json(chunk)
    assert data is not None
    assert V10Codec().encode_event_json(chunk, data) is data
    assert V10Codec().encode_event_json(chunk) == data
    v03 = V03JsonRpcCodec()
    assert v03.encode_event_json(chunk, data) == v03.encode_event_json(chunk) != data


def test_artifact_heads_are_kept_for_a_bounded_number_of_artifacts() -> None:
    """Chunks of one artifact share the bytes before their parts; many artifacts do not
    grow the process's memory."""
    from a2a_core.types import _json

    def chunk(artifact_id: str, text: str) -> t.TaskArtifactUpdateEvent:
        artifact = t.Artifact(artifact_id=artifact_id, name="n", parts=[t.Part(text=text)])
        return t.TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)

    for i in range(1000):
        event = chunk(str(i), "x")
        assert event_json(event) == dumps(t.StreamResponse.wrap(event))
    assert 0 < len(_json._HEADS) <= 256  # pyright: ignore[reportPrivateUsage]
    first, second = chunk("a", "one"), chunk("a", "two")
    assert event_json(second) == dumps(t.StreamResponse.wrap(second))
    assert event_json(first) == dumps(t.StreamResponse.wrap(first))
