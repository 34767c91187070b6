"""A stream frame's bytes come straight from the event: the same bytes as the wrapper's.

``Codec.encode_event_json`` is what the SSE edges write per event; 1.0 writes the
``StreamResponse`` JSON without building the wrapper model. For every kind of event the
bytes must equal the wrapper's, and decode back to the event.
"""

from __future__ import annotations

import strategies as s
from a2a_core import types as t
from a2a_core.wire import V03JsonRpcCodec, V10Codec, dumps, loads
from hypothesis import given, settings


@settings(max_examples=60)
@given(s.events())
def test_v10_event_bytes_are_the_stream_response_bytes(event: t.StreamEvent) -> None:
    codec = V10Codec()
    fast = codec.encode_event_json(event)
    assert fast == dumps(t.StreamResponse.wrap(event))
    assert codec.decode_event(loads(fast)) == event


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
