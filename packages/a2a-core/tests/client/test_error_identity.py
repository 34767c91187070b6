"""An A2A error keeps its identity from the service to the caller, through every transport.

The same class, code, message and structured data arrive whether the call
went in process, over JSON-RPC or over HTTP+JSON, in 1.0 or 0.3, or over gRPC. (0.3 has
no ErrorInfo reason, so an error class sharing its code with a more general
one arrives as the class its code names, except PayloadTooLargeError, which
its HTTP 413 tells apart when it answers the request itself.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from a2a_core import (
    A2AError,
    ContentTypeNotSupportedError,
    GetTaskRequest,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    ServerBusyError,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
    all_error_classes,
    error_class_for_code,
)
from a2a_core.client import A2AClient
from a2a_core.server import A2AService, ManagerConfig, ServerCallContext
from a2a_core.server.stream import ServerStream
from a2a_core.wire import Operation
from servers import free_port, our_app, running, scripted_card, scripted_executor

TRANSPORTS = [
    ("inprocess", "1.0"),
    ("inprocess", "0.3"),
    ("JSONRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "1.0"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "1.0"),
]
ERRORS = {cls.__name__: cls for cls in all_error_classes()}
DATA = {"detail": "structured", "retryable": False, "attempts": 3, "nested": {"k": [1, 2]}}


class RaisingService(A2AService):
    """Raises the error named by a task id ``raise:<ErrorClass>`` (get, cancel, subscribe)."""

    def _error(self, request: Any) -> A2AError | None:
        task_id = getattr(request, "id", None)
        if not isinstance(task_id, str) or not task_id.startswith("raise:"):
            return None
        name = task_id.split(":", 1)[1]
        return ERRORS[name](f"{name} raised by the service", data=dict(DATA))

    async def handle(self, op: Operation, request: Any, call: ServerCallContext) -> Any:
        error = self._error(request)
        if error is not None:
            raise error
        return await super().handle(op, request, call)

    async def open_stream(
        self, op: Operation, request: Any, call: ServerCallContext
    ) -> ServerStream:
        error = self._error(request)
        if error is not None:
            raise error
        return await super().open_stream(op, request, call)


def make_service(**options: Any) -> A2AService:
    return RaisingService(scripted_executor(), scripted_card(), **options)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Any]]:
    """One server raising on demand, one with a single agent slot (for ServerBusy)."""
    # strict_output_modes: an unanswerable acceptedOutputModes is refused (-32005), as the
    # content-type test below needs; the default answers in the best mode it has.
    plain = make_service(strict_output_modes=True)
    busy = make_service(config=ManagerConfig(max_background_tasks=1))
    plain_port, busy_port = free_port(), free_port()
    plain_grpc, busy_grpc = free_port(), free_port()
    with (
        running(our_app(plain, plain_port), plain_port, grpc_port=plain_grpc) as plain_url,
        running(our_app(busy, busy_port), busy_port, grpc_port=busy_grpc) as busy_url,
    ):
        yield {
            "plain": (plain, plain_url, plain_grpc),
            "busy": (busy, busy_url, busy_grpc),
        }


def client_for(servers: dict[str, Any], which: str, binding: str, version: str) -> A2AClient:
    service, url, grpc_port = servers[which]
    if binding == "inprocess":
        return A2AClient.in_process(service, version=version)
    if binding == "GRPC":
        return A2AClient.for_endpoint(f"127.0.0.1:{grpc_port}", binding=binding, timeout=10)
    path = url + "/" if binding == "JSONRPC" else url + "/rest"
    return A2AClient.for_endpoint(path, binding=binding, version=version, timeout=10)


def expected_class(cls: type[A2AError], binding: str, version: str) -> type[A2AError]:
    if binding == "inprocess" or version == "1.0":
        return cls
    if cls.http_status == 413:
        return cls  # the HTTP status tells PayloadTooLargeError from InvalidRequestError
    return error_class_for_code(cls.code)


def assert_same(error: A2AError, cls: type[A2AError], expected: type[A2AError]) -> None:
    assert type(error) is expected
    assert error.code == cls.code
    assert error.message == f"{cls.__name__} raised by the service"
    assert error.data == DATA


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_unary_error_identity(servers: dict[str, Any], binding: str, version: str) -> None:
    """Every error class, raised by the service, arrives as itself (one client per transport)."""
    async with client_for(servers, "plain", binding, version) as client:
        for name, cls in sorted(ERRORS.items()):
            with pytest.raises(A2AError) as caught:
                await client.get_task(f"raise:{name}")
            assert_same(caught.value, cls, expected_class(cls, binding, version))


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
@pytest.mark.parametrize(
    "name", ["TaskNotFoundError", "UnsupportedOperationError", "ServerBusyError", "InternalError"]
)
async def test_stream_error_identity(
    servers: dict[str, Any], binding: str, version: str, name: str
) -> None:
    """Errors of streaming operations are raised when the stream opens, typed the same way."""
    cls = ERRORS[name]
    async with client_for(servers, "plain", binding, version) as client:
        with pytest.raises(A2AError) as caught:
            async with client.subscribe(f"raise:{name}"):
                pass
    assert_same(caught.value, cls, expected_class(cls, binding, version))


# --- errors the service raises by itself ----------------------------------------------


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_task_not_found(servers: dict[str, Any], binding: str, version: str) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        with pytest.raises(TaskNotFoundError) as caught:
            await client.cancel("missing-task")
    assert caught.value.code == -32001


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_continuing_a_finished_task_is_unsupported(
    servers: dict[str, Any], binding: str, version: str
) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        done = await client.send("hello")
        assert done.state is TaskState.COMPLETED
        with pytest.raises(UnsupportedOperationError) as caught:
            await client.send("more", task=done)
        assert caught.value.code == -32004
        # reply_to= starts a follow-up task in the same context instead.
        follow_up = await client.send("hello again", reply_to=done)
    assert follow_up.task_id != done.task_id
    assert follow_up.context_id == done.context_id


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_content_type_not_supported(
    servers: dict[str, Any], binding: str, version: str
) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        with pytest.raises(ContentTypeNotSupportedError) as caught:
            await client.send("hello", accepted_output_modes=["image/png"])
    assert caught.value.code == -32005


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_push_not_supported(servers: dict[str, Any], binding: str, version: str) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        task = await client.send("hello")
        with pytest.raises(PushNotificationNotSupportedError) as caught:
            await client.create_push_config(task, "http://127.0.0.1:9/hook")
    assert caught.value.code == -32003


async def slot_freed(service: A2AService) -> None:
    """Wait until a canceled run has given its slot back.

    The cancel answers once the task is CANCELED; the slot frees when the agent's
    cleanup has run, a few event-loop turns later (more of them on Python 3.12+),
    and the next parametrized case must find it free.
    """
    for _ in range(500):
        if service.manager.active_count == 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the canceled run still holds its slot after 5 s")


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_server_busy_carries_its_data(
    servers: dict[str, Any], binding: str, version: str
) -> None:
    async with client_for(servers, "busy", binding, version) as client:
        slow = await client.send("slow", blocking=False)
        try:
            with pytest.raises(ServerBusyError) as caught:
                await client.send("hello")
        finally:
            await client.cancel(slow)
            await slot_freed(servers["busy"][0])
    error = caught.value
    assert error.code == -32050
    assert error.retryable
    assert error.data == {
        "reason": "background_capacity_exhausted",
        "retryable": True,
        "max_background_tasks": 1,
    }


@pytest.mark.parametrize(("binding", "version"), [t for t in TRANSPORTS if t[0] != "inprocess"])
async def test_invalid_params(servers: dict[str, Any], binding: str, version: str) -> None:
    """A request the server refuses to validate (negative historyLength, built unvalidated)."""
    async with client_for(servers, "plain", binding, version) as client:
        request = GetTaskRequest.model_construct(id="some-task", history_length=-1, tenant=None)
        with pytest.raises(InvalidParamsError) as caught:
            await client.call(Operation.GET_TASK, request)
    assert caught.value.code == -32602


# Over gRPC, TASK_STATE_UNSPECIFIED is the enum's zero value: proto3 cannot tell it from
# "no filter", so the request is valid there (and lists every task).
@pytest.mark.parametrize(
    ("binding", "version"), [t for t in TRANSPORTS if t[1] == "1.0" and t[0] != "GRPC"]
)
async def test_invalid_list_filter(servers: dict[str, Any], binding: str, version: str) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        with pytest.raises(InvalidParamsError) as caught:
            await client.list_tasks(status=TaskState.UNSPECIFIED)
    assert caught.value.code == -32602


@pytest.mark.parametrize(("binding", "version"), [t for t in TRANSPORTS if t[1] == "0.3"])
async def test_list_tasks_has_no_0_3_method(
    servers: dict[str, Any], binding: str, version: str
) -> None:
    async with client_for(servers, "plain", binding, version) as client:
        with pytest.raises(UnsupportedOperationError) as caught:
            await client.list_tasks()  # refused before anything is sent
    assert caught.value.code == -32004
