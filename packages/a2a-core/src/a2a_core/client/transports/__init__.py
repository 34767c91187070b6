"""Client transports: HTTP JSON-RPC, HTTP+JSON (REST) and in-process."""

from .base import CallOptions, ClientTransport, EventIterator

__all__ = ["CallOptions", "ClientTransport", "EventIterator"]
