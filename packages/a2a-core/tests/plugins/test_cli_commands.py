"""``a2a_cli_commands``: installed packages add ``a2a`` sub-commands (``a2a mcp``...)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from a2a_core.cli import build_parser, main
from a2a_core.cli.main import BUILTIN_COMMANDS
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import get_plugin_manager

pytestmark = pytest.mark.hook("a2a_cli_commands")


def names(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            return set(action.choices)  # pyright: ignore[reportUnknownArgumentType]
    raise AssertionError("no sub-commands")


def test_a_plugin_command_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test-plugin-hello", "Ada"]) == 0
    assert capsys.readouterr().out == "hello Ada from the test plugin\n"


def test_the_overall_help_lists_plugin_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "test-plugin-hello" in capsys.readouterr().out


def test_built_in_commands_do_not_load_plugins() -> None:
    assert names(build_parser()) == set(BUILTIN_COMMANDS)
    assert "test-plugin-hello" in names(build_parser(plugin_commands=True))


def test_an_unloaded_plugin_has_no_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("A2A_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(SystemExit) as exited:
        main(["test-plugin-hello", "Ada"])
    assert exited.value.code == 2
    assert "invalid choice: 'test-plugin-hello'" in capsys.readouterr().err


class Clash:
    @hookimpl
    def a2a_cli_commands(self, commands: Any) -> None:
        commands.add_parser("send")


def test_a_plugin_taking_a_built_in_name_is_one_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    get_plugin_manager().register(Clash(), name="clash")
    assert main(["test-plugin-hello", "Ada"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("a2a: error: a2a plugin 'clash' adds a command that exists")
    assert "send" in err
