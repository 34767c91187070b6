"""A2A parts <-> MCP content, both ways.

Tool arguments become one A2A message: ``text`` a text part, the skill's
data fields and ``data`` one data part, ``files`` file parts (bytes or a
URL). An answer's parts become a tool result: text parts text content, data
parts ``structuredContent`` (and their JSON as text, for hosts that read
only text), images and audio their MCP content, other files embedded
resources, and files over ``large_file_bytes`` resource links the host
reads back through ``resources/read`` from a bounded ``FileShelf``. A file
the agent gave by URL is a resource link to that URL.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote

from a2a_core import Message, Part, Role, new_id
from mcp import types
from pydantic import AnyUrl

__all__ = [
    "DEFAULT_LARGE_FILE_BYTES",
    "FileShelf",
    "ToolInputError",
    "message_from_arguments",
    "parts_to_content",
    "structured_of",
]

DEFAULT_LARGE_FILE_BYTES = 512 * 1024
"""Files larger than this are resource links rather than inline content."""

SHELF_URI = "a2a-file"
"""The URI scheme of the large files a bridge keeps for ``resources/read``."""


class ToolInputError(ValueError):
    """The tool's arguments cannot make a message (bad base64, no content...)."""


def _file_part(item: object, index: int) -> Part:
    if not isinstance(item, Mapping):
        raise ToolInputError(f"files[{index}] must be an object with data or uri")
    spec = cast(Mapping[str, Any], item)
    name = spec.get("name")
    mime = spec.get("mimeType") or spec.get("mime_type")
    filename = str(name) if name else None
    media_type = str(mime) if mime else None
    if spec.get("data") is not None:
        try:
            raw = base64.b64decode(str(spec["data"]), validate=True)
        except (binascii.Error, ValueError):
            raise ToolInputError(f"files[{index}].data is not base64") from None
        return Part(raw=raw, filename=filename, media_type=media_type)
    if spec.get("uri"):
        return Part(url=str(spec["uri"]), filename=filename, media_type=media_type)
    raise ToolInputError(f"files[{index}] needs data (base64) or uri")


def message_from_arguments(
    arguments: Mapping[str, Any],
    *,
    data_fields: Sequence[str] = (),
    skill_id: str | None = None,
) -> Message:
    """The A2A message a tool call sends (``task_id`` is not part of it: the caller uses it)."""
    parts: list[Part] = []
    text = arguments.get("text")
    if text is not None and str(text) != "":
        parts.append(Part(text=str(text)))
    data: dict[str, Any] = {}
    given = arguments.get("data")
    if isinstance(given, Mapping):
        data.update(cast(Mapping[str, Any], given))
    elif given is not None:
        raise ToolInputError("data must be an object")
    data.update({k: arguments[k] for k in data_fields if arguments.get(k) is not None})
    if data:
        parts.append(Part(data=data))
    files = arguments.get("files") or []
    if not isinstance(files, list):
        raise ToolInputError("files must be a list")
    parts.extend(_file_part(item, i) for i, item in enumerate(cast(list[object], files)))
    if not parts:
        raise ToolInputError("give text, data or files to send")
    metadata = {"skillId": skill_id} if skill_id else None
    return Message(message_id=new_id(), role=Role.USER, parts=parts, metadata=metadata)


class FileShelf:
    """The large files of recent answers, for ``resources/read`` (bounded: oldest go first)."""

    def __init__(self, max_files: int = 64, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._files: OrderedDict[str, tuple[bytes, str]] = OrderedDict()
        self._size = 0

    def put(self, data: bytes, filename: str | None, mime: str) -> str:
        """Keep ``data``; its ``a2a-file://`` URI."""
        uri = f"{SHELF_URI}://{uuid.uuid4().hex}/{quote(filename or 'file', safe='')}"
        self._files[uri] = (data, mime)
        self._size += len(data)
        while self._files and (len(self._files) > self.max_files or self._size > self.max_bytes):
            _, (old, _) = self._files.popitem(last=False)
            self._size -= len(old)
        return uri

    def get(self, uri: str) -> tuple[bytes, str] | None:
        return self._files.get(uri)


def structured_of(parts: Iterable[Part]) -> dict[str, Any] | None:
    """The answer's data parts as ``structuredContent`` (one object, or ``{"data": [...]}``)."""
    data = [p.data for p in parts if p.data is not None]
    if not data:
        return None
    if len(data) == 1 and isinstance(data[0], dict):
        return cast(dict[str, Any], data[0])
    return {"data": data}


def _file_content(part: Part, shelf: FileShelf, large: int) -> types.ContentBlock:
    mime = part.media_type or "application/octet-stream"
    name = part.filename or "file"
    if part.url is not None:
        return types.ResourceLink(
            type="resource_link", uri=AnyUrl(part.url), name=name, mimeType=mime
        )
    raw = part.raw or b""
    if len(raw) > large:
        uri = shelf.put(raw, part.filename, mime)
        return types.ResourceLink(
            type="resource_link", uri=AnyUrl(uri), name=name, mimeType=mime, size=len(raw)
        )
    blob = base64.b64encode(raw).decode("ascii")
    if mime.startswith("image/"):
        return types.ImageContent(type="image", data=blob, mimeType=mime)
    if mime.startswith("audio/"):
        return types.AudioContent(type="audio", data=blob, mimeType=mime)
    uri = f"{SHELF_URI}://inline/{quote(name, safe='')}"
    return types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri=AnyUrl(uri), mimeType=mime, blob=blob),
    )


def parts_to_content(
    parts: Iterable[Part], shelf: FileShelf, *, large_file_bytes: int = DEFAULT_LARGE_FILE_BYTES
) -> list[types.ContentBlock]:
    """MCP content for an answer's parts (data parts as their JSON text)."""
    content: list[types.ContentBlock] = []
    for part in parts:
        if part.text is not None:
            if part.text:
                content.append(types.TextContent(type="text", text=part.text))
        elif part.data is not None:
            text = json.dumps(part.data, ensure_ascii=False)
            content.append(types.TextContent(type="text", text=text))
        else:
            content.append(_file_content(part, shelf, large_file_bytes))
    return content
