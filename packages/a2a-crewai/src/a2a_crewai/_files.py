"""Files in and out of a served crew.

In: the message's files pass the agent's ``FilePolicy`` (else the task fails
with the reason), then each raw file is saved into a private folder of the
run, and the crew learns of them three ways:

- the kickoff text lists them (name, media type, size, saved path), or a
  ``{files}`` placeholder receives that list;
- with ``file_tool`` on, every agent of the run's crew copy gets
  ``InputFileTool`` (``read_input_file``, in ``_file_tool``), which reads a file of the current
  request by name (text as text, other files described by type, size, path);
- when CrewAI's own file support is installed (``a2a-crewai[files]``, that
  is ``crewai[file-processing]``, which brings ``crewai_files``) and every
  agent's model is multimodal (``llm.supports_multimodal()``), they are also
  given as the kickoff's ``input_files``: CrewAI puts the types the model's
  provider takes (images, and PDFs for some) into the model's messages as
  content blocks, and gives the others a ``read_file`` tool. A text-only
  model would fail the run on them, so it never gets them this way.

Files given by URL are listed with their URL (a crew's tools may fetch them).
The folder is removed when the run ends.

Out: a task's ``output_file`` (written by CrewAI before the task completes)
becomes a file part of that task's artifact (and of ``result`` for the last
task), read up to ``MAX_OUTPUT_FILE_BYTES``. Each run writes its output
files into a folder of its own (``redirect_outputs``): two requests running
the same crew at once never read each other's ``report.md``. The folder is
private and removed when the run ends, or, with the agent's ``output_dir``,
``output_dir/<task id>/`` and kept.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a_core.files import FilePolicy, media_type_of, safe_filename, save_part
from a2a_core.types import Message, Part

__all__ = [
    "DEFAULT_FILE_POLICY",
    "MAX_OUTPUT_FILE_BYTES",
    "OutputFolder",
    "ReceivedFiles",
    "output_file_part",
    "receive_files",
    "redirect_outputs",
]

logger = logging.getLogger("a2a_crewai")

DEFAULT_FILE_POLICY = FilePolicy()
"""Images, audio, video, text, PDF and JSON/XML/YAML files up to 10 MiB, 16 per message."""

MAX_OUTPUT_FILE_BYTES = 32 * 1024 * 1024
"""The largest ``output_file`` sent back as a file part."""


class ReceivedFiles:
    """The files of one request, saved in a private folder."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.paths: dict[str, Path] = {}
        self.media: dict[str, str] = {}
        self.urls: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.paths or self.urls)

    def listing(self) -> str:
        """The files as lines for the crew to read."""
        lines = ["Attached files:"]
        for name, path in self.paths.items():
            size = path.stat().st_size
            lines.append(f"- {name} ({self.media[name]}, {size} bytes), saved at {path}")
        for name, url in self.urls.items():
            lines.append(f"- {name} ({self.media[name]}), at {url}")
        return "\n".join(lines)

    def input_files(self, agents: Sequence[Any]) -> dict[str, Any] | None:
        """The files for ``kickoff(input_files=...)``, or None.

        Only when CrewAI's file support is installed and every agent's model takes
        multimodal input: CrewAI attaches kickoff files to every agent's messages, and
        a text-only model then fails the run ("does not support multimodal input").
        """
        if not self.paths or not agents or not all(_multimodal(a) for a in agents):
            return None
        try:
            from crewai_files import (  # pyright: ignore[reportMissingImports]
                File,  # pyright: ignore[reportUnknownVariableType]
                FileBytes,  # pyright: ignore[reportUnknownVariableType]
            )
        except ImportError:
            return None
        return {
            name: File(source=FileBytes(data=path.read_bytes(), filename=name))
            for name, path in self.paths.items()
        }

    def cleanup(self) -> None:
        """Remove the folder (the run ended)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _multimodal(agent: Any) -> bool:
    """Whether the agent's model says it takes images and files (``supports_multimodal``)."""
    check = getattr(getattr(agent, "llm", None), "supports_multimodal", None)
    try:
        return bool(check()) if callable(check) else False
    except Exception:
        return False


def receive_files(message: Message, policy: FilePolicy | None) -> ReceivedFiles:
    """Check ``message``'s files against ``policy`` (``FileRefusedError``), then save them."""
    files = ReceivedFiles()
    file_parts = [p for p in message.parts if p.raw is not None or p.url is not None]
    if not file_parts:
        return files
    if policy is not None:
        policy.check(message.parts)
    for index, part in enumerate(file_parts, start=1):
        media = media_type_of(part)
        if part.raw is None:
            name = part.filename or f"file-{index}"
            files.urls[name] = str(part.url)
            files.media[name] = media
            continue
        if files.folder is None:
            files.folder = Path(tempfile.mkdtemp(prefix="a2a-crewai-files-"))
        path = save_part(part, files.folder)
        files.paths[path.name] = path
        files.media[path.name] = media
    return files


class OutputFolder:
    """Where one run's tasks write their ``output_file``; removed at the end unless kept."""

    def __init__(self, path: Path, keep: bool) -> None:
        self.path = path
        self.keep = keep

    def cleanup(self) -> None:
        """Remove the folder (the run ended), unless it is to be kept."""
        if not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)


def redirect_outputs(
    tasks: Sequence[Any], task_id: str, output_dir: str | os.PathLike[str] | None
) -> OutputFolder | None:
    """Point the ``output_file`` of a crew copy's tasks into a folder of this run.

    ``reports/{topic}.md`` becomes ``<folder>/reports/{topic}.md`` (CrewAI fills the
    placeholders later, from this path). The folder is private and temporary, or
    ``output_dir/<task id>`` when ``output_dir`` is given. None when no task writes a file.
    """
    writers = [
        t for t in tasks if isinstance(getattr(t, "output_file", None), str) and t.output_file
    ]
    if not writers:
        return None
    if output_dir is None:
        folder = OutputFolder(Path(tempfile.mkdtemp(prefix="a2a-crewai-out-")), keep=False)
    else:
        path = Path(output_dir).expanduser().resolve() / safe_filename(task_id, "task")
        path.mkdir(parents=True, exist_ok=True)
        folder = OutputFolder(path, keep=True)
    for task in writers:
        # CrewAI already refused ".." and strips the leading "/" of a plain path; a
        # templated one keeps it: either way the file lands inside the run's folder.
        target = str(folder.path / task.output_file.lstrip("/"))
        task.output_file = target
        if getattr(task, "_original_output_file", None) is not None:
            task._original_output_file = target  # the template CrewAI fills
    return folder


def output_file_part(task: Any) -> Part | None:
    """The file a finished task wrote (``output_file``) as a file part, if any."""
    name = getattr(task, "output_file", None)
    if not isinstance(name, str) or not name:
        return None
    path = Path(name).expanduser()
    try:
        size = path.stat().st_size
        if size > MAX_OUTPUT_FILE_BYTES:
            logger.warning("output file %s is %d bytes: not sent back", path, size)
            return None
        data = path.read_bytes()
    except OSError as exc:
        logger.warning("output file %s could not be read: %r", path, exc)
        return None
    media = mimetypes.guess_type(path.name)[0] or "text/plain"
    return Part(raw=data, filename=path.name, media_type=media)
