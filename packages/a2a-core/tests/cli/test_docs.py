"""docs/cli.md keeps up with the parser: every command, every option, every exit status."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from a2a_core.cli import ExitCode, build_parser

DOC = Path(__file__).resolve().parents[4] / "docs" / "cli.md"


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            return dict(action.choices)  # pyright: ignore[reportUnknownArgumentType]
    raise AssertionError("no sub-commands")


def test_every_command_and_option_is_documented() -> None:
    text = DOC.read_text()
    found = commands()
    assert sorted(found) == [
        "cancel",
        "card",
        "get",
        "list",
        "playground",
        "plugins",
        "send",
        "serve",
        "subscribe",
    ]
    for name, parser in found.items():
        assert f"a2a {name}" in text, name
        for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    pattern = rf"(?<![\w-]){re.escape(option)}(?![\w-])"
                    assert re.search(pattern, text), (name, option)


def test_every_exit_status_is_documented() -> None:
    text = DOC.read_text()
    table = dict(re.findall(r"^\| (\d+) \| (.+) \|$", text, flags=re.MULTILINE))
    assert sorted(int(code) for code in table) == sorted(int(code) for code in ExitCode)


def test_store_help_names_the_built_in_stores() -> None:
    """``--store`` help lists the stores the core brings, not only "plugins" (they are built in)."""
    from a2a_core.store_registry import registered_task_stores

    built_in = {
        scheme
        for scheme, found in registered_task_stores().items()
        if found.plugin.startswith("a2a_core.")
    }
    # A new one: name it in the help.
    assert built_in == {"memory", "sqlite", "redis", "rediss", "postgresql", "postgres"}
    text = " ".join(commands()["serve"].format_help().split())
    for url in ("memory://", "sqlite:///tasks.db", "redis://host:6379/0", "postgresql://"):
        assert url in text
    assert "others come from plugins" not in text


def test_get_history_documents_its_optional_number() -> None:
    text = " ".join(commands()["get"].format_help().split())
    assert "--history [N]" in text
    assert "all of them, or the last N" in text
    assert "[--history [N]]" in DOC.read_text()
