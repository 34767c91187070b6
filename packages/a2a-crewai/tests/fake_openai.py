"""A stand-in for the OpenAI Chat Completions API on loopback (for the demo's real-model path).

It answers like a model that uses its tools: a request that offers tools and
has no tool result yet gets a call of the first tool (with a ``message``
argument); a request with a tool result gets a final answer quoting it; any
other request (the LangChain chain's) gets a short forecast.
"""

from __future__ import annotations

import json
import time
from typing import Any

Scope = dict[str, Any]


def _completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def answer(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    tool_results = [m for m in messages if m.get("role") == "tool"]
    model = str(body.get("model", "fake"))
    if tools and not tool_results:
        name = tools[0]["function"]["name"]
        arguments = json.dumps({"message": "Will it rain tomorrow?"})
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, model)
    if tool_results:
        said = tool_results[-1].get("content")
        return _completion({"role": "assistant", "content": f"Plan: take a jacket ({said})"}, model)
    return _completion({"role": "assistant", "content": "Cloudy and 18 °C, no rain."}, model)


class FakeOpenAI:
    """An ASGI app serving ``POST /v1/chat/completions``; ``requests`` records the bodies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"].endswith("/chat/completions"):
            request = json.loads(body or b"{}")
            self.requests.append(request)
            status, payload = 200, answer(request)
        else:
            status, payload = 404, {"error": {"message": f"no route {scope['path']}"}}
        data = json.dumps(payload).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})
