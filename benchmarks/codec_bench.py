"""Codec micro-benchmark: our 1.0 codec against the official SDK's protobuf JSON, same run.

Two typical payloads, each decoded from bytes and encoded back to bytes:

- a JSON-RPC ``SendMessage`` request (a message with two text parts and metadata);
- a ``GetTask`` response (a completed task with two history messages and an artifact).

Ours: ``wire.loads`` + ``V10Codec.decode_request`` / ``decode_result`` and
``V10Codec.encode_result`` / ``encode_request`` + ``wire.dumps``.
SDK (a2a-sdk, test-only): ``json_format.Parse`` into ``a2a_pb2`` messages and
``json_format.MessageToJson``, which is how its JSON-RPC and REST handlers
read and write payloads.

Run: ``uv run python benchmarks/codec_bench.py`` (about 10-20 s). Prints
µs per operation (best of several repeats) and the SDK/ours ratio.
"""

from __future__ import annotations

import json
import sys
import timeit
from collections.abc import Callable
from typing import Any

from a2a.types import a2a_pb2
from a2a_core.wire import Operation, V10Codec, dumps, loads
from google.protobuf import json_format

REPEATS = 5
TARGET_SECONDS = 0.15  # per timing repeat

SEND_REQUEST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {
        "message": {
            "messageId": "9229e770-767c-417b-a0b0-f0741243c589",
            "contextId": "c0ffee00-1111-4222-8333-444455556666",
            "role": "ROLE_USER",
            "parts": [
                {"text": "Summarize the attached quarterly report in three bullet points."},
                {"text": "Keep it under 80 words, please.", "mediaType": "text/plain"},
            ],
            "metadata": {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "priority": 2},
        },
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 10},
        "metadata": {"client": "bench/1.0"},
    },
}


def _message(role: str, message_id: str, text: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "contextId": "c0ffee00-1111-4222-8333-444455556666",
        "taskId": "7d5e6f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
        "role": role,
        "parts": [{"text": text}],
    }


TASK_RESULT: dict[str, Any] = {
    "id": "7d5e6f3a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
    "contextId": "c0ffee00-1111-4222-8333-444455556666",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-06-01T12:00:03.250Z"},
    "artifacts": [
        {
            "artifactId": "a1b2c3d4-0000-4000-8000-000000000001",
            "name": "summary",
            "parts": [
                {"text": "- Revenue up 12%\n- Costs flat\n- Guidance raised"},
                {"data": {"revenueGrowth": 0.12, "guidance": "raised"}},
            ],
            "metadata": {"model": "bench-llm"},
        }
    ],
    "history": [
        _message("ROLE_USER", "9229e770-767c-417b-a0b0-f0741243c589", "Summarize the report."),
        _message("ROLE_AGENT", "5f1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b", "Here is the summary."),
    ],
    "metadata": {"durationMs": 3250},
}
TASK_RESPONSE: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "result": TASK_RESULT}

CODEC = V10Codec()
SEND_BYTES = json.dumps(SEND_REQUEST).encode()
TASK_BYTES = json.dumps(TASK_RESPONSE).encode()
SEND_PARAMS_TEXT = json.dumps(SEND_REQUEST["params"])
TASK_TEXT = json.dumps(TASK_RESULT)


# ours -------------------------------------------------------------------------------


def ours_decode_send() -> Any:
    envelope = loads(SEND_BYTES)
    return CODEC.decode_request(Operation.SEND_MESSAGE, envelope["params"])


SEND_MODEL = ours_decode_send()


def ours_encode_send() -> bytes:
    params = CODEC.encode_request(Operation.SEND_MESSAGE, SEND_MODEL)
    return dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})


def ours_decode_task() -> Any:
    envelope = loads(TASK_BYTES)
    return CODEC.decode_result(Operation.GET_TASK, envelope["result"])


TASK_MODEL = ours_decode_task()


def ours_encode_task() -> bytes:
    result = CODEC.encode_result(Operation.GET_TASK, TASK_MODEL)
    return dumps({"jsonrpc": "2.0", "id": 1, "result": result})


# the SDK ------------------------------------------------------------------------------


def sdk_decode_send() -> Any:
    envelope = json.loads(SEND_BYTES)
    request = a2a_pb2.SendMessageRequest()
    json_format.ParseDict(envelope["params"], request)
    return request


SEND_PROTO = sdk_decode_send()


def sdk_encode_send() -> bytes:
    params = json_format.MessageToDict(SEND_PROTO)
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    ).encode()


def sdk_decode_task() -> Any:
    envelope = json.loads(TASK_BYTES)
    task = a2a_pb2.Task()
    json_format.ParseDict(envelope["result"], task)
    return task


TASK_PROTO = sdk_decode_task()


def sdk_encode_task() -> bytes:
    result = json_format.MessageToDict(TASK_PROTO)
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


def sdk_parse_text_send() -> Any:
    """``json_format.Parse`` on the params text: the SDK's plain text-to-proto path."""
    return json_format.Parse(SEND_PARAMS_TEXT, a2a_pb2.SendMessageRequest())


def sdk_message_to_json_task() -> str:
    """``json_format.MessageToJson``: the SDK's plain proto-to-text path."""
    return json_format.MessageToJson(TASK_PROTO)


# timing -------------------------------------------------------------------------------


def per_op_us(fn: Callable[[], Any]) -> float:
    """Best-of-REPEATS microseconds per call."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * TARGET_SECONDS / 0.2))
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e6


def _check_equivalent() -> None:
    """Both sides must do the same work: same meaning in, same meaning out."""
    ours = json_format.Parse(
        json.dumps(json.loads(ours_encode_send())["params"]), a2a_pb2.SendMessageRequest()
    )
    assert ours == SEND_PROTO, "ours and the SDK disagree on the SendMessage request"
    ours_task = json_format.Parse(
        json.dumps(json.loads(ours_encode_task())["result"]), a2a_pb2.Task()
    )
    assert ours_task == TASK_PROTO, "ours and the SDK disagree on the Task"


def main() -> int:
    _check_equivalent()
    rows = [
        ("SendMessage request: decode", ours_decode_send, sdk_decode_send),
        ("SendMessage request: encode", ours_encode_send, sdk_encode_send),
        ("Task response: decode", ours_decode_task, sdk_decode_task),
        ("Task response: encode", ours_encode_task, sdk_encode_task),
    ]
    print(f"python {sys.version.split()[0]}; best of {REPEATS} repeats; µs per operation")
    print(f"{'payload / direction':34} {'ours':>9} {'a2a-sdk':>9} {'sdk/ours':>9}")
    totals = [0.0, 0.0]
    for label, ours, sdk in rows:
        ours_us, sdk_us = per_op_us(ours), per_op_us(sdk)
        totals[0] += ours_us
        totals[1] += sdk_us
        print(f"{label:34} {ours_us:9.1f} {sdk_us:9.1f} {sdk_us / ours_us:8.1f}x")
    print(f"{'all four':34} {totals[0]:9.1f} {totals[1]:9.1f} {totals[1] / totals[0]:8.1f}x")
    print()
    parse_us, to_json_us = per_op_us(sdk_parse_text_send), per_op_us(sdk_message_to_json_task)
    print("for reference, the SDK's text entry points on the same payloads:")
    print(f"  json_format.Parse(SendMessageRequest params)  {parse_us:8.1f} µs")
    print(f"  json_format.MessageToJson(Task)               {to_json_us:8.1f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
