"""The ``a2a`` command as a shell tool: pipes, ``--debug``, option names, ``a2a plugins``.

Client commands that write into a closed pipe run as real subprocesses
against our server on 127.0.0.1; the rest run in process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a_core import __version__
from a2a_core.adapters import resolve_agent
from a2a_core.cli import build_parser
from a2a_core.plugins import create_plugin_manager
from a2a_test_plugin.plugin import FakeFrameworkAgent
from cli_support import AGENTS_FILE, HERE, ServeProcess, a2a_command, cli, subprocess_env
from servers import (  # pyright: ignore[reportMissingImports] - tests/client/servers.py
    free_port,
    our_app,
    running,
    scripted_service,
)

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running(our_app(scripted_service(), port), port) as base:
        yield base


def run_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """``a2a ARGV`` with stdout a pipe whose reader is already gone (``| head`` that left)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [*a2a_command(), *argv],
            stdout=writer,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=subprocess_env(),
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)


# -- pipes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["card"], ["send", "chunks", "--stream", "--json"], ["send", "hello"]],
    ids=["card", "send-stream-json", "send"],
)
def test_a_reader_that_left_ends_the_command_quietly(url: str, argv: list[str]) -> None:
    command, *rest = argv
    done = run_into_closed_pipe(command, url, *rest)
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored" at exit
    assert done.returncode == 141  # 128 + SIGPIPE, what a shell reports for `yes | head -1`


