"""Identifiers for tasks and messages (no pydantic here)."""

from __future__ import annotations

import os
from collections import deque

__all__ = ["new_id"]

_BATCH = 64
"""Ids made per ``os.urandom`` call: one system call per request was two."""

_ready: deque[str] = deque()
"""Made but not yet handed out; ``popleft`` is atomic, so no two threads get the same."""

if hasattr(os, "register_at_fork"):
    # A forked child must not hand out the ids its parent will also hand out.
    os.register_at_fork(after_in_child=_ready.clear)


def _refill() -> None:
    raw = bytearray(os.urandom(16 * _BATCH))
    for i in range(0, 16 * _BATCH, 16):
        raw[i + 6] = (raw[i + 6] & 0x0F) | 0x40  # version 4
        raw[i + 8] = (raw[i + 8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    _ready.extend(
        f"{h[i : i + 8]}-{h[i + 8 : i + 12]}-{h[i + 12 : i + 16]}-{h[i + 16 : i + 20]}-"
        f"{h[i + 20 : i + 32]}"
        for i in range(0, 32 * _BATCH, 32)
    )


def new_id() -> str:
    """A fresh identifier (UUID4 string), as the spec suggests for tasks and messages.

    Formatted straight from random bytes (``str(uuid.uuid4())`` costs several times
    more), made in batches from one ``os.urandom`` call: ids are made on every request.
    """
    try:
        return _ready.popleft()
    except IndexError:
        _refill()
        return _ready.popleft()
