"""The gRPC binding: our client and server, and each against the official SDK's, on loopback.

Our server: the same scenarios as over HTTP (through discovery, the card
listing gRPC), plus push-config CRUD, the extended card, metadata
(``a2a-version``, ``a2a-extensions``, ``authorization``), bounds and
cancellation in flight. Interop: the official SDK's gRPC client (its
generated stubs) against our server, and our client against the SDK's gRPC
server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import scenarios
from a2a_core import (
    AgentCapabilities,
    AgentExtension,
    AuthenticationRequiredError,
    ExtensionSupportRequiredError,
    Part,
    PayloadTooLargeError,
    TaskNotFoundError,
    TaskState,
    VersionNotSupportedError,
)
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from servers import (
    free_port,
    our_app,
    running,
    scripted_card,
    scripted_service,
    sdk_app,
    sdk_grpc_server,
)

grpc = pytest.importorskip("grpc")


@pytest.fixture(scope="module")
def our_grpc() -> Iterator[tuple[str, int]]:
    """Our app (HTTP and gRPC in one loop); yields (HTTP URL, gRPC port)."""
    port, grpc_port = free_port(), free_port()
    service = scripted_service()
    with running(our_app(service, port, grpc_port), port, grpc_port=grpc_port) as url:
        yield url, grpc_port


@pytest.mark.parametrize("name", sorted(scenarios.ALL))
async def test_our_client_against_our_grpc_server(our_grpc: tuple[str, int], name: str) -> None:
    url, _ = our_grpc
    async with await A2AClient.connect(url, preferred_bindings=["grpc"], timeout=10) as client:
        assert (client.version, client.binding) == ("1.0", "GRPC")
        await scenarios.run(name, client)


async def test_card_lists_grpc_and_http_stays_preferred(our_grpc: tuple[str, int]) -> None:
    url, grpc_port = our_grpc
    async with await A2AClient.connect(url) as client:
        assert client.binding == "JSONRPC"  # the card lists JSON-RPC first
        assert client.card is not None
        grpc_ifaces = [i for i in client.card.supported_interfaces if i.protocol_binding == "GRPC"]
    assert [(i.url, i.protocol_version) for i in grpc_ifaces] == [(f"127.0.0.1:{grpc_port}", "1.0")]


# --- everything through running_server(grpc_port=0) ------------------------------------


class Echo(AgentExecutor):
    """Echoes; "slow" works until canceled; "wait" blocks until canceled."""

    def __init__(self) -> None:
        self.canceled = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.text in ("slow", "wait"):
            await updater.start_work()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.canceled.set()
                raise
            return
        await updater.complete(f"echo: {context.text}")


def _card(**capabilities: Any) -> Any:
    return scripted_card(**capabilities)


class Served:
    def __init__(self, server: Any, agent: Echo) -> None:
        self.url: str = server.url
        self.app: Any = server.app
        self.grpc_address: str = server.grpc_address
        self.agent = agent


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    agent = Echo()
    card = _card(push_notifications=True)
    async with running_server(
        agent, card=card, grpc_port=0, push=True, allow_private_push_targets=True
    ) as server:
        yield Served(server, agent)


async def test_running_server_publishes_grpc_and_serves_every_operation(served: Served) -> None:
    assert served.grpc_address is not None
    grpc_urls = [
        i.url for i in served.app.card.supported_interfaces if i.protocol_binding == "GRPC"
    ]
    port = int(served.grpc_address.rsplit(":", 1)[1])
    assert grpc_urls == [f"localhost:{port}"]  # loopback is published as localhost
    async with await A2AClient.connect(served.url, preferred_bindings=["GRPC"], timeout=10) as c:
        assert c.binding == "GRPC"
        done = await c.send("hi")
        assert done.state is TaskState.COMPLETED
        assert done.text == "echo: hi"
        assert (await c.get_task(done, history_length=0)).history == []
        page = await c.list_tasks(page_size=1)
        assert len(page.tasks) == 1
        # push-config CRUD
        created = await c.create_push_config(done, "http://127.0.0.1:9/hook", token="tok")
        assert created.id
        got = await c.get_push_config(done, created.id)
        assert got.url == "http://127.0.0.1:9/hook"
        listed = await c.list_push_configs(done)
        assert [p.id for p in listed.configs] == [created.id]
        await c.delete_push_config(done, created.id)
        assert (await c.list_push_configs(done)).configs == []
        # cancel, and subscribe to a running task
        slow = await c.send("slow", blocking=False)
        async with c.subscribe(slow) as events:
            first = await events.__anext__()
            assert getattr(first, "id", None) == slow.task_id
            canceled = await c.cancel(slow)
            assert canceled.status.state is TaskState.CANCELED
            rest = [e async for e in events]
        assert rest
        assert rest[-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]
        with pytest.raises(TaskNotFoundError):
            await c.cancel("no-such-task")


async def test_closing_a_stream_and_cancelling_a_call_in_flight(served: Served) -> None:
    async with await A2AClient.connect(served.url, preferred_bindings=["GRPC"], timeout=10) as c:
        stream = c.stream("wait")
        async with stream:
            async for event in stream:
                if getattr(getattr(event, "status", None), "state", None) is TaskState.WORKING:
                    break
        task = stream.task
        assert task is not None
        # Closing the stream does not cancel the task (spec); a cancel does, and the agent sees it.
        assert (await c.get_task(task)).status.state is TaskState.WORKING
        call = asyncio.ensure_future(c.send("wait"))
        await asyncio.sleep(0.3)
        call.cancel()  # cancelling the awaiting task cancels the gRPC call
        with pytest.raises(asyncio.CancelledError):
            await call
        await c.cancel(task)
    await asyncio.wait_for(served.agent.canceled.wait(), 5)


async def test_request_bounds_and_version_metadata(served: Served) -> None:
    address = served.grpc_address
    async with A2AClient.for_endpoint(address, binding="GRPC", timeout=10) as c:
        with pytest.raises(PayloadTooLargeError):
            await c.send([Part(text="x" * (11 * 1024 * 1024))])
        assert (await c.send("still fine")).text == "echo: still fine"
    headers = {"a2a-version": "9.9"}
    async with A2AClient.for_endpoint(address, binding="GRPC", headers=headers) as c:
        with pytest.raises(VersionNotSupportedError) as caught:
            await c.send("hi")
    assert caught.value.code == -32009


async def test_raw_grpc_status_and_error_info(served: Served) -> None:
    """What any gRPC client sees: the status code and an ErrorInfo in the details trailer."""
    import grpc.aio
    from a2a_core.grpc.proto import request_class
    from a2a_core.wire import Operation
    from google.rpc import error_details_pb2, status_pb2

    request = request_class(Operation.GET_TASK)(id="missing")
    async with grpc.aio.insecure_channel(served.grpc_address) as channel:
        call = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(request.SerializeToString(), metadata=[("a2a-version", "1.0")])
    error = caught.value
    assert error.code() is grpc.StatusCode.NOT_FOUND
    trailers = dict(error.trailing_metadata() or ())
    raw = trailers["grpc-status-details-bin"]
    assert isinstance(raw, bytes)
    status = status_pb2.Status.FromString(raw)
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.domain) == ("TASK_NOT_FOUND", "a2a-protocol.org")


async def test_authentication_and_extensions_through_metadata() -> None:
    ext = "https://example.com/ext/required"
    card = scripted_card().model_copy(
        update={
            "capabilities": AgentCapabilities(
                streaming=True,
                extended_agent_card=True,
                extensions=[AgentExtension(uri=ext, required=True)],
            )
        }
    )
    extended = card.model_copy(update={"name": "Extended"})
    async with running_server(
        Echo(), card=card, grpc_port=0, bearer_tokens={"s3cret": "alice"}, extended_card=extended
    ) as srv:
        address = srv.grpc_address
        assert address is not None
        async with A2AClient.for_endpoint(address, binding="GRPC", timeout=10) as anonymous:
            with pytest.raises(AuthenticationRequiredError):
                await anonymous.send("hi")
        auth = {"Authorization": "Bearer s3cret"}
        async with A2AClient.for_endpoint(address, binding="GRPC", headers=auth) as c:
            with pytest.raises(ExtensionSupportRequiredError):
                await c.send("hi")
        async with A2AClient.for_endpoint(
            address, binding="GRPC", headers=auth, extensions=[ext]
        ) as c:
            assert (await c.send("hi")).text == "echo: hi"
            assert (await c.get_extended_card()).name == "Extended"


# --- interop with the official SDK -----------------------------------------------------


async def test_sdk_grpc_client_against_our_server(served: Served) -> None:
    """The SDK's generated stub and its messages, against our server: every unary kind, a stream."""
    a2a_pb2 = pytest.importorskip("a2a.types.a2a_pb2")
    a2a_pb2_grpc = pytest.importorskip("a2a.types.a2a_pb2_grpc")
    import grpc.aio

    metadata = [("a2a-version", "1.0")]
    async with grpc.aio.insecure_channel(served.grpc_address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        message = a2a_pb2.Message(
            message_id="m-1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="sdk")]
        )
        sent = await stub.SendMessage(
            a2a_pb2.SendMessageRequest(message=message), metadata=metadata
        )
        assert sent.WhichOneof("payload") == "task"
        assert sent.task.status.state == a2a_pb2.TASK_STATE_COMPLETED
        assert sent.task.status.message.parts[0].text == "echo: sdk"
        got = await stub.GetTask(a2a_pb2.GetTaskRequest(id=sent.task.id), metadata=metadata)
        assert got.id == sent.task.id
        listed = await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=metadata)
        assert sent.task.id in [t.id for t in listed.tasks]
        streamed = stub.SendStreamingMessage(
            a2a_pb2.SendMessageRequest(
                message=a2a_pb2.Message(
                    message_id="m-2", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="s")]
                )
            ),
            metadata=metadata,
        )
        kinds = [item.WhichOneof("payload") async for item in streamed]
        assert kinds[0] == "task"
        assert kinds[-1] == "status_update"
        config = await stub.CreateTaskPushNotificationConfig(
            a2a_pb2.TaskPushNotificationConfig(task_id=sent.task.id, url="http://127.0.0.1:9/h"),
            metadata=metadata,
        )
        assert config.id
        listed_configs = await stub.ListTaskPushNotificationConfigs(
            a2a_pb2.ListTaskPushNotificationConfigsRequest(task_id=sent.task.id),
            metadata=metadata,
        )
        assert [c.id for c in listed_configs.configs] == [config.id]
        await stub.DeleteTaskPushNotificationConfig(
            a2a_pb2.DeleteTaskPushNotificationConfigRequest(task_id=sent.task.id, id=config.id),
            metadata=metadata,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.CancelTask(a2a_pb2.CancelTaskRequest(id=sent.task.id), metadata=metadata)
        assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION


@pytest.fixture(scope="module")
def sdk_grpc() -> Iterator[str]:
    pytest.importorskip("a2a.server.request_handlers")
    port, grpc_port = free_port(), free_port()
    app = sdk_app(port, v03=False, grpc_port=grpc_port)
    with running(app, port, grpc_port=grpc_port, grpc_app=sdk_grpc_server(port)) as url:
        yield url


@pytest.mark.parametrize("name", sorted(scenarios.ALL))
async def test_our_grpc_client_against_the_sdk_grpc_server(sdk_grpc: str, name: str) -> None:
    async with await A2AClient.connect(sdk_grpc, preferred_bindings=["GRPC"], timeout=10) as c:
        assert c.binding == "GRPC"
        await scenarios.run(name, c)


async def test_sdk_grpc_errors_arrive_typed(sdk_grpc: str) -> None:
    async with await A2AClient.connect(sdk_grpc, preferred_bindings=["GRPC"], timeout=10) as c:
        with pytest.raises(TaskNotFoundError) as caught:
            await c.get_task("no-such-task")
    assert caught.value.code == -32001


@pytest.mark.parametrize(
    ("host", "public_url", "expected"),
    [
        ("127.0.0.1", None, "localhost:50051"),
        ("0.0.0.0", None, "localhost:50051"),
        ("10.1.2.3", None, "10.1.2.3:50051"),
        ("::1", None, "localhost:50051"),
        ("fd00::1", None, "[fd00::1]:50051"),
        ("0.0.0.0", "https://agents.example.com/research", "agents.example.com:50051"),
        ("0.0.0.0", "http://127.0.0.1:8000", "127.0.0.1:50051"),  # given: kept as is
    ],
)
def test_published_grpc_address(host: str, public_url: str | None, expected: str) -> None:
    from a2a_core.compose.serve import public_grpc_address

    assert public_grpc_address(host, 50051, public_url) == expected


async def test_concurrent_call_limit_is_a_retryable_busy_error() -> None:
    """``max_concurrent_rpcs``: a call past the limit is ServerBusyError (retryable)."""
    from a2a_core import ServerBusyError

    async with running_server(
        Echo(), card=_card(), grpc_port=0, grpc_options={"max_concurrent_rpcs": 1}
    ) as server:
        address = server.grpc_address
        assert address is not None
        async with A2AClient.for_endpoint(address, binding="GRPC", timeout=10) as client:
            first = asyncio.ensure_future(client.send("wait"))
            await asyncio.sleep(0.3)
            try:
                with pytest.raises(ServerBusyError) as caught:
                    await client.send("hi")
                assert caught.value.retryable
            finally:
                first.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await first
