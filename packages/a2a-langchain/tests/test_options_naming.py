"""One name for LangChain's own run config, typed serve options, misplaced options refused.

``runnable_config`` is the ``RunnableConfig`` merged into every run, under that
name in ``a2a_langchain.serve``/``running_server``, ``LangChainAgent`` and the
core's ``serve``/``running_server``. ``config`` is the core's task-manager
setting: a mapping given there is an error naming ``runnable_config``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import a2a_core.compose.serve as core_serve
import pytest
from a2a_core.client import A2AClient
from a2a_langchain import LangChainAgent, running_server, serve, serve_async
from a2a_langchain.plugin import AGENT_OPTIONS
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig
from lc_fakes import EchoChatModel


class Recorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.tags: list[list[str]] = []

    async def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is None:
            self.tags.append(list(kwargs.get("tags") or []))


def chain() -> Any:
    prompt = ChatPromptTemplate.from_messages([("human", "{text}")])
    return prompt | EchoChatModel() | StrOutputParser()


async def test_runnable_config_is_honoured_by_both_running_servers() -> None:
    for running in (running_server, core_serve.running_server):
        recorder = Recorder()
        config: RunnableConfig = {"callbacks": [recorder], "tags": ["mine"]}
        async with (
            running(chain(), runnable_config=config) as server,
            await A2AClient.connect(server.url) as client,
        ):
            assert (await client.send("hi")).text == "echo: hi"
        assert len(recorder.tags) == 1, running
        assert "mine" in recorder.tags[0]


async def test_a_run_config_given_as_config_is_refused_with_the_right_name() -> None:
    for running in (running_server, core_serve.running_server):
        with pytest.raises(TypeError, match="runnable_config="):
            async with running(chain(), config={"tags": ["mine"]}):
                pass


async def test_an_unknown_option_is_refused_with_a_hint() -> None:
    for running in (running_server, core_serve.running_server):
        with pytest.raises(TypeError, match="did you mean 'answer_model'"):
            async with running(chain(), answer_modle="x"):
                pass


def test_langchain_agent_takes_runnable_config_and_warns_on_config() -> None:
    agent = LangChainAgent(chain(), runnable_config={"tags": ["mine"]})
    assert agent.config == {"tags": ["mine"]}
    with pytest.warns(DeprecationWarning, match="runnable_config"):
        old = LangChainAgent(chain(), config={"tags": ["old"]})
    assert old.config == {"tags": ["old"]}


def test_serve_entry_points_have_typed_agent_options() -> None:
    agent_options = {
        name
        for name, p in inspect.signature(LangChainAgent.__init__).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "config"
    }
    for entry in (serve, serve_async, running_server):
        parameters = inspect.signature(entry).parameters
        assert agent_options | {"host", "port"} <= set(parameters), entry
        assert parameters["runnable_config"].annotation != "Any"
    # The plugin passes the same names on (``a2a serve -o NAME=...``, core ``serve``).
    assert agent_options == set(AGENT_OPTIONS)


def test_a_serve_o_config_mapping_names_runnable_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from a2a_core.cli import main

    target = f"{Path(__file__).parent / 'lc_cli_agent.py'}:chain"
    code = main(["serve", target, "--port", "0", "-o", 'config={"tags": ["x"]}'])
    assert code == 2
    assert "is runnable_config=" in capsys.readouterr().err
