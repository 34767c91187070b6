"""Human output without a server: cleaning agent text, streamed chunks, the progress
indicator (terminals only), colours, and the option parsers."""

from __future__ import annotations

import argparse
import asyncio
import io

import pytest
from a2a_core.cli.common import UsageError, exit_code_for, parse_header
from a2a_core.cli.render import Console, Renderer, safe_text, state_label
from a2a_core.cli.serve import parse_skill, parse_versions
from a2a_core.cli.tasks import parse_state
from a2a_core.store_registry import redact_url
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.types._messages import REPEATS_KEY


class FakeTerminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def chunk(
    text: str, *, append: bool, last: bool, artifact_id: str = "out"
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=Artifact(artifact_id=artifact_id, parts=[Part(text=text)]),
        append=append,
        last_chunk=last,
    )


def status(state: TaskState, text: str | None = None) -> TaskStatusUpdateEvent:
    message = Message.agent(text) if text is not None else None
    return TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=state, message=message)
    )


def test_agent_text_cannot_drive_the_terminal() -> None:
    hostile = "ok\x1b[2J\x1b]0;title\x07\u202eevil\u200b\r\nnext\tline"
    assert safe_text(hostile) == "ok[2J]0;titleevil\nnext\tline"
    assert safe_text("a\nb\tc", single_line=True) == "a b c"
    assert safe_text(None) == ""


def test_streamed_chunks_stay_on_one_line_until_the_last() -> None:
    out = io.StringIO()
    renderer = Renderer(Console(out), "http://127.0.0.1:1")
    renderer.event(status(TaskState.WORKING))
    renderer.event(chunk("Hel", append=False, last=False))
    renderer.event(chunk("lo", append=True, last=False))
    assert out.getvalue().endswith("[out]\nHello")  # written as they arrive, no newline yet
    renderer.event(chunk("!", append=True, last=True))
    renderer.event(status(TaskState.COMPLETED))
    renderer.finish()
    assert out.getvalue() == "● working (task t, context c)\n[out]\nHello!\n● completed\n"


def test_a_stream_that_ends_with_the_whole_answer_shows_it_once() -> None:
    """The closing update repeats what streamed, the completed status repeats the
    answer (``whole_answers``): neither is printed again; a different end replaces."""
    out = io.StringIO()
    renderer = Renderer(Console(out), "u")
    answer = Message.agent("Hello!").model_copy(update={"metadata": {REPEATS_KEY: "out"}})
    for event in (
        chunk("Hel", append=False, last=False),
        chunk("lo!", append=True, last=False),
        chunk("Hello!", append=False, last=True),
        TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=TaskStatus(state=TaskState.COMPLETED, message=answer),
        ),
    ):
        renderer.event(event)
    renderer.finish()
    assert out.getvalue() == "[out]\nHello!\n● completed (task t, context c)\n"

    out = io.StringIO()
    renderer = Renderer(Console(out), "u")
    renderer.event(chunk("Let me look.", append=False, last=False))
    renderer.event(chunk("It is sunny.", append=False, last=True))
    renderer.finish()
    assert out.getvalue() == "[out]\nLet me look.\n[out]\nIt is sunny.\n"

    out = io.StringIO()  # a whole task: the status message that repeats it is not shown
    Renderer(Console(out), "u").task(
        Task(
            id="t",
            context_id="c",
            status=TaskStatus(state=TaskState.COMPLETED, message=answer),
            artifacts=[Artifact(artifact_id="out", parts=[Part(text="Hello!")])],
        )
    )
    assert out.getvalue().count("Hello!") == 1


def test_a_status_closes_a_chunk_left_open_and_text_is_cleaned() -> None:
    out = io.StringIO()
    renderer = Renderer(Console(out), "u")
    renderer.event(chunk("partial\x1b[31m", append=False, last=False))
    renderer.event(status(TaskState.FAILED, "boom\x07"))
    renderer.finish()
    assert out.getvalue() == "[out]\npartial[31m\n● failed (task t, context c): boom\n"


def test_quiet_prints_only_content() -> None:
    out = io.StringIO()
    renderer = Renderer(Console(out), "u", quiet=True)
    for event in (
        status(TaskState.WORKING, "thinking"),
        chunk("a", append=False, last=False),
        chunk("b", append=True, last=True),
        status(TaskState.COMPLETED),
    ):
        renderer.event(event)
    renderer.finish()
    assert out.getvalue() == "ab\n"


