"""A small incremental Server-Sent Events parser (the WHATWG event-stream format).

Bytes arrive in arbitrary chunks: a line, a multi-byte character or a CRLF
pair may be split anywhere. Multi-line ``data:`` fields are joined with
``\\n``; comments (``:`` lines, keep-alive pings) are skipped; an event is
dispatched at the blank line that ends it, and an unfinished event at the
end of the stream is dropped, as the format requires. One event's size is
bounded so a hostile server cannot grow the buffer without limit.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ...errors import InvalidAgentResponseError

__all__ = ["SSEEvent", "SSEParser"]

DEFAULT_MAX_EVENT_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEParser:
    """Feed bytes, get complete events."""

    __slots__ = (
        "_buffer",
        "_data",
        "_data_size",
        "_decoder",
        "_event",
        "_id",
        "_max",
        "_retry",
        "_skip_lf",
        "_started",
    )

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF is its pair
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse ``chunk``; return the events it completes."""
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        buffer = self._buffer + text
        events: list[SSEEvent] = []
        start = 0
        if "\r" not in buffer:
            end = buffer.find("\n")
            while end != -1:
                self._line(buffer[start:end], events)
                start = end + 1
                end = buffer.find("\n", start)
        else:
            length = len(buffer)
            i = start
            while i < length:
                ch = buffer[i]
                if ch == "\n" or ch == "\r":
                    self._line(buffer[start:i], events)
                    if ch == "\r":
                        if i + 1 < length:
                            if buffer[i + 1] == "\n":
                                i += 1
                        else:
                            self._skip_lf = True
                    start = i + 1
                i += 1
        self._buffer = buffer[start:]
        if len(self._buffer) > self._max:
            raise InvalidAgentResponseError(
                f"An event-stream line exceeds the limit of {self._max} bytes"
            )
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == ":":
            return
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                raise InvalidAgentResponseError(
                    f"An event-stream event exceeds the limit of {self._max} bytes"
                )
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self._id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            data = self._data[0] if len(self._data) == 1 else "\n".join(self._data)
            events.append(SSEEvent(data, self._event or "message", self._id, self._retry))
        self._data = []
        self._data_size = 0
        self._event = ""
        self._retry = None
