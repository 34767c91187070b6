"""Human output: cards, tasks, messages, stream events and a progress indicator.

Everything the agent sends is untrusted text: control and invisible
characters are removed before it reaches the terminal (an agent must not be
able to move the cursor or rewrite the screen). Colours and the progress
indicator appear only on a terminal (and colours not with ``NO_COLOR``);
piped output is plain and stable.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
import unicodedata
from collections.abc import AsyncGenerator, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ..types import AgentCard, Artifact, Message, Part, StreamEvent, Task, TaskState

__all__ = ["Console", "Renderer", "json_line", "safe_text", "state_label"]

_KEEP = frozenset("\n\t")
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_COLORS = {
    "TASK_STATE_COMPLETED": "32",
    "TASK_STATE_FAILED": "31",
    "TASK_STATE_REJECTED": "31",
    "TASK_STATE_CANCELED": "33",
    "TASK_STATE_INPUT_REQUIRED": "35",
    "TASK_STATE_AUTH_REQUIRED": "35",
}
_DATA_INLINE = 200
_TEXT_COLUMN = 48


def safe_text(text: str | None, *, single_line: bool = False) -> str:
    """``text`` without control, format or invisible characters (newlines and tabs kept)."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    if not text.isascii() or not text.isprintable():
        text = "".join(
            ch for ch in text if ch in _KEEP or unicodedata.category(ch)[0] != "C"
        ).replace("\u2028", "\n")
    if single_line:
        text = " ".join(text.split())
    return text


