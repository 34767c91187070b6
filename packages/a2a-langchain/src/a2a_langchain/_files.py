"""Files in and out of a served runnable: accepted by policy, found in tool results.

In: the message's file parts are checked against the agent's ``FilePolicy``
(size, count, media types) before anything runs; with ``file_blocks="base64"``
files given by URL are downloaded first (bounded, through the SSRF URL
policy), so the model gets their bytes. The conversion to content blocks is
``_convert``'s.

Out: a tool's result may carry files: image or file content blocks in a
``ToolMessage``'s content, or an artifact that is bytes, a ``Part``, a
content block or a list of them. They join the answer artifact as file parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from a2a_core.client.files import fetch_part
from a2a_core.files import FilePolicy, FileRefusedError, is_file
from a2a_core.types import Message, Part
from langchain_core.messages import ToolMessage

from ._convert import block_part

__all__ = ["DEFAULT_FILE_POLICY", "FileBlocks", "accept_files", "files_in", "with_files"]

FileBlocks = Literal["auto", "base64"]

DEFAULT_FILE_POLICY = FilePolicy()
"""Images, audio, video, text, PDF and JSON/XML/YAML files up to 10 MiB, 16 per message."""


async def accept_files(
    message: Message, policy: FilePolicy | None, blocks: FileBlocks, url_policy: Any = None
) -> Message:
    """``message`` once its files pass ``policy`` (URL files downloaded for ``base64``)."""
    if not any(is_file(p) for p in message.parts):
        return message
    if policy is not None:
        policy.check(message.parts)
    if blocks != "base64" or not any(p.url is not None for p in message.parts):
        return message
    limit = policy.max_bytes if policy is not None else DEFAULT_FILE_POLICY.max_bytes
    parts: list[Part] = []
    for part in message.parts:
        if part.url is None:
            parts.append(part)
            continue
        label = part.filename or part.url.split("?", 1)[0].rsplit("/", 1)[-1] or "file"
        try:
            fetched = await fetch_part(
                part,
                own_origin=None,
                max_bytes=limit,
                allowed_origins=("*",),
                url_policy=url_policy,
            )
        except FileRefusedError as exc:
            raise FileRefusedError(f"File {label!r} could not be fetched: {exc}.") from None
        parts.append(fetched)
    if policy is not None:
        policy.check(parts)
    return message.model_copy(update={"parts": parts})


def _artifact_parts(value: Any, depth: int = 0) -> list[Part]:
    if depth > 4 or value is None:
        return []
    if isinstance(value, Part):
        return [value] if is_file(value) else []
    if isinstance(value, bytes | bytearray):
        return [Part(raw=bytes(value), media_type="application/octet-stream")]
    if isinstance(value, Mapping):
        found = block_part(cast(Mapping[str, Any], value))
        return [found] if found is not None else []
    if isinstance(value, list | tuple):
        items = cast(Sequence[Any], value)
        return [p for item in items for p in _artifact_parts(item, depth + 1)]
    return []


def files_in(output: Any) -> list[Part]:
    """The files a tool returned: file blocks of its message content, file artifacts."""
    if not isinstance(output, ToolMessage):
        return _artifact_parts(output) if isinstance(output, list | Part | bytes) else []
    found: list[Part] = []
    content: Any = output.content
    if isinstance(content, list):
        for block in cast(list[Any], content):
            if isinstance(block, Mapping):
                part = block_part(cast(Mapping[str, Any], block))
                if part is not None:
                    found.append(part)
    found.extend(_artifact_parts(output.artifact))
    return found


def _key(part: Part) -> Any:
    if part.raw is not None:
        return ("raw", hash(part.raw), len(part.raw))
    return ("url", part.url)


def with_files(parts: list[Part], files: Sequence[Part]) -> list[Part]:
    """The answer's parts, then the tools' files it does not already hold."""
    seen = {_key(p) for p in parts if is_file(p)}
    out = list(parts)
    for part in files:
        key = _key(part)
        if key not in seen:
            seen.add(key)
            out.append(part)
    return out
