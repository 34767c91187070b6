"""The gRPC client transport: ``lf.a2a.v1.A2AService`` over ``grpc.aio``.

Chosen like the HTTP transports, by interface selection when the card lists
a ``GRPC`` interface (``a2a_core.bindings``). The interface URL is
``host:port`` (spec), or ``grpc://host:port``; ``grpcs://`` and ``https://``
use TLS with the system roots. Every call carries ``a2a-version: 1.0``, the
connection's headers as metadata (lower-cased: ``authorization`` ...), and
``a2a-extensions`` when extensions are activated. Failures are the same typed
errors as over HTTP: the server's ``google.rpc.Status`` details (ErrorInfo
and data) are decoded; a bare status maps to the closest class; an
unreachable agent is ``A2AConnectionError``, a missed deadline
``A2ATimeoutError``. Cancelling the awaiting task cancels the call at the
server too.

OAuth 2.0 client credentials work as over HTTP: when the connection's
``auth`` is a ``ClientCredentials`` (``A2AClient.connect(auth=...)``), every
call carries ``authorization: Bearer <token>`` from its cache (fetched and
refreshed before expiry by it), and a call refused ``UNAUTHENTICATED`` is
retried once with a fresh token. Over TLS, the CA bundle and client certificate
given to ``connect`` as files (``verify="ca.pem"``, ``cert=...``) are used too
(mutual TLS); an ``ssl.SSLContext`` cannot be read back, so with one gRPC
trusts the system roots.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import grpc
import grpc.aio
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from pydantic import BaseModel

from ..client.oauth import ClientCredentials
from ..client.transports._http import HttpSettings
from ..client.transports._streams import peeked
from ..client.transports.base import CallOptions, EventIterator, TransportConfig
from ..client.transports.errors import A2AConnectionError, A2ATimeoutError
from ..errors import A2AError, AuthenticationRequiredError, InvalidAgentResponseError
from ..types import AgentInterface
from ..wire.operations import Operation
from ..wire.v10 import V10Codec
from .proto import (
    SERVICE,
    decode_message,
    decode_status,
    encode_value,
    parse_response,
    request_class,
    response_class,
)

__all__ = ["GrpcTransport", "from_interface", "grpc_target"]

_EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009 - missing from the type stubs
_RESERVED = frozenset({"content-type", "te", "host", "connection", "user-agent", "content-length"})


def grpc_target(url: str) -> tuple[str, bool]:
    """(``host:port`` target, whether to use TLS) of an interface URL."""
    text = url.strip()
    if "://" not in text:
        return text.rstrip("/"), False
    parts = urlsplit(text)
    secure = parts.scheme in ("grpcs", "https")
    port = parts.port or (443 if secure else 80)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}", secure


def _forwards(options: CallOptions | None) -> bool:
    """Whether a call carries a forwarded caller's credential (token passthrough)."""
    return options is not None and options.credential is not None


