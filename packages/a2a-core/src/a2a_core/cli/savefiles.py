"""``--save-dir``: the files of an answer, saved to a folder, each saved path printed.

Files the agent answered inline are written as they are; files it answered
by URL are downloaded first (``A2AClient.download``: the agent's own origin
only, within the size limit). A file that cannot be fetched is reported and
skipped; names are made safe and never overwrite an existing file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import FileRefusedError, file_parts, save_part
from ..types import Message, Part, Task

if TYPE_CHECKING:
    from ..client import A2AClient

__all__ = ["answer_files", "save_answer_files"]


def answer_files(result: Task | Message | None) -> list[Part]:
    """The file parts of an answer: a task's artifacts and status message, or a reply."""
    if result is None:
        return []
    if isinstance(result, Message):
        return file_parts(result.parts)
    parts = [p for artifact in result.artifacts for p in artifact.parts]
    if result.status.message is not None:
        parts.extend(result.status.message.parts)
    return file_parts(parts)


async def save_answer_files(
    client: A2AClient, result: Task | Message | None, directory: str
) -> list[Path]:
    """Save the answer's files into ``directory``; print where each went (stderr)."""
    saved: list[Path] = []
    for part in answer_files(result):
        try:
            whole = await client.download(part)
        except FileRefusedError as exc:
            label = part.filename or part.url or "file"
            print(f"a2a: not saved {label}: {exc}", file=sys.stderr)
            continue
        path = save_part(whole, directory)
        saved.append(path)
        size = len(whole.raw or b"")
        print(f"a2a: saved {path} ({whole.media_type or 'file'}, {size} bytes)", file=sys.stderr)
    return saved
