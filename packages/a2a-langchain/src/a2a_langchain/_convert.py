"""Between A2A parts and LangChain values: messages, content blocks, files, JSON data.

Inbound, A2A text stays text, data parts become JSON text (chat models read
text), and files become LangChain v1 standard content blocks (``image``,
``audio``, ``video``, ``text-plain``, ``file``) that chat model integrations
translate for their provider. Outbound, strings and messages become text
parts, content blocks with images or files become file parts, and anything
structured (dicts, lists, pydantic models) becomes a data part.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from a2a_core.types import Message, Part, Role
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

__all__ = [
    "PROGRESS_KEY",
    "answer_parts",
    "bytes_part",
    "content_of",
    "data_text",
    "file_block",
    "is_progress",
    "jsonable",
    "message_text",
    "output_parts",
    "parts_text",
    "to_lc_message",
    "to_lc_messages",
]

PROGRESS_KEY = "a2a_langchain"
"""Metadata key marking the adapter's own progress messages (left out of conversations)."""

_TEXT_MEDIA = ("text/", "application/json", "application/xml", "application/yaml")
_MAX_INLINE_TEXT = 1_000_000


def is_progress(message: Message) -> bool:
    """Whether ``message`` is a progress update this adapter emitted (tool calls...)."""
    mine = (message.metadata or {}).get(PROGRESS_KEY)
    return isinstance(mine, Mapping) and "progress" in mine