def test_card_piped_into_head(url: str) -> None:
    done = subprocess.run(
        f"{' '.join(a2a_command())} card {url} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.stdout == "Scripted agent version 1.0.0\n"
    assert done.stderr == ""


# -- --protocol-version and --version --------------------------------------------------------


def test_protocol_version_option_and_the_deprecated_spelling(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    parser = build_parser()
    args = parser.parse_args(["send", url, "hi", "--protocol-version", "0.3"])
    assert args.protocol_version == "0.3"
    code, out, err = cli(capsys, "send", url, "hello new", "--protocol-version", "0.3")
    assert (code, out.splitlines()[-1], err) == (0, "Echo: hello new", "")
    code, out, err = cli(capsys, "send", url, "hello old", "--version", "0.3")
    assert (code, out.splitlines()[-1]) == (0, "Echo: hello old")
    assert "--version on a command is deprecated, use --protocol-version" in err


def test_program_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--version")
    assert (code, out) == (0, f"a2a (a2a-adapters-core) {__version__}\n")


# -- --debug -------------------------------------------------------------------------------


@pytest.fixture
def broken_module(tmp_path: Path) -> str:
    path = tmp_path / "broken_agent.py"
    path.write_text('def helper():\n    raise ValueError("boom at import")\n\nhelper()\n')
    return f"{path}:agent"


def test_an_import_failure_is_one_line_that_names_debug(
    capsys: pytest.CaptureFixture[str], broken_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("A2A_DEBUG", raising=False)
    code, _, err = cli(capsys, "serve", broken_module)
    assert code == 2
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1
    assert "ValueError: boom at import" in err
    assert "--debug or A2A_DEBUG=1 shows the traceback" in err


@pytest.mark.parametrize("where", ["after", "before", "env"])
def test_debug_shows_the_traceback(
    capsys: pytest.CaptureFixture[str],
    broken_module: str,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
) -> None:
    monkeypatch.delenv("A2A_DEBUG", raising=False)
    argv = ["serve", broken_module]
    if where == "after":
        argv.append("--debug")
    elif where == "before":
        argv.insert(0, "--debug")
    else:
        monkeypatch.setenv("A2A_DEBUG", "1")
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert 'raise ValueError("boom at import")' in err  # the user's own line
    assert err.rstrip().splitlines()[-1].startswith("a2a: error: importing")


# -- -o for objects without an adapter ---------------------------------------------------------


def test_options_for_an_object_without_an_adapter_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli(capsys, "serve", f"{AGENTS_FILE}:ScriptedAgent", "-o", "stream=false")
    assert code == 2
    assert "options are for framework adapters" in err


def test_options_the_adapter_does_not_take_are_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(HERE)
    code, _, err = cli(capsys, "serve", "cli_agents:framework_agent", "-o", "stream=false")
    assert code == 2
    assert "unknown option stream for the a2a-test-plugin adapter" in err
    assert "valid options: none" in err


# -- a2a plugins and hook tracing --------------------------------------------------------------


def test_plugins_lists_plugins_hooks_and_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "plugins")
    assert (code, err) == (0, "")
    assert "a2a-test-plugin (a2a-test-plugin 0.1.0)\n  entry point: a2a_test_plugin.plugin\n" in out
    assert "  hooks: a2a_adapt_agent, a2a_agent_card, a2a_cli_commands, a2a_lifespan," in out
    assert "echo (built in, a2a-adapters-core" in out


def test_plugins_json_says_what_the_environment_leaves_out() -> None:
    done = subprocess.run(
        [*a2a_command(), "plugins", "--json"],
        capture_output=True,
        text=True,
        env={**subprocess_env(), "A2A_PLUGINS": "a2a-test-plugin"},
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    by_name = {row["name"]: row for row in rows}
    plugin = by_name["a2a-test-plugin"]
    assert plugin["loaded"]
    assert not plugin["builtin"]
    assert plugin["entryPoint"] == "a2a_test_plugin.plugin"
    assert "a2a_register_task_stores" in plugin["hooks"]
    assert by_name["echo"]["builtin"]
    assert by_name["echo"]["loaded"]
    left_out = [r for r in rows if not r["builtin"] and r["name"] != "a2a-test-plugin"]
    assert left_out  # the fragile test plugin at least
    assert all(not r["loaded"] and r["hooks"] == [] for r in left_out)


def test_trace_hooks_writes_each_call_to_stderr_without_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pm = create_plugin_manager({"A2A_TRACE_HOOKS": "1", "A2A_PLUGINS": "a2a-test-plugin"})
    resolved = resolve_agent(
        FakeFrameworkAgent("hi"), {"name": "x", "api_token": "s3cr3t"}, plugin_manager=pm
    )
    err = capsys.readouterr().err
    assert resolved.adapter == "a2a-test-plugin"
    assert "a2a_adapt_agent -> a2a-test-plugin [hook]" in err
    assert "finish a2a_adapt_agent a2a-test-plugin --> ResolvedAgent(" in err
    assert "'api_token': '***'" in err
    assert "s3cr3t" not in err
    quiet = create_plugin_manager({"A2A_PLUGINS": "a2a-test-plugin"})
    resolve_agent(FakeFrameworkAgent("hi"), {}, plugin_manager=quiet)
    assert capsys.readouterr().err == ""


# -- a2a serve --log-level: the access log ------------------------------------------------------


@pytest.mark.parametrize("level", ["info", "warning"])
def test_serve_log_level_info_writes_one_access_line_per_request(
    capsys: pytest.CaptureFixture[str], level: str
) -> None:
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", "0", "--log-level", level]
    with ServeProcess(args) as process:
        base = process.start()
        code, _, _ = cli(capsys, "send", base, "hello secret", "--json")
        assert code == 0
        code, _, _ = cli(capsys, "card", base)
        assert code == 0
        assert process.stop() == 0
    lines = [line for line in process.errors().splitlines() if "a2a_core.access" in line]
    if level == "warning":
        assert lines == []
        return
    # send fetched the card, then sent; card fetched it: one line each, none from uvicorn
    assert len(lines) == 3, process.errors()
    assert '"GET /.well-known/agent-card.json" card - task=- 200 - ' in lines[0]
    assert re.search(r'"POST /" JSONRPC SendMessage \(1\.0\) task=\S+ 200 completed', lines[1])
    assert '"GET /.well-known/agent-card.json" card' in lines[2]
    assert "HTTP/1.1" not in process.errors()  # uvicorn's own access log stays off
    assert "secret" not in process.errors()
