"""``ArtifactStream``: one artifact sent chunk by chunk, its end marked when it ends.

Each ``write`` sends its chunk at once (the first creates the artifact, the
next ones append to it), so a client sees a chunk when the agent makes it,
not when the next one comes. ``close`` marks the end with one more update
carrying ``lastChunk``. By default (``ManagerConfig.whole_answers``) that
closing update replaces the artifact with all of it (``append: false``): a
client that applies the chunks gets the same text again, one that keeps
only an artifact's last chunk (Google ADK's ``RemoteA2aAgent``) still has
the whole answer. With ``whole_answers=False`` it appends an empty text part
instead, so every byte crosses the wire once. When the agent's final output
says something else than what streamed (a preamble before a tool call, a
rewritten answer, structured output), ``close(final)`` replaces the artifact
with it. Function agents, LangChain and CrewAI all stream through this one
writer; docs/server.md ("How a streamed answer ends") compares the choices.
"""

from __future__ import annotations

from typing import Any

from ..types import Artifact, Part
from .updater import TaskUpdater, to_parts

__all__ = ["ArtifactStream"]


class ArtifactStream:
    """Streams one artifact of a task through ``updater`` (see the module docstring)."""

    __slots__ = (
        "_chunks",
        "_plain",
        "_sent",
        "_text",
        "_text_only",
        "_updater",
        "_written",
        "artifact_id",
        "description",
        "metadata",
        "name",
    )

    def __init__(
        self,
        updater: TaskUpdater,
        artifact_id: str = "result",
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self._updater = updater
        self.artifact_id = artifact_id
        self.name = name if name is not None else artifact_id
        self.description = description
        self.metadata = metadata
        self._sent = False
        self._written = False
        self._text: list[str] = []
        self._chunks: list[list[Part]] = []
        """Every chunk written (the whole artifact to close with)."""
        self._text_only = True
        self._plain = True
        """Whether every part is bare text (no metadata, media type or file name)."""

    @property
    def text(self) -> str:
        """The text written so far."""
        return "".join(self._text)

    @property
    def written(self) -> bool:
        """Whether anything was sent, before or at a ``close`` (which ends the artifact but
        not this answer)."""
        return self._written

    async def write(self, content: Any) -> None:
        """Send a chunk (text, Part(s) or JSON data) now; empty content is skipped."""
        parts = to_parts(content)
        if not parts:
            return
        for part in parts:
            if part.text is None:
                self._text_only = False
            else:
                self._text.append(part.text)
            if part.metadata is not None or part.media_type is not None or part.filename:
                self._plain = False
        self._chunks.append(parts)
        await self._send(parts, last=False, replace=not self._sent)

    async def flush(self) -> None:
        """Nothing to do: every chunk is sent as it is written (kept for callers that
        flushed before pausing)."""

    async def close(self, final: Any = None) -> None:
        """End the artifact with an update carrying ``lastChunk``.

        ``final`` is the agent's whole output: when given and different from what
        streamed, it replaces the artifact (one complete update). Otherwise the closing
        update carries the whole artifact (``append: false``) or, with
        ``whole_answers`` off, an empty text part appended.
        """
        final_parts = to_parts(final)
        if final_parts and not (self._sent and self._says(final_parts)):
            await self._send(final_parts, last=True, replace=True)
        elif not self._sent:
            return
        elif self._updater.whole_answers:
            await self._send(self._whole(), last=True, replace=True)
        else:
            await self._send([Part(text="")], last=True, replace=False)
        self._sent = False
        self._text = []
        self._chunks = []
        self._text_only = self._plain = True

    def _whole(self) -> list[Part]:
        """The artifact's parts as one update, joined as the stored artifact joins them."""
        if self._text_only and self._plain:
            return [Part(text=self.text)]
        first, *rest = self._chunks
        artifact = Artifact(artifact_id=self.artifact_id, parts=first)
        return artifact.extended_all(
            [Artifact(artifact_id=self.artifact_id, parts=c) for c in rest]
        ).parts

    def _says(self, parts: list[Part]) -> bool:
        """Whether ``parts`` are exactly the text that streamed."""
        return (
            self._text_only
            and all(p.text is not None for p in parts)
            and "".join(p.text or "" for p in parts) == self.text
        )

    async def _send(self, parts: list[Part], *, last: bool, replace: bool) -> None:
        append = not replace
        await self._updater.add_artifact(
            parts,
            artifact_id=self.artifact_id,
            name=self.name,
            description=None if append else self.description,
            metadata=None if append else self.metadata,
            append=append,
            last_chunk=last,
        )
        self._sent = self._written = True
