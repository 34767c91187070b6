"""File parts for agents and adapters: what an agent accepts, and files to and from disk.

An A2A file part carries its bytes (``raw``) or points at them (``url``). An
agent that hands files to a model or a crew should bound what it takes:
``FilePolicy`` says how large a file may be, how many a message may carry and
which media types are accepted, and ``FilePolicy.check`` names the first
file that breaks a rule (``FileRefusedError``, whose text is safe to show
the client). The adapters fail the task with that text.

``part_from_path`` / ``part_from_bytes`` make file parts (media type guessed
from the name), ``save_part`` writes a received file into a folder under a
safe, unique name, and ``media_type_of`` / ``file_parts`` answer the usual
questions about parts.
"""

from __future__ import annotations

import fnmatch
import mimetypes
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .types import Part

__all__ = [
    "DEFAULT_MEDIA_TYPES",
    "FilePolicy",
    "FileRefusedError",
    "file_parts",
    "is_file",
    "media_type_of",
    "part_from_bytes",
    "part_from_path",
    "parts_from_paths",
    "safe_filename",
    "save_part",
]

DEFAULT_MEDIA_TYPES: tuple[str, ...] = (
    "image/*",
    "audio/*",
    "video/*",
    "text/*",
    "application/pdf",
    "application/json",
    "application/xml",
    "application/yaml",
)
"""What a ``FilePolicy`` accepts by default: media a chat model or a crew can read."""

_OCTET = "application/octet-stream"
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


class FileRefusedError(ValueError):
    """A file part breaks a ``FilePolicy`` rule; the text says which file and why."""


def is_file(part: Part) -> bool:
    """Whether ``part`` is a file (``raw`` bytes or a ``url``)."""
    return part.raw is not None or part.url is not None


def file_parts(parts: Iterable[Part]) -> list[Part]:
    """The file parts among ``parts``, in order."""
    return [p for p in parts if is_file(p)]


def media_type_of(part: Part) -> str:
    """The part's media type: as given, else guessed from its filename or URL, else octet-stream."""
    if part.media_type:
        return part.media_type.split(";", 1)[0].strip().lower()
    name = part.filename or (part.url.split("?", 1)[0] if part.url else "")
    guessed = mimetypes.guess_type(name)[0] if name else None
    return guessed or _OCTET


def _label(part: Part, index: int) -> str:
    return repr(part.filename) if part.filename else f"number {index}"


@dataclass(frozen=True, slots=True)
class FilePolicy:
    """Which incoming files an agent accepts.

    - ``max_bytes``: the largest file (bytes), inline or downloaded (default 10 MiB);
    - ``max_files``: files per message;
    - ``media_types``: accepted types, ``*`` patterns allowed (``image/*``);
      a file without a type is judged by its filename, else as octet-stream;
    - ``allow_urls``: whether files given by URL are accepted at all.
    """

    max_bytes: int = 10 * 1024 * 1024
    max_files: int = 16
    media_types: tuple[str, ...] = DEFAULT_MEDIA_TYPES
    allow_urls: bool = True

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.max_files <= 0:
            raise ValueError("max_bytes and max_files must be > 0")

    def accepts_type(self, media_type: str) -> bool:
        """Whether ``media_type`` is on the allow-list."""
        kind = media_type.split(";", 1)[0].strip().lower()
        return any(fnmatch.fnmatchcase(kind, pattern.lower()) for pattern in self.media_types)

    def refusal(self, part: Part, index: int = 1) -> str | None:
        """Why ``part`` is refused (a sentence naming it), or None when it is accepted."""
        if not is_file(part):
            return None
        label = _label(part, index)
        media = media_type_of(part)
        if not self.accepts_type(media):
            allowed = ", ".join(self.media_types)
            return (
                f"File {label} has media type {media}, which this agent does not accept "
                f"(accepted: {allowed})."
            )
        if part.raw is not None and len(part.raw) > self.max_bytes:
            return (
                f"File {label} is {len(part.raw)} bytes; "
                f"this agent accepts files up to {self.max_bytes} bytes."
            )
        if part.url is not None and not self.allow_urls:
            return (
                f"File {label} is given by URL; this agent accepts files only inline (raw bytes)."
            )
        return None

    def check(self, parts: Sequence[Part]) -> None:
        """Raise ``FileRefusedError`` for the first file that breaks a rule."""
        files = file_parts(parts)
        if len(files) > self.max_files:
            raise FileRefusedError(
                f"The message carries {len(files)} files; "
                f"this agent accepts at most {self.max_files}."
            )
        for index, part in enumerate(files, start=1):
            reason = self.refusal(part, index)
            if reason is not None:
                raise FileRefusedError(reason)


def part_from_bytes(
    content: bytes, filename: str | None = None, media_type: str | None = None
) -> Part:
    """A file part holding ``content`` (media type guessed from ``filename`` when not given)."""
    guessed = mimetypes.guess_type(filename)[0] if filename else None
    return Part(raw=content, filename=filename, media_type=media_type or guessed or _OCTET)


def part_from_path(path: str | Path, media_type: str | None = None) -> Part:
    """A file part with the contents of ``path`` (its name kept, its type guessed)."""
    file = Path(path)
    return part_from_bytes(file.read_bytes(), file.name, media_type)


def parts_from_paths(
    paths: Iterable[str | Path], roots: Iterable[str | Path], max_bytes: int = 32 * 1024 * 1024
) -> list[Part]:
    """File parts for local files a tool was asked to send, each inside one of ``roots``.

    A model chooses these paths, so only files under folders the application
    allowed are read (symlinks resolved first), each at most ``max_bytes``;
    anything else raises ``FileRefusedError`` naming the path.
    """
    allowed = [Path(r).resolve() for r in roots]
    parts: list[Part] = []
    for given in paths:
        path = Path(given).expanduser().resolve()
        if not any(path.is_relative_to(root) for root in allowed):
            raise FileRefusedError(f"{given} is not in a folder files may be sent from")
        try:
            size = path.stat().st_size
            if not path.is_file():
                raise FileRefusedError(f"{given} is not a file")
            if size > max_bytes:
                raise FileRefusedError(f"{given} is {size} bytes, more than {max_bytes}")
            parts.append(part_from_path(path))
        except OSError as exc:
            raise FileRefusedError(f"{given} cannot be read: {exc.strerror or exc}") from None
    return parts


def safe_filename(name: str | None, fallback: str = "file") -> str:
    """A plain file name from an untrusted one: no folders, no odd characters, bounded."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip(" .")[:120]
    return base or fallback


def _extension(media_type: str) -> str:
    return mimetypes.guess_extension(media_type) or ".bin"


def save_part(part: Part, directory: str | Path, name: str | None = None) -> Path:
    """Write a raw file part into ``directory`` under a safe name that is not taken yet.

    ``name`` overrides the part's filename. A part without a name gets
    ``file`` plus an extension for its media type. Never overwrites a file.
    """
    if part.raw is None:
        raise ValueError("only a part with raw bytes can be saved (download a URL part first)")
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    wanted = safe_filename(name or part.filename, "file" + _extension(media_type_of(part)))
    stem, dot, suffix = wanted.rpartition(".")
    if not dot:
        stem, suffix = wanted, ""
    candidate = folder / wanted
    counter = 1
    while True:
        try:
            with candidate.open("xb") as handle:
                handle.write(part.raw)
            return candidate
        except FileExistsError:
            counter += 1
            candidate = folder / (f"{stem}-{counter}.{suffix}" if suffix else f"{stem}-{counter}")
