"""Identifiers for tasks and messages (no pydantic here)."""

from __future__ import annotations

import os

__all__ = ["new_id"]


def new_id() -> str:
    """A fresh identifier (UUID4 string), as the spec suggests for tasks and messages.

    Formatted straight from random bytes: ``str(uuid.uuid4())`` costs several
    times more, and ids are made on every request.
    """
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