def test_task_hints_quote_what_the_user_copies() -> None:
    out = io.StringIO()
    task = Task(
        id="t 1",
        context_id="c1",
        status=TaskStatus(state=TaskState.AUTH_REQUIRED, message=Message.agent("Sign in")),
    )
    Renderer(Console(out), "http://h:1/a b").task(task)
    assert out.getvalue().splitlines()[1:] == [
        "The agent needs authentication: Sign in",
        "Authenticate as the agent asks, then follow the task with: "
        "a2a subscribe 'http://h:1/a b' 't 1'",
    ]


def test_history_and_message_replies() -> None:
    out = io.StringIO()
    renderer = Renderer(Console(out), "u")
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        history=[Message.user("hi"), Message.agent("hello\nthere")],
    )
    renderer.task(task, history=True)
    renderer.result(Message(message_id="m", role=Role.AGENT, parts=[Part(data={"x": 1})]))
    assert out.getvalue().splitlines()[1:] == [
        "History (2 messages):",
        "  user: hi",
        "  agent: hello",
        "    there",
        'data: {"x":1}',
    ]


def test_a_history_of_one_message_is_singular() -> None:
    out = io.StringIO()
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        history=[Message.user("hi")],
    )
    Renderer(Console(out), "u").task(task, history=True)
    assert out.getvalue().splitlines()[1:] == ["History (1 message):", "  user: hi"]


async def test_progress_only_on_a_terminal_and_cleared_before_output() -> None:
    piped = io.StringIO()
    console = Console(piped)
    async with console.progress("waiting"):
        await asyncio.sleep(0.25)
    assert piped.getvalue() == ""

    tty = FakeTerminal()
    console = Console(tty, color=False)
    assert console.progress_enabled
    async with console.progress("waiting"):
        await asyncio.sleep(0.25)
        console.line("done")
    text = tty.getvalue()
    assert "⠋ waiting 0s" in text
    assert "\r\x1b[Kdone\n" in text  # the spinner line is erased before output
    assert text.endswith("done\n") or text.endswith("\r\x1b[K")


def test_colour_on_terminals_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Console(FakeTerminal()).color
    assert not Console(io.StringIO()).color
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Console(FakeTerminal()).color
    out = FakeTerminal()
    Renderer(Console(out, color=True, progress=False), "u").event(status(TaskState.COMPLETED))
    assert out.getvalue().startswith("\x1b[32m●\x1b[0m \x1b[1mcompleted\x1b[0m")


def test_plain_ascii_terminals_get_ascii_glyphs() -> None:
    class Ascii(io.StringIO):
        encoding = "ascii"

    out = Ascii()
    Renderer(Console(out), "u").event(status(TaskState.WORKING))
    assert out.getvalue().startswith("* working")


def test_state_labels_and_exit_codes() -> None:
    assert state_label(TaskState.INPUT_REQUIRED) == "input-required"
    for state, code in [
        (TaskState.COMPLETED, 0),
        (TaskState.INPUT_REQUIRED, 0),
        (TaskState.FAILED, 1),
        (TaskState.REJECTED, 1),
        (TaskState.CANCELED, 1),
    ]:
        task = Task(id="t", status=TaskStatus(state=state))
        assert exit_code_for(task) == code
    assert exit_code_for(Message.agent("hi")) == 0


def test_option_parsers() -> None:
    assert parse_header("X-Key: a:b") == ("X-Key", "a:b")
    with pytest.raises(UsageError):
        parse_header("Bad Name: x")
    assert parse_versions("0.3, 1, 1.0.0") == ("0.3", "1.0")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_versions("2.0")
    skill = parse_skill("sum:Summarize:Summaries: short ones")
    assert (skill.id, skill.name, skill.description) == (
        "sum",
        "Summarize",
        "Summaries: short ones",
    )
    with pytest.raises(argparse.ArgumentTypeError):
        parse_skill("id:name")
    assert parse_state("input-required") is TaskState.INPUT_REQUIRED
    assert parse_state("TASK_STATE_WORKING") is TaskState.WORKING
    with pytest.raises(argparse.ArgumentTypeError):
        parse_state("done")


def test_store_urls_are_shown_without_passwords() -> None:
    assert redact_url("redis://bob:pw@cache:6379/0") == "redis://bob:***@cache:6379/0"
    assert redact_url("sqlite:///tasks.db") == "sqlite:///tasks.db"
