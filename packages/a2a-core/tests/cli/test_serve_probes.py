"""``a2a serve`` (a real subprocess): where the probes and the playground are, and ``--otel``.

- it prints the playground and the health probes, and both answer there;
- ``--no-playground`` serves no page and prints none;
- ``--otel --log-format json --log-level info``: the access line is one JSON object
  carrying the trace id of the caller's ``traceparent`` (the API alone, no SDK,
  still continues the caller's context).
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from cli_support import AGENTS_FILE, ServeProcess

pytestmark = pytest.mark.timeout(120)

AGENT = f"{AGENTS_FILE}:ScriptedAgent"


def test_serve_prints_and_answers_the_probes_and_the_playground() -> None:
    with ServeProcess([AGENT, "--port", "0"]) as process:
        shown = process.start()
        url = shown.replace("localhost", "127.0.0.1")
        out = process.wait_output("Health: ").splitlines()
        assert f"Playground: {shown}/playground/" in out
        assert f"Health: {shown}/healthz (live), {shown}/readyz (ready)" in out
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        assert httpx.get(f"{url}/readyz").json() == {"status": "ok"}
        page = httpx.get(f"{url}/playground/")
        assert page.status_code == 200
        assert "<title>A2A playground</title>" in page.text


def test_no_playground_serves_no_page() -> None:
    with ServeProcess([AGENT, "--port", "0", "--no-playground"]) as process:
        url = process.start().replace("localhost", "127.0.0.1")
        out = process.wait_output("Health: ")
        assert "Playground:" not in out
        assert httpx.get(f"{url}/playground/").status_code == 404
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_otel_puts_the_callers_trace_in_the_json_access_line() -> None:
    pytest.importorskip("opentelemetry.trace")
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    args = [AGENT, "--port", "0", "--otel", "--log-format", "json", "--log-level", "info"]
    with ServeProcess(args) as process:
        url = process.start().replace("localhost", "127.0.0.1")
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
            },
        }
        headers = {"A2A-Version": "1.0", "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
        assert httpx.post(url + "/", json=body, headers=headers).status_code == 200
        found: list[dict[str, Any]] = []
        for _ in range(200):
            found = [
                entry
                for entry in map(
                    _json, process.output().splitlines() + process.errors().splitlines()
                )
                if entry.get("logger") == "a2a_core.access"
            ]
            if found:
                break
            time.sleep(0.05)
    assert found, process.output() + process.errors()
    assert found[0]["trace_id"] == trace_id
    assert found[0]["a2a_method"] == "SendMessage"


def _json(line: str) -> dict[str, Any]:
    try:
        value: Any = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]
