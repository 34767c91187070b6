"""``ArtifactStream``: one artifact sent chunk by chunk, the last chunk marked as such.

Streaming clients show chunks as they arrive and learn the artifact is whole
from ``lastChunk``; an agent only knows a chunk was the last when the next
one does not come. So one chunk is held back: each ``write`` sends the chunk
before it, and ``close`` sends the held one with ``lastChunk``. When the
agent's final output says something else than what streamed (a preamble
before a tool call, a rewritten answer, structured output), ``close(final)``
replaces the artifact with it. Function agents, LangChain and CrewAI all
stream through this one writer.
"""

from __future__ import annotations

from typing import Any

from ..types import Part
from .updater import TaskUpdater, to_parts

__all__ = ["ArtifactStream"]


class ArtifactStream:
    """Streams one artifact of a task through ``updater`` (see the module docstring)."""

    __slots__ = (
        "_held",
        "_sent",
        "_text",
        "_text_only",
        "_updater",
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
        self._held: list[Part] | None = None
        self._sent = False
        self._text: list[str] = []
        self._text_only = True

    @property
    def text(self) -> str:
        """The text written so far (held chunk included)."""
        return "".join(self._text)

    @property
    def written(self) -> bool:
        """Whether anything was written (sent or held)."""
        return self._sent or self._held is not None

    async def write(self, content: Any) -> None:
        """Stream a chunk (text, Part(s) or JSON data); empty content is skipped."""
        parts = to_parts(content)
        if not parts:
            return
        if self._held is not None:
            await self._send(self._held, last=False)
        self._held = parts
        for part in parts:
            if part.text is None:
                self._text_only = False
            else:
                self._text.append(part.text)

    async def flush(self) -> None:
        """Send the held chunk now, not as the last (before pausing for input, say)."""
        if self._held is not None:
            held, self._held = self._held, None
            await self._send(held, last=False)

    async def close(self, final: Any = None) -> None:
        """End the artifact: the held chunk goes out as the last one.

        ``final`` is the agent's whole output: when given and different from what
        streamed, it replaces the artifact (one complete update, ``lastChunk`` set).
        """
        final_parts = to_parts(final)
        held, self._held = self._held, None
        if held is not None and (not final_parts or self._says(final_parts)):
            await self._send(held, last=True)
        elif final_parts:
            await self._send(final_parts, last=True, replace=True)

    def _says(self, parts: list[Part]) -> bool:
        """Whether ``parts`` are exactly the text that streamed."""
        return (
            self._text_only
            and all(p.text is not None for p in parts)
            and "".join(p.text or "" for p in parts) == self.text
        )

    async def _send(self, parts: list[Part], *, last: bool, replace: bool = False) -> None:
        append = self._sent and not replace
        await self._updater.add_artifact(
            parts,
            artifact_id=self.artifact_id,
            name=self.name,
            description=None if append else self.description,
            metadata=None if append else self.metadata,
            append=append,
            last_chunk=last,
        )
        self._sent = True
