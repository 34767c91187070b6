"""Large outgoing files by URL: a bounded, expiring store the agent app serves from.

An agent's answer may hold files of any size, but every byte inline travels
in the JSON of each event, is kept in the task store and must fit the
client's response limit. Above ``inline_limit`` a file part's bytes go into
this store instead and the part carries a URL (``{agent}/_a2a/files/{token}``)
that the agent app serves.

Access rule: the URL is a capability (256 random bits, never listed,
unguessable); when the task has an owner (an authenticated principal), a
fetch must also authenticate as that owner, so a leaked URL alone does not
give the file to someone else. Anyone else gets 404, as for an unknown or
expired token.

Bounds: ``max_bytes`` and ``max_files`` over the whole store, ``ttl``
seconds per file. A new file first drops expired ones, then the oldest; a
file larger than the whole budget stays inline.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..types import Message, Part, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

__all__ = ["FILES_PATH", "FileStore", "StoredFile"]

FILES_PATH = "/_a2a/files/"
"""Where the app serves stored files, below the agent's base URL."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file the store serves."""

    data: bytes
    media_type: str
    filename: str | None
    task_id: str
    owner: str | None
    expires: float


class FileStore:
    """Files of task answers served by URL (see the module docstring).

    - ``inline_limit``: files up to this size (bytes) stay inline (default 1 MiB);
    - ``max_bytes`` / ``max_files``: what the store holds at most (256 MiB, 1000);
    - ``ttl``: seconds a file stays fetchable (default one hour);
    - ``clock``: monotonic seconds (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        inline_limit: int = 1024 * 1024,
        max_bytes: int = 256 * 1024 * 1024,
        max_files: int = 1000,
        ttl: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if inline_limit < 0 or max_bytes <= 0 or max_files <= 0 or ttl <= 0:
            raise ValueError("inline_limit >= 0, and max_bytes, max_files and ttl > 0")
        self.inline_limit = inline_limit
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.ttl = ttl
        self._now = clock
        self._files: OrderedDict[str, StoredFile] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._files)

    @property
    def stored_bytes(self) -> int:
        """Bytes held now (expired files included until the next put or get)."""
        return self._bytes

    def _drop(self, token: str) -> None:
        found = self._files.pop(token, None)
        if found is not None:
            self._bytes -= len(found.data)

    def _expire(self) -> None:
        now = self._now()
        for token in [t for t, f in self._files.items() if f.expires <= now]:
            self._drop(token)

    def put(
        self, data: bytes, *, media_type: str, filename: str | None, task_id: str, owner: str | None
    ) -> str | None:
        """Store a file; its token, or None when it cannot fit at all."""
        if len(data) > self.max_bytes:
            return None
        self._expire()
        while self._files and (
            self._bytes + len(data) > self.max_bytes or len(self._files) >= self.max_files
        ):
            self._drop(next(iter(self._files)))
        token = secrets.token_urlsafe(32)
        self._files[token] = StoredFile(
            data, media_type, filename, task_id, owner, self._now() + self.ttl
        )
        self._bytes += len(data)
        return token

    def get(self, token: str, owner: str | None) -> StoredFile | None:
        """The file for ``token`` if it exists, is fresh, and ``owner`` may read it."""
        found = self._files.get(token)
        if found is None:
            return None
        if found.expires <= self._now():
            self._drop(token)
            return None
        if found.owner is not None and found.owner != owner:
            return None
        return found

    def drop_task(self, task_id: str) -> int:
        """Forget every file of a task; how many there were."""
        tokens = [t for t, f in self._files.items() if f.task_id == task_id]
        for token in tokens:
            self._drop(token)
        return len(tokens)

    # -- rewriting events ------------------------------------------------------------
    def offload_parts(
        self, parts: Sequence[Part], *, base_url: str, task_id: str, owner: str | None
    ) -> list[Part] | None:
        """``parts`` with large raw files replaced by URL parts; None when nothing changed."""
        changed = False
        out: list[Part] = []
        for part in parts:
            if part.raw is not None and len(part.raw) > self.inline_limit:
                media = part.media_type or "application/octet-stream"
                token = self.put(
                    part.raw, media_type=media, filename=part.filename, task_id=task_id, owner=owner
                )
                if token is not None:
                    url = f"{base_url.rstrip('/')}{FILES_PATH}{token}"
                    out.append(
                        Part(
                            url=url,
                            filename=part.filename,
                            media_type=media,
                            metadata=part.metadata,
                        )
                    )
                    changed = True
                    continue
            out.append(part)
        return out if changed else None

    def offload(
        self,
        event: Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
        *,
        base_url: str,
        task_id: str,
        owner: str | None,
    ) -> Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent:
        """An agent's event with its large files served by URL (the event itself if none)."""
        if isinstance(event, TaskArtifactUpdateEvent):
            parts = self.offload_parts(
                event.artifact.parts, base_url=base_url, task_id=task_id, owner=owner
            )
            if parts is None:
                return event
            artifact = event.artifact.model_copy(update={"parts": parts})
            return event.model_copy(update={"artifact": artifact})
        message = event if isinstance(event, Message) else event.status.message
        if message is None:
            return event
        parts = self.offload_parts(message.parts, base_url=base_url, task_id=task_id, owner=owner)
        if parts is None:
            return event
        new_message = message.model_copy(update={"parts": parts})
        if isinstance(event, Message):
            return new_message
        return event.model_copy(
            update={"status": event.status.model_copy(update={"message": new_message})}
        )
