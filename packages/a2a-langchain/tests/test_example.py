"""``examples/langchain_agent.py`` runs offline: it serves its chain and answers over A2A."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langchain_agent.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("langchain_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_the_example_serves_its_chain_and_streams_an_answer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    example = load_example()
    answer = await example.ask_once("What is A2A?")
    assert (
        answer == "(offline model) You asked: 'What is A2A?'. Set OPENAI_API_KEY for real answers."
    )
    out = capsys.readouterr().out
    assert "Agent Helper at http://localhost:" in out
    assert answer in out


def test_the_example_picks_the_offline_model_without_openai(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = load_example()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert isinstance(example.chat_model(), example.OfflineModel)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # not installed
    assert isinstance(example.chat_model(), example.OfflineModel)
