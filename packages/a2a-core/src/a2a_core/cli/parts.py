"""The message parts ``a2a send`` options describe (TEXT, ``--data``, ``--file``), as JSON."""

from __future__ import annotations

import argparse
import base64
import json
import mimetypes
import sys
from pathlib import Path
from typing import Any

from .common import UsageError

__all__ = ["part_dicts"]


def part_dicts(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The parts the options describe, as A2A 1.0 JSON (read once: stdin cannot be reread)."""
    cached: list[dict[str, Any]] | None = getattr(args, "parts_json", None)
    if cached is not None:
        return cached
    parts: list[dict[str, Any]] = []
    text: str | None = args.text
    if text == "-":
        text = sys.stdin.read()
    if text:
        parts.append({"text": text})
    for raw in args.data:
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"--data is not valid JSON ({exc.msg} at {exc.pos}): {raw!r}"
            ) from None
        if value is None:
            raise UsageError("--data must not be null")
        parts.append({"data": value, "mediaType": "application/json"})
    for name in args.file:
        path = Path(name)
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read --file {name!r}: {exc.strerror or exc}") from None
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        encoded = base64.b64encode(content).decode("ascii")
        parts.append({"raw": encoded, "filename": path.name, "mediaType": media_type})
    if not parts:
        raise UsageError("nothing to send: give TEXT, --data or --file")
    args.parts_json = parts
    return parts
