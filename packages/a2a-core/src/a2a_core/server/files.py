"""Large outgoing files by URL: a bounded, expiring store the agent app serves from.

An agent's answer may hold files of any size, but every byte inline travels
in the JSON of each event, is kept in the task store and must fit the
client's response limit. Above ``inline_limit`` a file part's bytes go into
this store instead and the part carries a URL (``{agent}/_a2a/files/{token}``)
that the agent app serves.

Where the bytes live (``FileBackend``): the task store's own backend when it
has one (``TaskStore.file_backend()``: a table in ``sqlite://`` and
``postgresql://``, keys in ``redis://``), so a URL minted by one instance is
served by every instance on the same store; else process memory
(``memory://``). A ``FileStore`` given its own ``backend`` keeps it.

Access rule: the URL is a capability (256 random bits, never listed,
unguessable); when the task has an owner (an authenticated principal), a
fetch must also authenticate as that owner, so a leaked URL alone does not
give the file to someone else. A file is served only while its task exists
(a task deleted or evicted from the task store takes its files with it;
the files of a direct message reply, which has no stored task, live until
they expire).
Anyone else gets 404, as for an unknown or expired token.

Bounds: ``max_bytes`` and ``max_files`` over the whole store, ``ttl``
seconds per file, ``max_task_bytes`` per task. A new file first drops
expired ones, then the oldest. A file that cannot be stored (larger than
the whole budget, or beyond its task's quota) stays inline in the answer:
the answer is never lost, and one task cannot push every other task's
files out of the store.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeGuard

from ..contracts.files import FileBackend, FileLimits, StoredFile
from ..types import Message, Part, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

if TYPE_CHECKING:
    from ..contracts.task_store import TaskStore

__all__ = ["FILES_PATH", "FileBackend", "FileLimits", "FileStore", "StoredFile", "valid_token"]

FILES_PATH = "/_a2a/files/"
"""Where the app serves stored files, below the agent's base URL."""

logger = logging.getLogger("a2a_core.server.files")

_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,100}")


def valid_token(token: str) -> bool:
    """Whether ``token`` has the shape of a token this store makes (else: 404 at once)."""
    return _TOKEN.fullmatch(token) is not None