def data_text(data: Any) -> str:
    """JSON text for a data part (compact, unicode kept)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def _decoded_text(part: Part) -> str | None:
    """The text of a raw part with a textual media type (None if not text or not UTF-8)."""
    media = (part.media_type or "").lower()
    if part.raw is None or not media.startswith(_TEXT_MEDIA):
        return None
    if len(part.raw) > _MAX_INLINE_TEXT:
        return None
    try:
        return part.raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parts_text(parts: Iterable[Part], *, with_files: bool = True) -> str:
    """The parts as one text: text as is, data as JSON, text files inlined, other files named."""
    pieces: list[str] = []
    for part in parts:
        if part.text is not None:
            pieces.append(part.text)
        elif part.data is not None:
            pieces.append(data_text(part.data))
        elif with_files:
            label = part.filename or part.media_type or "file"
            inline = _decoded_text(part)
            if inline is not None:
                pieces.append(f"[file {label}]\n{inline}")
            elif part.url is not None:
                pieces.append(f"[file {label}: {part.url}]")
            else:
                pieces.append(f"[file {label}]")
    return "\n".join(p for p in pieces if p)


def _block(part: Part) -> dict[str, Any]:
    """A LangChain v1 standard content block for one part."""
    if part.text is not None:
        return {"type": "text", "text": part.text}
    if part.data is not None:
        return {"type": "text", "text": data_text(part.data)}
    media = (part.media_type or "").lower()
    kind = media.split("/", 1)[0]
    block: dict[str, Any]
    inline = _decoded_text(part)
    if inline is not None:
        block = {"type": "text-plain", "text": inline, "mime_type": media}
        if part.filename:
            block["title"] = part.filename
        return block
    block = {"type": kind if kind in ("image", "audio", "video") else "file"}
    if part.url is not None:
        block["url"] = part.url
    elif part.raw is not None:
        block["base64"] = base64.b64encode(part.raw).decode("ascii")
    if media:
        block["mime_type"] = media
    if part.filename:
        block["extras"] = {"filename": part.filename}
    return block


def file_block(part: Part) -> dict[str, Any]:
    """A LangChain v1 content block for a file part (image, audio, video, text-plain, file)."""
    return _block(part)


def content_of(parts: Sequence[Part]) -> str | list[str | dict[str, Any]]:
    """Message content for ``parts``: a plain string when they are all text, else blocks."""
    if all(p.text is not None for p in parts):
        return "".join(p.text or "" for p in parts)
    return [_block(p) for p in parts]


def to_lc_message(message: Message) -> BaseMessage:
    """An A2A message as a LangChain message (user: human, agent: AI); the id is kept."""
    content = content_of(message.parts)
    if message.role is Role.AGENT:
        return AIMessage(content=content, id=message.message_id)
    return HumanMessage(content=content, id=message.message_id)


def to_lc_messages(history: Iterable[Message]) -> list[BaseMessage]:
    """A task's history as a conversation, without the adapter's progress messages."""
    return [to_lc_message(m) for m in history if not is_progress(m)]


def message_text(message: BaseMessage) -> str:
    """The text of a LangChain message (string or content blocks)."""
    return message.text


# -- outbound --------------------------------------------------------------------------


def jsonable(value: Any, *, depth: int = 0) -> Any:
    """``value`` as JSON-compatible data (messages, pydantic models, dataclasses included)."""
    if depth > 64:
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, BaseMessage):
        out: dict[str, Any] = {
            "type": value.type,
            "content": jsonable(value.content, depth=depth + 1),
        }
        if value.name:
            out["name"] = value.name
        tool_calls = getattr(value, "tool_calls", None)
        if tool_calls:
            out["tool_calls"] = jsonable(tool_calls, depth=depth + 1)
        return out
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), depth=depth + 1)
    if isinstance(value, Mapping):
        mapping = cast(Mapping[Any, Any], value)
        return {str(k): jsonable(v, depth=depth + 1) for k, v in mapping.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = cast(Iterable[Any], value)
        return [jsonable(v, depth=depth + 1) for v in items]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def block_part(block: Mapping[str, Any]) -> Part | None:
    """A file part for an image/audio/video/file content block (None for other blocks)."""
    kind = block.get("type")
    if kind == "image_url":  # the OpenAI chat format: {"image_url": {"url": "data:..."}}
        inner: Any = block.get("image_url")
        url = cast(Mapping[str, Any], inner).get("url") if isinstance(inner, Mapping) else inner
        return _data_url_part(url) if isinstance(url, str) else None
    if kind not in ("image", "audio", "video", "file"):
        return None
    media = block.get("mime_type") or None
    extras: Any = block.get("extras")
    filename = (
        cast(Mapping[str, Any], extras).get("filename") if isinstance(extras, Mapping) else None
    )
    name = str(filename) if filename else None
    url = block.get("url")
    if isinstance(url, str) and url:
        return Part(url=url, media_type=media, filename=name)
    encoded = block.get("base64") or block.get("data")
    if isinstance(encoded, str) and encoded:
        try:
            raw = base64.b64decode(encoded, validate=True)
        except ValueError:
            return None
        return Part(raw=raw, media_type=media, filename=name)
    return None


def _data_url_part(url: str) -> Part | None:
    """A file part for a ``data:`` URL (base64 only) or an http(s) URL."""
    if url.startswith(("http://", "https://")):
        return Part(url=url)
    head, comma, payload = url.partition(",")
    if not url.startswith("data:") or not comma or not head.endswith(";base64"):
        return None
    try:
        raw = base64.b64decode(payload, validate=True)
    except ValueError:
        return None
    return Part(raw=raw, media_type=head[5:-7] or None)


def message_parts(message: BaseMessage) -> list[Part]:
    """A LangChain message as parts: its text, then any image or file blocks."""
    parts: list[Part] = []
    text = message.text
    if text:
        parts.append(Part(text=text))
    content: Any = message.content
    if isinstance(content, list):
        for block in cast(list[Any], content):
            if isinstance(block, Mapping):
                part = block_part(cast(Mapping[str, Any], block))
                if part is not None:
                    parts.append(part)
    return parts


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png", "png"),
    (b"\xff\xd8\xff", "image/jpeg", "jpg"),
    (b"GIF8", "image/gif", "gif"),
    (b"%PDF-", "application/pdf", "pdf"),
    (b"PK\x03\x04", "application/zip", "zip"),
)


def bytes_part(raw: bytes) -> Part:
    """Bytes as a file part, its media type read from the leading bytes when known."""
    for magic, media, extension in _MAGIC:
        if raw.startswith(magic):
            return Part(raw=raw, media_type=media, filename=f"result.{extension}")
    return Part(raw=raw, media_type="application/octet-stream", filename="result.bin")


def answer_parts(message: BaseMessage) -> list[Part]:
    """A message given as the answer: its parts, and the tool calls it asks for.

    A model bound to tools and served without a loop answers with tool calls for
    the caller to run: they come as a data part (``{"tool_calls": [...]}``), after
    a line naming them when the message has no text of its own.
    """
    parts = message_parts(message)
    calls = cast(list[Mapping[str, Any]], getattr(message, "tool_calls", None) or [])
    if not calls:
        return parts
    if not any(p.text for p in parts):
        names = ", ".join(str(c.get("name")) for c in calls)
        parts.insert(0, Part(text=f"The agent asks to call: {names}"))
    data = [
        {"name": c.get("name"), "args": jsonable(c.get("args")), "id": c.get("id")} for c in calls
    ]
    parts.append(Part(data={"tool_calls": data}))
    return parts


def _last_answer(messages: Sequence[Any]) -> BaseMessage | None:
    """The answer in a conversation: its last message, unless the user spoke last."""
    if not messages:
        return None
    last = messages[-1]
    if not isinstance(last, BaseMessage) or isinstance(last, HumanMessage):
        return None
    return last


def output_parts(output: Any) -> list[Part]:
    """A runnable's final output as parts.

    - None: no parts (the agent says it finished without an answer);
    - str: text; a message: its text (and image/file blocks), and the tool
      calls it asks for as data (``answer_parts``);
    - bytes: a file part (``bytes_part``: PNG, JPEG, GIF, PDF and ZIP recognised,
      else ``application/octet-stream``);
    - a state with ``messages``: the last message, unless the user spoke last
      (a ``structured_response`` key adds a data part);
    - a list of messages: the last one;
    - anything else (dicts, lists, models, numbers): a data part.
    """
    if output is None:
        return []
    if isinstance(output, str):
        return [Part(text=output)] if output else []
    if isinstance(output, BaseMessage):
        return answer_parts(output)
    if isinstance(output, bytes | bytearray):
        return [bytes_part(bytes(output))] if output else []
    if isinstance(output, Mapping) and "messages" in output:
        state = cast(Mapping[str, Any], output)
        messages = state.get("messages")
        parts: list[Part] = []
        if isinstance(messages, Sequence) and not isinstance(messages, str):
            answer = _last_answer(cast(Sequence[Any], messages))
            if answer is not None:
                parts.extend(answer_parts(answer))
        structured = state.get("structured_response")
        if structured is not None:
            parts.append(Part(data=jsonable(structured)))
        return parts
    if (
        isinstance(output, list)
        and output
        and all(isinstance(m, BaseMessage) for m in cast(list[Any], output))
    ):
        answer = _last_answer(cast(list[Any], output))
        return answer_parts(answer) if answer is not None else []
    data = jsonable(output)
    if isinstance(data, str):
        return [Part(text=data)] if data else []
    return [Part(data=data)]