def state_label(state: TaskState | str) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` -> ``input-required``."""
    return str(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def json_line(value: Any) -> str:
    """One compact JSON document (models serialized by their wire names)."""
    from ..wire import dumps

    return dumps(value).decode()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _can_encode(stream: TextIO, text: str) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Console:
    """Where human output goes: tracks the cursor column, draws the progress indicator.

    ``progress`` and ``color`` default to whether ``stream`` is a terminal
    (colour also needs ``NO_COLOR`` unset).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        color: bool | None = None,
        progress: bool | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        tty = _isatty(self.stream)
        self.color = color if color is not None else tty and not os.environ.get("NO_COLOR")
        self.progress_enabled = progress if progress is not None else tty
        self.unicode = _can_encode(self.stream, "●─" + _SPINNER)
        self.at_line_start = True
        self._spinner_drawn = False
        self._spinner_label: str | None = None

    # -- writing ----------------------------------------------------------------------
    def write(self, text: str) -> None:
        """Write ``text`` as it is (no newline added)."""
        if not text:
            return
        self._clear_spinner()
        self.stream.write(text)
        self.stream.flush()
        self.at_line_start = text.endswith("\n")

    def end_line(self) -> None:
        """Finish a line left open by streamed text."""
        if not self.at_line_start:
            self.write("\n")

    def line(self, text: str = "") -> None:
        """Write ``text`` on a line of its own."""
        self.end_line()
        self.write(text + "\n")

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code else text

    def dim(self, text: str) -> str:
        return self.style(text, "2")

    def bold(self, text: str) -> str:
        return self.style(text, "1")

    @property
    def dot(self) -> str:
        return "●" if self.unicode else "*"

    # -- progress ---------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def progress(self, label: str) -> AsyncGenerator[None]:
        """Show a spinner with ``label`` while the block runs (terminals only)."""
        if not self.progress_enabled:
            yield
            return
        import asyncio  # here: a one-shot command without a terminal never starts a loop

        self._spinner_label = label
        task = asyncio.get_running_loop().create_task(self._spin())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self._spinner_label = None
            self._clear_spinner()

    async def _spin(self) -> None:
        import asyncio

        started = time.monotonic()
        frames = _SPINNER if self.unicode else "|/-\\"
        i = 0
        while True:
            label = self._spinner_label
            if label is not None and self.at_line_start:
                elapsed = time.monotonic() - started
                frame = frames[i % len(frames)]
                self.stream.write(f"\r{self.dim(f'{frame} {label} {elapsed:.0f}s')}\x1b[K")
                self.stream.flush()
                self._spinner_drawn = True
                i += 1
            await asyncio.sleep(0.1)

    def _clear_spinner(self) -> None:
        if self._spinner_drawn:
            self.stream.write("\r\x1b[K")
            self._spinner_drawn = False


class Renderer:
    """Turns A2A results and events into readable lines on a ``Console``.

    ``url`` and the continuation commands it prints are how the user typed
    them, so that they can be copied. ``quiet`` prints only the answer's
    content (no states, ids or hints).
    """

    def __init__(self, console: Console, url: str, *, quiet: bool = False) -> None:
        self.console = console
        self.url = url
        self.quiet = quiet
        self._artifact_headers: set[str] = set()
        self._shown_text: dict[str, str] = {}
        """What each streamed artifact showed so far (its closing update may repeat it)."""
        self._open_artifact: str | None = None
        self._shown_task: str | None = None
        self._last_state: str | None = None

    # -- building blocks --------------------------------------------------------------
    def _state_line(self, state: TaskState, detail: str = "") -> str:
        c = self.console
        label = c.style(c.dot, _COLORS.get(str(state), "36")) + " " + c.bold(state_label(state))
        return label + detail

    def _ids(self, task_id: str, context_id: str) -> str:
        ids = f"task {task_id}" + (f", context {context_id}" if context_id else "")
        return " " + self.console.dim(f"({ids})")

    def part_text(self, part: Part) -> str:
        """A part as text: its text, compact JSON for data, a one-line summary for files."""
        if part.text is not None:
            return safe_text(part.text)
        if part.data is not None:
            body = json.dumps(part.data, ensure_ascii=False, separators=(",", ":"))
            if len(body) > _DATA_INLINE:
                body = json.dumps(part.data, ensure_ascii=False, indent=2)
            return "data: " + safe_text(body)
        details = [d for d in (part.media_type, _size(part.raw)) if d]
        where = part.filename or (part.url if part.url is not None else "(inline)")
        suffix = f" ({', '.join(safe_text(d, single_line=True) for d in details)})"
        return "file: " + safe_text(where, single_line=True) + (suffix if details else "")

    def parts_text(self, parts: Iterable[Part]) -> str:
        pieces: list[str] = []
        for part in parts:
            text = self.part_text(part)
            if part.text is None and pieces and not pieces[-1].endswith("\n"):
                text = "\n" + text
            pieces.append(text)
        return "".join(pieces)

    def _artifact_header(self, artifact: Artifact) -> str:
        name = safe_text(artifact.name or artifact.artifact_id, single_line=True)
        desc = safe_text(artifact.description, single_line=True)
        header = self.console.style(f"[{name}]", "36")
        return header + (" " + self.console.dim(desc) if desc else "")

    # -- whole objects ----------------------------------------------------------------
    def message(self, message: Message) -> None:
        """A direct message reply: its content."""
        self.console.line(self.parts_text(message.parts))

    def task(self, task: Task, *, history: bool = False) -> None:
        """A task: its state and ids, its status message, artifacts, history and hints."""
        c = self.console
        state = task.status.state
        status_message = task.status.message
        if self.quiet:
            if state.is_interrupted and status_message is not None:
                c.line(self.parts_text(status_message.parts))
            for artifact in task.artifacts:
                c.line(self.parts_text(artifact.parts))
            return
        c.line(self._state_line(state) + self._ids(task.id, task.context_id))
        shown = {artifact.artifact_id for artifact in task.artifacts}
        if (
            status_message is not None
            and not state.is_interrupted
            and _repeats(status_message) not in shown
        ):
            c.line(self.parts_text(status_message.parts))
        for artifact in task.artifacts:
            c.line(self._artifact_header(artifact))
            c.line(self.parts_text(artifact.parts))
        if history and task.history:
            count = len(task.history)
            c.line(c.dim(f"History ({count} message{'' if count == 1 else 's'}):"))
            for item in task.history:
                role = "agent" if str(item.role) == "ROLE_AGENT" else "user"
                c.line(f"  {c.bold(role)}: " + self.parts_text(item.parts).replace("\n", "\n    "))
        self.hints(task)

    def result(self, result: Task | Message, *, history: bool = False) -> None:
        from ..types import Task

        if isinstance(result, Task):
            self.task(result, history=history)
        else:
            self.message(result)

    def hints(self, task: Task) -> None:
        """How to go on from a task that waits for the user."""
        if self.quiet:
            return
        c = self.console
        state = str(task.status.state)
        question = task.status.message
        text = safe_text(question.text if question is not None else "")
        url = shlex.quote(self.url)
        if state == "TASK_STATE_INPUT_REQUIRED":
            c.line(f"The agent needs input: {text or '(no question given)'}")
            command = f'a2a send {url} "<answer>" --task-id {shlex.quote(task.id)}'
            if task.context_id:
                command += f" --context-id {shlex.quote(task.context_id)}"
            c.line(f"Continue with: {command}")
        elif state == "TASK_STATE_AUTH_REQUIRED":
            c.line(f"The agent needs authentication: {text or '(no details given)'}")
            c.line(
                "Authenticate as the agent asks, then follow the task with: "
                f"a2a subscribe {url} {shlex.quote(task.id)}"
            )
        elif state in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            c.line(
                f"Follow it with: a2a subscribe {url} {shlex.quote(task.id)}"
                f"  (or: a2a get {url} {shlex.quote(task.id)})"
            )

    # -- streams ----------------------------------------------------------------------
    def event(self, event: StreamEvent) -> None:
        """One stream event, as it arrives: artifact text is written without a newline
        until its last chunk, so streamed text reads as it is produced."""
        from ..types import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

        c = self.console
        if isinstance(event, TaskArtifactUpdateEvent):
            self._artifact_event(event)
            return
        self._close_artifact()
        if isinstance(event, Message):
            self.message(event)
        elif isinstance(event, Task):
            self._task_event(event)
        elif isinstance(event, TaskStatusUpdateEvent):  # pyright: ignore[reportUnnecessaryIsInstance]
            state = event.status.state
            message = event.status.message
            if self.quiet:
                if message is not None and state.is_interrupted:
                    c.line(self.parts_text(message.parts))
                return
            ids = ""
            if self._shown_task != event.task_id:
                self._shown_task = event.task_id
                ids = self._ids(event.task_id, event.context_id)
            text = (
                self.parts_text(message.parts)
                if message is not None
                and not state.is_interrupted
                and _repeats(message) not in self._artifact_headers
                else ""
            )
            if str(state) == self._last_state and not text and not ids:
                return
            self._last_state = str(state)
            detail = ids + (":" if text else "")
            if text and "\n" not in text:
                c.line(self._state_line(state, detail) + " " + text)
            else:
                c.line(self._state_line(state, detail))
                if text:
                    c.line(text)

    def _task_event(self, task: Task) -> None:
        c = self.console
        if self.quiet:
            for artifact in task.artifacts:
                if artifact.artifact_id not in self._artifact_headers:
                    self._artifact_headers.add(artifact.artifact_id)
                    c.line(self.parts_text(artifact.parts))
            return
        self._shown_task = task.id
        self._last_state = str(task.status.state)
        state = task.status.state
        c.line(self._state_line(state) + self._ids(task.id, task.context_id))
        message = task.status.message
        if (
            message is not None
            and not state.is_interrupted
            and _repeats(message) not in {a.artifact_id for a in task.artifacts}
        ):
            c.line(self.parts_text(message.parts))
        for artifact in task.artifacts:
            if artifact.artifact_id in self._artifact_headers:
                continue
            self._artifact_headers.add(artifact.artifact_id)
            c.line(self._artifact_header(artifact))
            c.line(self.parts_text(artifact.parts))

    def _artifact_event(self, event: Any) -> None:
        from ..types import TaskArtifactUpdateEvent

        assert isinstance(event, TaskArtifactUpdateEvent)
        c = self.console
        artifact = event.artifact
        key = artifact.artifact_id
        text = self.parts_text(artifact.parts)
        if self._open_artifact is not None and self._open_artifact != key:
            self._close_artifact()
        if not event.append and event.last_chunk and self._shown_text.get(key) == text:
            self._close_artifact()  # the closing update repeats what streamed: shown already
            return
        if key not in self._artifact_headers or not event.append:
            self._artifact_headers.add(key)
            self._shown_text[key] = ""
            if not self.quiet:
                c.line(self._artifact_header(artifact))
            else:
                c.end_line()
        self._open_artifact = key
        self._shown_text[key] = self._shown_text.get(key, "") + text
        c.write(text)
        if event.last_chunk:
            self._close_artifact()

    def _close_artifact(self) -> None:
        if self._open_artifact is not None:
            self._open_artifact = None
            self.console.end_line()

    def finish(self) -> None:
        """End of a stream: close any line left open."""
        self._close_artifact()
        self.console.end_line()

    # -- cards and lists --------------------------------------------------------------
    def card(self, card: AgentCard) -> None:
        """The card as a readable summary (text cleaned: it comes from the agent)."""
        from ..client import sanitize_card

        c = self.console
        card = sanitize_card(card)
        one = _one_line
        c.line(c.bold(one(card.name)) + " " + c.dim(f"version {one(card.version)}"))
        if card.description:
            c.line(safe_text(card.description))
        c.line()
        rows: list[tuple[str, str]] = []
        if card.provider is not None:
            rows.append(
                ("Provider", f"{one(card.provider.organization)} ({one(card.provider.url)})")
            )
        if card.documentation_url:
            rows.append(("Documentation", one(card.documentation_url)))
        caps = card.capabilities
        offered = [
            name
            for name, on in (
                ("streaming", caps.streaming),
                ("push notifications", caps.push_notifications),
                ("extended card", caps.extended_agent_card),
            )
            if on
        ]
        rows.append(("Capabilities", ", ".join(offered) or "none"))
        for extension in caps.extensions:
            required = " (required)" if extension.required else ""
            rows.append(("Extension", one(extension.uri) + required))
        for name, scheme in card.security_schemes.items():
            rows.append(("Security", f"{one(name)}: {_scheme_summary(scheme)}"))
        rows.append(("Input modes", ", ".join(one(m) for m in card.default_input_modes) or "-"))
        rows.append(("Output modes", ", ".join(one(m) for m in card.default_output_modes) or "-"))
        width = max(len(label) for label, _ in rows) + 2
        for label, value in rows:
            c.line(f"{label + ':':<{width}}{value}")
        c.line()
        c.line(c.bold("Interfaces:"))
        if not card.supported_interfaces:
            c.line("  (none)")
        bindings = [one(i.protocol_binding) for i in card.supported_interfaces] or [""]
        bwidth = max(len(b) for b in bindings)
        for iface in card.supported_interfaces:
            tenant = f"  tenant {one(iface.tenant)}" if iface.tenant else ""
            c.line(
                f"  {one(iface.protocol_binding):<{bwidth}}  {one(iface.protocol_version):<4}"
                f"  {one(iface.url)}{tenant}"
            )
        c.line()
        c.line(c.bold(f"Skills ({len(card.skills)}):") if card.skills else c.bold("Skills: none"))
        for skill in card.skills:
            c.line(f"  {c.bold(one(skill.name))} " + c.dim(f"[{one(skill.id)}]"))
            if skill.description:
                c.line("    " + safe_text(skill.description).replace("\n", "\n    "))
            if skill.tags:
                c.line("    tags: " + ", ".join(one(t) for t in skill.tags))
            for example in skill.examples:
                c.line("    example: " + one(example))

    def task_table(self, tasks: Sequence[Task]) -> None:
        """Tasks as a table: id, state, when the status was set, a glimpse of the text."""
        from ..client import text_of

        c = self.console
        if not tasks:
            c.line("No tasks.")
            return
        rows = [
            (
                t.id,
                state_label(t.status.state),
                _when(t.status.timestamp),
                _glimpse(text_of(t)),
            )
            for t in tasks
        ]
        header = ("TASK", "STATE", "UPDATED", "TEXT")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]

        def cells(row: tuple[str, str, str, str]) -> str:
            padded = [value.ljust(width) for value, width in zip(row, widths, strict=False)]
            return "  ".join([*padded, row[3]]).rstrip()

        c.line(c.bold(cells(header)))
        for row in rows:
            c.line(cells(row))


def _when(moment: datetime | None) -> str:
    """A status timestamp to the second, in UTC."""
    if moment is None:
        return "-"
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _repeats(message: Message | None) -> str | None:
    """The artifact a status message repeats (the server's copy of the answer), else None."""
    from ..types._messages import repeats_artifact

    return repeats_artifact(message)


def _one_line(text: str | None) -> str:
    return safe_text(text, single_line=True)


def _glimpse(text: str) -> str:
    line = safe_text(text, single_line=True)
    return line if len(line) <= _TEXT_COLUMN else line[: _TEXT_COLUMN - 1] + "…"


def _size(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    size = float(len(raw))
    for unit in ("bytes", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return None  # pragma: no cover - the loop always returns


def _scheme_summary(scheme: Any) -> str:
    http = scheme.http_auth_security_scheme
    if http is not None:
        return f"HTTP {_one_line(http.scheme)}"
    key = scheme.api_key_security_scheme
    if key is not None:
        return f"API key in {_one_line(key.location)} {_one_line(key.name)!r}"
    if scheme.oauth2_security_scheme is not None:
        return "OAuth 2.0"
    if scheme.open_id_connect_security_scheme is not None:
        return "OpenID Connect"
    if scheme.mtls_security_scheme is not None:
        return "mutual TLS"
    return "unknown scheme"