class FileStore:
    """Files of task answers served by URL (see the module docstring).

    - ``inline_limit``: files up to this size (bytes) stay inline (default 1 MiB);
    - ``max_bytes`` / ``max_files``: what the store holds at most (256 MiB, 1000);
    - ``max_task_bytes``: what one task may hold (64 MiB; beyond it files stay inline);
    - ``ttl``: seconds a file stays fetchable (default one hour);
    - ``backend``: where the bytes live (default: the task store's, else memory);
    - ``clock``: epoch seconds (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        inline_limit: int = 1024 * 1024,
        max_bytes: int = 256 * 1024 * 1024,
        max_files: int = 1000,
        max_task_bytes: int = 64 * 1024 * 1024,
        ttl: float = 3600.0,
        backend: FileBackend | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if inline_limit < 0 or max_bytes <= 0 or max_files <= 0 or ttl <= 0:
            raise ValueError("inline_limit >= 0, and max_bytes, max_files and ttl > 0")
        if max_task_bytes <= 0:
            raise ValueError("max_task_bytes must be > 0")
        self.inline_limit = inline_limit
        self.limits = FileLimits(max_bytes, max_files, max_task_bytes)
        self.ttl = ttl
        self._backend = backend
        self._tasks: TaskStore | None = None
        self._now = clock

    @property
    def max_bytes(self) -> int:
        """Bytes the whole store holds at most (oldest files are dropped first)."""
        return self.limits.max_bytes

    @property
    def max_files(self) -> int:
        """Files the whole store holds at most."""
        return self.limits.max_files

    @property
    def max_task_bytes(self) -> int:
        """Bytes one task's files may take (beyond it a file stays inline in the answer)."""
        return self.limits.max_task_bytes

    @property
    def backend(self) -> FileBackend:
        """Where the bytes live (chosen at ``attach``, else process memory)."""
        if self._backend is None:
            from .memory_files import MemoryFileBackend

            self._backend = MemoryFileBackend()
        return self._backend

    def attach(self, tasks: TaskStore) -> None:
        """Serve the files of ``tasks``' tasks: their backend (unless one was given), and
        only while the task exists. One file store serves one task store."""
        if self._tasks is not None and self._tasks is not tasks:
            raise ValueError("this FileStore already serves another task store")
        self._tasks = tasks
        if self._backend is None:
            self._backend = tasks.file_backend()

    async def usage(self) -> tuple[int, int]:
        """Files and bytes held now."""
        return await self.backend.usage(self._now())

    async def put(
        self,
        data: bytes,
        *,
        media_type: str,
        filename: str | None,
        task_id: str,
        owner: str | None,
        task_owner: str | None = None,
        task_bound: bool = True,
    ) -> str | None:
        """Store a file; its token, or None when it cannot be stored (see the module doc)."""
        if len(data) > self.limits.max_bytes or len(data) > self.limits.max_task_bytes:
            return None
        token = secrets.token_urlsafe(32)
        now = self._now()
        file = StoredFile(
            data,
            media_type,
            filename,
            task_id,
            owner,
            now + self.ttl,
            task_owner=task_owner,
            task_bound=task_bound,
        )
        if not await self.backend.put(token, file, self.limits, now):
            return None
        return token

    async def get(self, token: str, owner: str | None) -> StoredFile | None:
        """The file for ``token`` if it exists, is fresh, its task exists, and ``owner``
        may read it."""
        if not valid_token(token):
            return None
        found = await self.backend.get(token, self._now())
        if found is None:
            return None
        if found.owner is not None and found.owner != owner:
            return None
        tasks = self._tasks
        if (
            tasks is not None
            and found.task_bound
            and await tasks.get(found.task_id, found.task_owner) is None
        ):
            await self.backend.drop_task(found.task_id)  # the task is gone: so are its files
            return None
        return found

    async def drop_task(self, task_id: str) -> int:
        """Forget every file of a task; how many there were."""
        return await self.backend.drop_task(task_id)

    # -- rewriting events ------------------------------------------------------------
    def offloads(
        self, event: object
    ) -> TypeGuard[Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent]:
        """Whether ``offload`` has work in ``event``: a raw file above ``inline_limit``
        (so ``event`` is one of the kinds ``offload`` takes).

        Checked on every event of a run, without a coroutine: events with none (text,
        small files) keep the fast path, where streamed chunks are held in memory and
        applied together instead of one by one."""
        if isinstance(event, TaskArtifactUpdateEvent):
            parts = event.artifact.parts
        elif isinstance(event, Message | TaskStatusUpdateEvent):
            message = event if isinstance(event, Message) else event.status.message  # as offload
            if message is None:
                return False
            parts = message.parts
        else:
            return False
        limit = self.inline_limit
        for part in parts:
            raw = part.raw
            if raw is not None and len(raw) > limit:
                return True
        return False

    async def offload_parts(
        self,
        parts: Sequence[Part],
        *,
        base_url: str,
        task_id: str,
        owner: str | None,
        task_owner: str | None = None,
        task_bound: bool = True,
    ) -> list[Part] | None:
        """``parts`` with large raw files replaced by URL parts; None when nothing changed."""
        changed = False
        out: list[Part] = []
        for part in parts:
            if part.raw is not None and len(part.raw) > self.inline_limit:
                media = part.media_type or "application/octet-stream"
                token = await self.put(
                    part.raw,
                    media_type=media,
                    filename=part.filename,
                    task_id=task_id,
                    owner=owner,
                    task_owner=task_owner,
                    task_bound=task_bound,
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
                logger.warning(
                    "task %s: a %d-byte file stays inline (beyond the file store's "
                    "max_bytes or its max_task_bytes of %d)",
                    task_id,
                    len(part.raw),
                    self.limits.max_task_bytes,
                )
            out.append(part)
        return out if changed else None

    async def offload(
        self,
        event: Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
        *,
        base_url: str,
        task_id: str,
        owner: str | None,
        task_owner: str | None = None,
        task_bound: bool = True,
    ) -> Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent:
        """An agent's event with its large files served by URL (the event itself if none).

        ``task_bound`` False: the event is a direct message reply, whose task is never
        stored (its files are served until they expire)."""

        async def offloaded(parts: Sequence[Part]) -> list[Part] | None:
            return await self.offload_parts(
                parts,
                base_url=base_url,
                task_id=task_id,
                owner=owner,
                task_owner=task_owner,
                task_bound=task_bound,
            )

        if isinstance(event, TaskArtifactUpdateEvent):
            parts = await offloaded(event.artifact.parts)
            if parts is None:
                return event
            artifact = event.artifact.model_copy(update={"parts": parts})
            return event.model_copy(update={"artifact": artifact})
        message = event if isinstance(event, Message) else event.status.message
        if message is None:
            return event
        parts = await offloaded(message.parts)
        if parts is None:
            return event
        new_message = message.model_copy(update={"parts": parts})
        if isinstance(event, Message):
            return new_message
        return event.model_copy(
            update={"status": event.status.model_copy(update={"message": new_message})}
        )
