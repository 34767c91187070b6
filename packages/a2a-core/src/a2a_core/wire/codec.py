"""The codec interface: one per protocol version and binding.

A codec converts between the canonical internal model (1.0 semantics) and
one wire form. The server uses the decode-request / encode-result half, the
client the other half; both share the event, card and error conversions.
Encoders return values that ``wire.dumps`` serializes (plain JSON values or
pydantic models).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import A2AError, InvalidParamsError, PayloadTooLargeError
from ..types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from ._json import DEFAULT_LIMITS, DecodeLimits, dumps
from .operations import Operation

__all__ = ["REQUEST_TYPES", "RESULT_TYPES", "Codec", "validation_message"]

M = TypeVar("M", bound=BaseModel)

REQUEST_TYPES: dict[Operation, type[BaseModel]] = {
    Operation.SEND_MESSAGE: SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: SendMessageRequest,
    Operation.GET_TASK: GetTaskRequest,
    Operation.LIST_TASKS: ListTasksRequest,
    Operation.CANCEL_TASK: CancelTaskRequest,
    Operation.SUBSCRIBE_TO_TASK: SubscribeToTaskRequest,
    Operation.CREATE_PUSH_CONFIG: TaskPushNotificationConfig,
    Operation.GET_PUSH_CONFIG: GetTaskPushNotificationConfigRequest,
    Operation.LIST_PUSH_CONFIGS: ListTaskPushNotificationConfigsRequest,
    Operation.DELETE_PUSH_CONFIG: DeleteTaskPushNotificationConfigRequest,
    Operation.GET_EXTENDED_CARD: GetExtendedAgentCardRequest,
}
"""The internal request model of each operation."""

RESULT_TYPES: dict[Operation, Any] = {
    Operation.SEND_MESSAGE: Task | Message,
    Operation.SEND_STREAMING_MESSAGE: StreamEvent,
    Operation.GET_TASK: Task,
    Operation.LIST_TASKS: ListTasksResponse,
    Operation.CANCEL_TASK: Task,
    Operation.SUBSCRIBE_TO_TASK: StreamEvent,
    Operation.CREATE_PUSH_CONFIG: TaskPushNotificationConfig,
    Operation.GET_PUSH_CONFIG: TaskPushNotificationConfig,
    Operation.LIST_PUSH_CONFIGS: ListTaskPushNotificationConfigsResponse,
    Operation.DELETE_PUSH_CONFIG: type(None),
    Operation.GET_EXTENDED_CARD: AgentCard,
}
"""The internal result type of each operation (streams: the type of each event)."""


def validation_message(exc: ValidationError, limit: int = 5) -> str:
    """A short, safe summary of a validation failure (no input values echoed)."""
    parts: list[str] = []
    for error in exc.errors(include_url=False, include_input=False)[:limit]:
        loc = ".".join(str(x) for x in error["loc"]) or "(root)"
        parts.append(f"{loc}: {error['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "Invalid parameters: " + "; ".join(parts)


class Codec(ABC):
    """Converts one protocol version's wire form to and from the internal model."""

    version: ClassVar[str]
    """The protocol version, "1.0" or "0.3"."""
    binding: ClassVar[str]
    """The binding whose payload shapes this codec speaks: "JSONRPC" or "HTTP+JSON"."""

    def __init__(self, limits: DecodeLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    # server side ----------------------------------------------------------
    @abstractmethod
    def decode_request(self, op: Operation, params: Any) -> BaseModel:
        """Params (JSON-RPC) or the assembled body (HTTP+JSON) -> internal request model."""

    @abstractmethod
    def encode_result(self, op: Operation, result: Any) -> Any:
        """Internal result -> wire value."""

    def encode_result_json(self, op: Operation, result: Any) -> bytes:
        """``encode_result`` as compact JSON bytes: what a response carries."""
        return dumps(self.encode_result(op, result))

    # client side ----------------------------------------------------------
    @abstractmethod
    def encode_request(self, op: Operation, request: BaseModel) -> Any:
        """Internal request model -> params / body."""

    @abstractmethod
    def decode_result(self, op: Operation, value: Any) -> Any:
        """Wire value -> internal result; InvalidAgentResponseError when malformed."""

    # both sides -----------------------------------------------------------
    @abstractmethod
    def encode_event(self, event: StreamEvent) -> Any:
        """A stream event -> the wire value of one stream frame's result."""

    def encode_event_json(self, event: StreamEvent, model_json: bytes | None = None) -> bytes:
        """``encode_event`` as compact JSON bytes: what one stream frame carries.

        ``model_json``: the event's own JSON (``types._json.event_json``) when the caller
        has it already; a codec whose frames are that JSON writes it as it is.
        """
        return dumps(self.encode_event(event))

    @abstractmethod
    def decode_event(self, value: Any) -> StreamEvent:
        """One stream frame's result -> a stream event."""

    @abstractmethod
    def encode_card(self, card: AgentCard) -> Any:
        """The agent card in this version's shape."""

    @abstractmethod
    def decode_card(self, value: Any) -> AgentCard:
        """An agent card in this version's shape -> internal card."""

    @abstractmethod
    def encode_error(self, error: A2AError) -> dict[str, Any]:
        """A JSON-RPC ``error`` object (``code``, ``message``, ``data``)."""

    @abstractmethod
    def decode_error(self, value: Any) -> A2AError:
        """A JSON-RPC ``error`` object -> the typed error."""

    # helpers for implementations ----------------------------------------
    def _validate(self, model: type[M], value: Any) -> M:
        """Validate untrusted input; failures become InvalidParamsError."""
        if not isinstance(value, dict):
            raise InvalidParamsError("Invalid parameters: params must be a JSON object")
        try:
            result = model.model_validate(value)
        except ValidationError as exc:
            raise InvalidParamsError(validation_message(exc)) from None
        except (ValueError, TypeError) as exc:
            raise InvalidParamsError(f"Invalid parameters: {exc}") from None
        self._check_bounds(result)
        return result

    def _check_bounds(self, request: BaseModel) -> None:
        message = getattr(request, "message", None)
        if isinstance(message, Message) and len(message.parts) > self.limits.max_parts:
            raise PayloadTooLargeError(
                f"Message has {len(message.parts)} parts; the limit is {self.limits.max_parts}"
            )