def _metadata_pairs(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for name, value in headers.items():
        key = name.strip().lower()
        if key and not key.startswith((":", "grpc-")) and key not in _RESERVED:
            pairs.append((key, value))
    return pairs


class GrpcTransport:
    """gRPC calls to one ``host:port``; speaks A2A 1.0."""

    binding = "GRPC"
    version = "1.0"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(
        self,
        url: str,
        *,
        settings: HttpSettings | None = None,
        headers: Mapping[str, str] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        channel: grpc.aio.Channel | None = None,
        auth: ClientCredentials | None = None,
    ) -> None:
        self.url = url
        self.auth = auth
        """Client credentials whose token each call carries (None: only ``headers``)."""
        self.settings = settings or HttpSettings()
        self._limits = self.settings.limits
        self._codec = V10Codec(self._limits)
        self.target, secure = grpc_target(url)
        self._credentials = credentials or (grpc.ssl_channel_credentials() if secure else None)
        self._given_channel = channel
        self._opened: grpc.aio.Channel | None = None
        self._metadata = [
            ("a2a-version", "1.0"),
            *_metadata_pairs({**self.settings.headers, **(headers or {})}),
        ]

    @property
    def _channel(self) -> grpc.aio.Channel:
        """The channel, opened on first use (in the loop that makes the calls)."""
        if self._given_channel is not None:
            return self._given_channel
        if self._opened is None:
            options: list[tuple[str, Any]] = [
                ("grpc.max_receive_message_length", self._limits.max_bytes),
                ("grpc.max_send_message_length", -1),
            ]
            if self._credentials is not None:
                self._opened = grpc.aio.secure_channel(
                    self.target, self._credentials, options=options
                )
            else:
                self._opened = grpc.aio.insecure_channel(self.target, options=options)
        return self._opened

    def _call_metadata(self, options: CallOptions | None) -> list[tuple[str, str]]:
        if options is None or (
            not options.extensions and not options.headers and options.credential is None
        ):
            return self._metadata
        metadata = list(self._metadata)
        if options.headers:
            extra = _metadata_pairs(options.headers)
            names = {k for k, _ in extra}
            metadata = [(k, v) for k, v in metadata if k not in names] + extra
        if options.credential is not None:  # a forwarded caller's token replaces our own
            metadata = [(k, v) for k, v in metadata if k != "authorization"]
            metadata.append(("authorization", options.credential.authorization))
        if options.extensions:
            metadata.append(("a2a-extensions", ",".join(options.extensions)))
        return metadata

    async def _with_token(
        self, metadata: list[tuple[str, str]], *, fresh: bool
    ) -> list[tuple[str, str]]:
        """``metadata`` with the client-credentials token (a fresh one when ``fresh``)."""
        if self.auth is None:
            return metadata
        token = await self.auth.token(force=fresh)
        if token is None:  # no token endpoint known: the call goes without
            return metadata
        kept = [(k, v) for k, v in metadata if k != "authorization"]
        return [*kept, ("authorization", f"Bearer {token}")]

    def _timeout(self, options: CallOptions | None, stream: bool) -> float | None:
        if options is not None and options.timeout is not None:
            return options.timeout
        return self.settings.stream_timeout if stream else self.settings.timeout

    @staticmethod
    def _encode(op: Operation, request: BaseModel) -> bytes:
        try:
            message = encode_value(request_class(op), request)
        except json_format.Error as exc:
            raise InvalidAgentResponseError(f"The request does not fit the proto: {exc}") from None
        return message.SerializeToString()

    def _decode(self, cls: type[ProtoMessage], data: bytes) -> dict[str, Any]:
        message = parse_response(cls, data)
        try:
            return decode_message(message, self._limits)
        except A2AError as exc:
            raise InvalidAgentResponseError(
                f"The agent's answer is too deep: {exc.message}"
            ) from None

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Run one unary gRPC call and decode its result (see ``ClientTransport.call``)."""
        if op.streaming:
            raise ValueError(f"{op.value} is a streaming operation: use open_stream")
        method = cast(
            "grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]",
            self._channel.unary_unary(f"/{SERVICE}/{op.value}"),
        )
        payload = self._encode(op, request)
        metadata = self._call_metadata(options)
        own = not _forwards(options)  # a forwarded caller's token is sent as is, never ours
        retry = self.auth is not None and own
        while True:
            try:
                data = await method(
                    payload,
                    timeout=self._timeout(options, stream=False),
                    metadata=await self._with_token(metadata, fresh=not retry) if own else metadata,
                )
                break
            except grpc.aio.AioRpcError as exc:
                if retry and exc.code() is grpc.StatusCode.UNAUTHENTICATED:
                    retry = False  # once more, with a fresh token
                    continue
                raise _error(exc) from None
        value = self._decode(response_class(op), data)
        return self._codec.decode_result(op, value)

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        """Start a server-streaming gRPC call; errors are raised here, before the first event."""
        if not op.streaming:
            raise ValueError(f"{op.value} is not a streaming operation: use call")
        method = cast(
            "grpc.aio.UnaryStreamMultiCallable[bytes, bytes]",
            self._channel.unary_stream(f"/{SERVICE}/{op.value}"),
        )
        payload = self._encode(op, request)
        metadata = self._call_metadata(options)
        own = not _forwards(options)  # a forwarded caller's token is sent as is, never ours
        retry = self.auth is not None and own
        while True:
            sent = await self._with_token(metadata, fresh=not retry) if own else metadata
            call = method(payload, metadata=sent)
            events = self._events(call, response_class(op), self._timeout(options, True))
            try:
                return await peeked(events)
            except AuthenticationRequiredError:  # refused before the first event
                if not retry:
                    raise
                retry = False

    async def _events(
        self, call: Any, cls: type[ProtoMessage], idle: float | None
    ) -> EventIterator:
        stream = cast(grpc.aio.UnaryStreamCall[Any, bytes], call)
        try:
            while True:
                try:
                    if idle is None:
                        data = await stream.read()
                    else:
                        async with asyncio.timeout(idle):
                            data = await stream.read()
                except TimeoutError:
                    raise A2ATimeoutError("The agent's stream went quiet for too long") from None
                except grpc.aio.AioRpcError as exc:
                    raise _error(exc) from None
                if data is _EOF:
                    return
                yield self._codec.decode_event(self._decode(cls, cast(bytes, data)))
        finally:
            stream.cancel()

    async def aclose(self) -> None:
        """Close the gRPC channel, when this transport opened it."""
        opened, self._opened = self._opened, None
        if opened is not None:
            await opened.close()


def _error(exc: grpc.aio.AioRpcError) -> A2AError:
    """The typed error of a failed call."""
    code = exc.code()
    trailers: dict[str, str | bytes] = {}
    for key, value in exc.trailing_metadata() or ():
        trailers[key] = value
    if "grpc-status-details-bin" not in trailers:
        if code is grpc.StatusCode.UNAVAILABLE:
            return A2AConnectionError(
                f"Could not reach the agent: {exc.details() or 'unavailable'}"
            )
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return A2ATimeoutError("The agent did not answer in time")
    return decode_status(code.name, exc.details(), trailers)


def from_interface(interface: AgentInterface, config: TransportConfig) -> GrpcTransport:
    """The ``TransportFactory`` registered for ``GRPC`` in ``a2a_core.bindings``."""
    auth = config.http.auth
    credentials = None
    files = config.tls
    if files is not None and grpc_target(interface.url)[1]:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=files.roots, private_key=files.key, certificate_chain=files.cert
        )
    return GrpcTransport(
        interface.url,
        settings=config.settings,
        headers=config.headers,
        credentials=credentials,
        auth=auth if isinstance(auth, ClientCredentials) else None,
    )
