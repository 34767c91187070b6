"""A2A 1.0: ProtoJSON of the 1.0 proto, for both the JSON-RPC and HTTP+JSON bindings.

The internal model is the 1.0 model, so this codec is mostly validation
(input) and alias-aware serialization (output). Input also accepts what
ProtoJSON parsers accept: snake_case field names and enum numbers.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from ..errors import A2AError, InvalidAgentResponseError
from ..types import (
    AgentCard,
    Message,
    SendMessageResponse,
    StreamEvent,
    StreamResponse,
    Task,
)
from ..types._json import event_json
from ._json import dumps
from .codec import REQUEST_TYPES, Codec, validation_message
from .errors_wire import decode_jsonrpc_error, encode_jsonrpc_error_v10
from .operations import Operation

__all__ = ["V10Codec"]


class V10Codec(Codec):
    """ProtoJSON of ``lf.a2a.v1`` (A2A 1.0)."""

    version: ClassVar[str] = "1.0"
    binding: ClassVar[str] = "JSONRPC"

    def decode_request(self, op: Operation, params: Any) -> BaseModel:
        if params is None and op is Operation.GET_EXTENDED_CARD:
            params = {}
        return self._validate(REQUEST_TYPES[op], params)

    def encode_request(self, op: Operation, request: BaseModel) -> Any:
        return request.model_dump(mode="json", by_alias=True)

    def encode_result(self, op: Operation, result: Any) -> Any:
        if op is Operation.SEND_MESSAGE:
            return {"task": result} if isinstance(result, Task) else {"message": result}
        if op.streaming:
            return self.encode_event(result)
        if op is Operation.DELETE_PUSH_CONFIG:
            return {}
        return result

    def encode_result_json(self, op: Operation, result: Any) -> bytes:
        if op is Operation.SEND_MESSAGE:
            # {"task": ...} or {"message": ...}: the same JSON as the stream event's.
            data = event_json(result)
            if data is not None:
                return data
        return dumps(self.encode_result(op, result))

    def decode_result(self, op: Operation, value: Any) -> Any:
        try:
            if op is Operation.SEND_MESSAGE:
                return SendMessageResponse.model_validate(value).result
            if op.streaming:
                return self.decode_event(value)
            if op is Operation.DELETE_PUSH_CONFIG:
                return None
            from .codec import RESULT_TYPES

            model: type[BaseModel] = RESULT_TYPES[op]
            return model.model_validate(value)
        except ValidationError as exc:
            raise InvalidAgentResponseError(
                "Malformed result from agent: " + validation_message(exc)
            ) from None

    def encode_event(self, event: StreamEvent) -> Any:
        return StreamResponse.wrap(event)

    def encode_event_json(self, event: StreamEvent, model_json: bytes | None = None) -> bytes:
        # A frame is the event's StreamResponse JSON: the model's own, made without
        # building (and validating) a wrapper per event.
        if model_json is None:
            model_json = event_json(event)
        return model_json if model_json is not None else dumps(StreamResponse.wrap(event))

    def decode_event(self, value: Any) -> StreamEvent:
        try:
            return StreamResponse.model_validate(value).event
        except ValidationError as exc:
            raise InvalidAgentResponseError(
                "Malformed stream event from agent: " + validation_message(exc)
            ) from None

    def encode_card(self, card: AgentCard) -> Any:
        return card.model_dump(mode="json", by_alias=True)

    def decode_card(self, value: Any) -> AgentCard:
        try:
            return AgentCard.model_validate(value)
        except ValidationError as exc:
            raise InvalidAgentResponseError(
                "Malformed agent card: " + validation_message(exc)
            ) from None

    def encode_error(self, error: A2AError) -> dict[str, Any]:
        return encode_jsonrpc_error_v10(error)

    def decode_error(self, value: Any) -> A2AError:
        return decode_jsonrpc_error(value)


_ = Message
