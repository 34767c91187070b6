"""How two peers that read only part of a stream ask for an answer and read it, reproduced.

Their packages need environments of their own (CrewAI pins the official SDK's
0.3 line, which cannot sit next to the 1.x this repository tests with), so the
tests reproduce their requests with httpx and their reading as a function of
the events they receive. Checked by hand against google-adk 2.13 and
crewai[a2a] 1.15 (docs/server.md, "How a streamed answer ends").

- Google ADK's ``RemoteA2aAgent`` (a2a-sdk 1.x client: ``SendStreamingMessage``,
  A2A 1.0) turns each artifact update into an event holding only that update's
  parts, partial unless it says ``lastChunk``, and each status message into an
  event (a thought while SUBMITTED or WORKING). Partial events never reach the
  session, so the answer its orchestrator sees is in the others
  (``adk_session_texts``).
- CrewAI's built-in delegation, default mode (``trust_remote_completion_status
  =False``; a2a-sdk 0.3 client: ``message/stream``, A2A 0.3) aggregates the
  stream into a task the 0.3 SDK's way (each status message joins the
  history) and shows its model only the task's history messages
  (``crewai_history_texts``): artifacts never reach it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

__all__ = [
    "adk_request",
    "adk_session_texts",
    "crewai_default_request",
    "crewai_history_texts",
    "stream_results",
]

SSE_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}


def adk_request(text: str, context_id: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON-RPC body and headers ADK's ``RemoteA2aAgent`` posts (through a2a-sdk 1.x)."""
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": context_id or str(uuid.uuid4()),  # ADK's session id
    }
    body = {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }
    return body, {**SSE_HEADERS, "A2A-Version": "1.0"}


def crewai_default_request(text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON-RPC body and headers CrewAI's delegation posts by default (a2a-sdk 0.3:
    ``model_dump(exclude_none)``, no ``A2A-Version`` header)."""
    body = {
        "id": str(uuid.uuid4()),
        "jsonrpc": "2.0",
        "method": "message/stream",
        "params": {
            "configuration": {"acceptedOutputModes": ["application/json"], "blocking": True},
            "message": {
                "kind": "message",
                "messageId": str(uuid.uuid4()),
                "parts": [{"kind": "text", "text": text}],
                "role": "user",
            },
        },
    }
    return body, dict(SSE_HEADERS)


async def stream_results(url: str, request: tuple[dict[str, Any], dict[str, str]]) -> list[Any]:
    """Post ``request`` to ``url`` and return the ``result`` of each SSE event."""
    body, headers = request
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers=headers)
    response.raise_for_status()
    results: list[Any] = []
    for block in response.text.split("\n\n"):
        data = "\n".join(
            line[5:].lstrip() for line in block.splitlines() if line.startswith("data:")
        )
        if data:
            results.append(json.loads(data)["result"])
    return results


def _texts(parts: list[Any]) -> str:
    found: list[str] = [str(p["text"]) for p in parts if "text" in p]
    return "".join(found)


def adk_session_texts(results: list[Any]) -> list[str]:
    """The texts of the events ADK keeps from a 1.0 stream: each ``lastChunk`` artifact
    update's own parts (any other update is partial), and each status message outside
    SUBMITTED/WORKING (those are thoughts)."""
    kept: list[str] = []
    for result in results:
        if "artifactUpdate" in result:
            update = result["artifactUpdate"]
            if update.get("lastChunk", False):  # event.partial = not update.last_chunk
                kept.append(_texts(update["artifact"]["parts"]))
        elif "statusUpdate" in result:
            status = result["statusUpdate"]["status"]
            message = status.get("message")
            thought = status["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
            if message and message.get("parts") and not thought:
                kept.append(_texts(message["parts"]))
    return [text for text in kept if text]


def crewai_history_texts(results: list[Any]) -> list[str]:
    """The texts of the agent messages in the task CrewAI's 0.3 client builds from a 0.3
    stream (the first ``task`` event's history, then every status message appended),
    which is all its model sees in the default mode."""
    history: list[Any] = []
    for result in results:
        if result.get("kind") == "task":
            history = list(result.get("history") or [])
        elif result.get("kind") == "status-update":
            message = result["status"].get("message")
            if message:
                history.append(message)
    return [_texts(m["parts"]) for m in history if m.get("role") == "agent"]
