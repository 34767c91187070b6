"""The demo runs and prints valid wire JSON; every Python block in the docs runs."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from a2a.compat.v0_3.types import AgentCard as V03AgentCard
from a2a.types import a2a_pb2
from google.protobuf.json_format import ParseDict

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("packages/*/README.md")])
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def run_demo() -> dict[str, dict[str, Any]]:
    """Run the demo; return its JSON blocks keyed by "section / title"."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "card_and_message.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    blocks: dict[str, dict[str, Any]] = {}
    section = ""
    for chunk in re.split(r"^(?==== |--- )", result.stdout, flags=re.MULTILINE):
        header, _, body = chunk.partition("\n")
        if header.startswith("=== "):
            section = header[4:].split(" (")[0]
        elif header.startswith("--- "):
            blocks[f"{section} / {header[4:].split(' (')[0]}"] = json.loads(body)
    return blocks


@pytest.fixture(scope="module")
def demo() -> dict[str, dict[str, Any]]:
    return run_demo()


def test_demo_prints_every_wire_version(demo: dict[str, dict[str, Any]]) -> None:
    assert sorted(demo) == [
        "A2A 0.3 HTTP+JSON / agent card",
        "A2A 0.3 HTTP+JSON / body",
        "A2A 0.3 JSON-RPC / JSON-RPC request",
        "A2A 0.3 JSON-RPC / agent card",
        "A2A 1.0 / HTTP+JSON body",
        "A2A 1.0 / JSON-RPC request",
        "A2A 1.0 / agent card",
        "Hybrid agent card / agent card",
    ]


def test_demo_1_0_output_is_valid_for_the_sdk(demo: dict[str, dict[str, Any]]) -> None:
    ParseDict(demo["A2A 1.0 / agent card"], a2a_pb2.AgentCard())
    request = demo["A2A 1.0 / JSON-RPC request"]
    assert request["method"] == "SendMessage"
    sent = ParseDict(request["params"], a2a_pb2.SendMessageRequest())
    assert [p.WhichOneof("content") for p in sent.message.parts] == ["text", "data", "raw"]
    assert demo["A2A 1.0 / HTTP+JSON body"] == request["params"]


def test_demo_0_3_output_is_valid_for_the_sdk(demo: dict[str, dict[str, Any]]) -> None:
    card = V03AgentCard.model_validate(demo["A2A 0.3 JSON-RPC / agent card"])
    assert card.preferred_transport == "JSONRPC"
    request = demo["A2A 0.3 JSON-RPC / JSON-RPC request"]
    assert request["method"] == "message/send"
    assert [p["kind"] for p in request["params"]["message"]["parts"]] == ["text", "data", "file"]
    body = demo["A2A 0.3 HTTP+JSON / body"]
    assert [next(iter(p)) for p in body["message"]["content"]] == ["text", "data", "file"]


def test_demo_hybrid_card_serves_both_versions(demo: dict[str, dict[str, Any]]) -> None:
    hybrid = demo["Hybrid agent card / agent card"]
    V03AgentCard.model_validate(hybrid)
    ParseDict(hybrid, a2a_pb2.AgentCard(), ignore_unknown_fields=True)
    assert hybrid["supportedInterfaces"] == demo["A2A 1.0 / agent card"]["supportedInterfaces"]


# A block that shows code for a framework the reader brings (not installed here)
# starts with this comment and is not run; every other python block is.
ILLUSTRATION = "# illustration:"

BLOCKS = [
    (doc, number, block)
    for doc in DOCS
    for number, block in enumerate(PYTHON_BLOCK.findall(doc.read_text()), start=1)
    if not block.startswith(ILLUSTRATION)
]


def test_the_readme_has_a_python_example() -> None:
    assert any(doc == ROOT / "README.md" for doc, _, _ in BLOCKS)


@pytest.mark.parametrize(
    ("doc", "block"),
    [(doc, block) for doc, _, block in BLOCKS],
    ids=[f"{doc.relative_to(ROOT)}#{number}" for doc, number, _ in BLOCKS],
)
def test_python_blocks_in_docs_run(doc: Path, block: str) -> None:
    from a2a_core import telemetry

    was_on = telemetry.enabled()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block, str(doc), "exec"), {"__name__": "__doc_example__"})
    finally:
        if not was_on:  # a block that turns telemetry on must not leave it on for later tests
            telemetry.disable()
