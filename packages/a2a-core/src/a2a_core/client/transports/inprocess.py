"""Call a local A2A service directly: no HTTP, no serialization.

For tests, and for agents composed in one process. The service sees a
``ServerCallContext`` as if the call came over the wire (version, caller,
tenant, activated extensions), raises the same typed errors, and returns
internal models. Unexpected exceptions become InternalError, as an HTTP
caller would see them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from pydantic import BaseModel

from ...errors import A2AError, InternalError, UnsupportedOperationError
from ...identity import Principal
from ...server.context import ServerCallContext
from ...types import StreamEvent
from ...wire.operations import Operation
from .base import CallOptions, EventIterator, StreamPosition

__all__ = ["InProcessTransport", "LocalService"]


class LocalStream(Protocol):
    """What the transport reads of a service's stream (a part of ``ServerStream``)."""

    def __aiter__(self) -> AsyncIterator[StreamEvent]: ...

    @property
    def event_id(self) -> int | None:
        """The id of the event last returned (None: it has none)."""
        ...

    async def aclose(self) -> None: ...


class LocalService(Protocol):
    """What the transport needs of an ``A2AService``."""

    async def handle(self, op: Operation, request: BaseModel, call: ServerCallContext) -> Any: ...

    async def open_stream(
        self, op: Operation, request: BaseModel, call: ServerCallContext
    ) -> LocalStream: ...


class InProcessTransport:
    """Operations go straight to ``service``; cancellation and concurrency are native."""

    binding = "INPROCESS"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(
        self,
        service: LocalService,
        *,
        version: str = "1.0",
        principal: Principal | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if version not in ("1.0", "0.3"):
            raise ValueError(f"Unsupported A2A protocol version {version!r} (expected 1.0 or 0.3)")
        self.service = service
        self.version = version
        self.principal = principal
        self.headers = dict(headers or {})

    def _context(
        self, op: Operation, request: BaseModel, options: CallOptions | None
    ) -> ServerCallContext:
        if self.version == "0.3" and op.method("0.3") is None:
            # As over HTTP: 0.3 has no method for it, so a 0.3 caller cannot ask.
            raise UnsupportedOperationError(f"{op.value} has no A2A 0.3 method")
        headers = self.headers
        extensions: frozenset[str] = frozenset()
        if options is not None:
            if options.headers:
                headers = {**headers, **options.headers}
            extensions = frozenset(options.extensions)
        tenant = getattr(request, "tenant", None)
        return ServerCallContext(
            version=self.version,
            principal=self.principal,
            tenant=tenant if isinstance(tenant, str) and tenant else None,
            extensions=extensions,
            headers={k.lower(): v for k, v in headers.items()},
        )

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Run a unary operation on the local service (see ``ClientTransport.call``)."""
        call = self._context(op, request, options)
        try:
            return await self.service.handle(op, request, call)
        except A2AError:
            raise
        except Exception as exc:
            raise InternalError(f"The local agent service failed: {type(exc).__name__}") from exc

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        """Start a streaming operation on the local service (``ClientTransport.open_stream``)."""
        call = self._context(op, request, options)
        try:
            events = await self.service.open_stream(op, request, call)
        except A2AError:
            raise
        except Exception as exc:
            raise InternalError(f"The local agent service failed: {type(exc).__name__}") from exc
        return _relay(events, options.position if options is not None else None)

    async def aclose(self) -> None:
        """Nothing to release: the service belongs to its owner."""


async def _relay(events: LocalStream, position: StreamPosition | None) -> EventIterator:
    try:
        async for event in events:
            if position is not None:
                event_id = events.event_id
                if event_id is not None:
                    position.last_event_id = str(event_id)
            yield event
    except A2AError:
        raise
    except Exception as exc:
        raise InternalError(f"The local agent stream failed: {type(exc).__name__}") from exc
    finally:
        await events.aclose()
