"""The A2A operations and their JSON-RPC method names in each protocol version."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Operation", "operation_for_method"]


class Operation(StrEnum):
    """One A2A operation, named as in 1.0 (the gRPC / JSON-RPC 1.0 method name)."""

    SEND_MESSAGE = "SendMessage"
    SEND_STREAMING_MESSAGE = "SendStreamingMessage"
    GET_TASK = "GetTask"
    LIST_TASKS = "ListTasks"
    CANCEL_TASK = "CancelTask"
    SUBSCRIBE_TO_TASK = "SubscribeToTask"
    CREATE_PUSH_CONFIG = "CreateTaskPushNotificationConfig"
    GET_PUSH_CONFIG = "GetTaskPushNotificationConfig"
    LIST_PUSH_CONFIGS = "ListTaskPushNotificationConfigs"
    DELETE_PUSH_CONFIG = "DeleteTaskPushNotificationConfig"
    GET_EXTENDED_CARD = "GetExtendedAgentCard"

    @property
    def streaming(self) -> bool:
        """Whether the operation answers with a stream of events."""
        return self in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK)

    def method(self, version: str) -> str | None:
        """The JSON-RPC method name in ``version`` ("1.0" or "0.3"); None if it has none."""
        if version == "0.3":
            return _V03_METHODS.get(self)
        return self.value


_V03_METHODS: dict[Operation, str] = {
    Operation.SEND_MESSAGE: "message/send",
    Operation.SEND_STREAMING_MESSAGE: "message/stream",
    Operation.GET_TASK: "tasks/get",
    Operation.CANCEL_TASK: "tasks/cancel",
    Operation.SUBSCRIBE_TO_TASK: "tasks/resubscribe",
    Operation.CREATE_PUSH_CONFIG: "tasks/pushNotificationConfig/set",
    Operation.GET_PUSH_CONFIG: "tasks/pushNotificationConfig/get",
    Operation.LIST_PUSH_CONFIGS: "tasks/pushNotificationConfig/list",
    Operation.DELETE_PUSH_CONFIG: "tasks/pushNotificationConfig/delete",
    Operation.GET_EXTENDED_CARD: "agent/getAuthenticatedExtendedCard",
}
_V10_BY_METHOD: dict[str, Operation] = {op.value: op for op in Operation}
_V03_BY_METHOD: dict[str, Operation] = {name: op for op, name in _V03_METHODS.items()}


def operation_for_method(method: str, version: str) -> tuple[Operation, str] | None:
    """Resolve a JSON-RPC method name to (operation, version of the name).

    The requested version's names are tried first; the other version's names
    are accepted as a fallback (clients that send 1.0 names without the
    ``A2A-Version`` header, or 0.3 names with it), and the returned version
    says which codec shapes the params.
    """
    first, second = (
        (_V03_BY_METHOD, _V10_BY_METHOD) if version == "0.3" else (_V10_BY_METHOD, _V03_BY_METHOD)
    )
    op = first.get(method)
    if op is not None:
        return op, version
    op = second.get(method)
    if op is not None:
        return op, "1.0" if second is _V10_BY_METHOD else "0.3"
    return None
