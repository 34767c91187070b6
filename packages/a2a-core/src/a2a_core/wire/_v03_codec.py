"""What the two A2A 0.3 codecs share: which shape answers which operation.

The 0.3 JSON-RPC binding (``types.ts`` shapes) and the 0.3 HTTP+JSON binding (ProtoJSON
of the 0.3 proto) differ in their shapes, not in how operations map onto them. Each
binding's module names its shapes in a ``V03Shapes``; ``V03Codec`` does the rest, and
asks the binding only for what differs: listing push configs (a bare list, or a page).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from pydantic import BaseModel

from ..errors import (
    A2AError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    UnsupportedOperationError,
)
from ..types import (
    AgentCard,
    ListTaskPushNotificationConfigsResponse,
    Message,
    StreamEvent,
    Task,
    TaskPushNotificationConfig,
)
from ._v03_convert import card_in, card_out, guard
from ._v03_downgrade import lenient
from .codec import REQUEST_TYPES, Codec
from .errors_wire import decode_jsonrpc_error, encode_jsonrpc_error_v03
from .operations import Operation

__all__ = ["V03Codec", "V03Shapes"]


@dataclass(frozen=True, slots=True)
class V03Shapes:
    """One 0.3 binding's conversions between its wire shapes and the internal models."""

    request_in: Callable[[Operation, Any], dict[str, Any]]
    request_out: Callable[[Operation, BaseModel], Any]
    event_in: Callable[[Any], StreamEvent]
    event_out: Callable[[StreamEvent], dict[str, Any]]
    task_in: Callable[[Any], Any]
    task_out: Callable[[Task], dict[str, Any]]
    task_or_message_in: Callable[[Any], Task | Message]
    task_push_in: Callable[[Any], Any]
    task_push_out: Callable[[TaskPushNotificationConfig], dict[str, Any]]

    @classmethod
    def named_in(cls, namespace: Mapping[str, Any]) -> V03Shapes:
        """The conversions a binding's module defines under these names (``globals()``)."""
        return cls(**{field.name: namespace[field.name] for field in fields(cls)})


class V03Codec(Codec):
    """A 0.3 codec over a binding's ``shapes``; ListTasks has no 0.3 form in either."""

    version: ClassVar[str] = "0.3"
    shapes: ClassVar[V03Shapes]
    proto: ClassVar[bool]
    """ProtoJSON (HTTP+JSON) rather than ``types.ts`` shapes (JSON-RPC)."""
    no_list_tasks: ClassVar[str]
    """The message of the error for ListTasks."""

    @abstractmethod
    def _push_configs_out(self, result: Any) -> Any:
        """The binding's answer to ListTaskPushNotificationConfigs."""

    @abstractmethod
    def _push_configs_in(self, value: Any) -> ListTaskPushNotificationConfigsResponse:
        """An agent's answer to ListTaskPushNotificationConfigs, read."""

    def _deleted(self) -> Any:
        """The answer to DeleteTaskPushNotificationConfig (JSON-RPC: null)."""
        return None

    # server side ----------------------------------------------------------
    def decode_request(self, op: Operation, params: Any) -> BaseModel:
        if op is Operation.LIST_TASKS:
            raise MethodNotFoundError(self.no_list_tasks)
        request_in = self.shapes.request_in
        data = guard(InvalidParamsError, "Invalid parameters", lambda: request_in(op, params))
        return self._validate(REQUEST_TYPES[op], data)

    def encode_result(self, op: Operation, result: Any) -> Any:
        return lenient(lambda value: self._encode_result(op, value), result, rest=self.proto)

    def _encode_result(self, op: Operation, result: Any) -> Any:
        shapes = self.shapes
        if op is Operation.LIST_TASKS:
            raise UnsupportedOperationError(self.no_list_tasks)
        if op is Operation.SEND_MESSAGE or op.streaming:
            return shapes.event_out(result)
        if op in (Operation.GET_TASK, Operation.CANCEL_TASK):
            return shapes.task_out(result)
        if op in (Operation.CREATE_PUSH_CONFIG, Operation.GET_PUSH_CONFIG):
            return shapes.task_push_out(result)
        if op is Operation.LIST_PUSH_CONFIGS:
            return self._push_configs_out(result)
        if op is Operation.DELETE_PUSH_CONFIG:
            return self._deleted()
        return self.encode_card(result)

    # client side ----------------------------------------------------------
    def encode_request(self, op: Operation, request: BaseModel) -> Any:
        return self.shapes.request_out(op, request)

    def decode_result(self, op: Operation, value: Any) -> Any:
        if op is Operation.LIST_TASKS:
            raise UnsupportedOperationError(self.no_list_tasks)
        if op is Operation.DELETE_PUSH_CONFIG:
            return None
        if op is Operation.GET_EXTENDED_CARD:
            return self.decode_card(value)
        return guard(
            InvalidAgentResponseError,
            "Malformed result from agent",
            lambda: self._result_in(op, value),
        )

    def _result_in(self, op: Operation, value: Any) -> Any:
        shapes = self.shapes
        if op is Operation.SEND_MESSAGE:
            return shapes.task_or_message_in(value)
        if op.streaming:
            return shapes.event_in(value)
        if op in (Operation.GET_TASK, Operation.CANCEL_TASK):
            return Task.model_validate(shapes.task_in(value))
        if op in (Operation.CREATE_PUSH_CONFIG, Operation.GET_PUSH_CONFIG):
            return TaskPushNotificationConfig.model_validate(shapes.task_push_in(value))
        return self._push_configs_in(value)

    # both sides -----------------------------------------------------------
    def encode_event(self, event: StreamEvent) -> Any:
        return lenient(self.shapes.event_out, event, rest=self.proto)

    def decode_event(self, value: Any) -> StreamEvent:
        event_in = self.shapes.event_in
        return guard(
            InvalidAgentResponseError, "Malformed stream event from agent", lambda: event_in(value)
        )

    def encode_card(self, card: AgentCard) -> Any:
        return card_out(card, proto=self.proto)

    def decode_card(self, value: Any) -> AgentCard:
        return guard(
            InvalidAgentResponseError,
            "Malformed agent card",
            lambda: AgentCard.model_validate(card_in(value)),
        )

    def encode_error(self, error: A2AError) -> dict[str, Any]:
        return encode_jsonrpc_error_v03(error)

    def decode_error(self, value: Any) -> A2AError:
        return decode_jsonrpc_error(value)
