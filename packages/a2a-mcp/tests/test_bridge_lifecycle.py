"""``a2a mcp`` over a session's life: auth per agent, timeouts, cards that change, and the
tasks a session leaves behind being canceled when it closes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from a2a_core import A2AClient, TaskState, running_server
from mcp_agents import (
    AskingAgent,
    RefusingAgent,
    SlowAgent,
    WhoAgent,
    asking_card,
    card,
    echo_agent,
    refusing_card,
    skill,
    slow_card,
    who_card,
)
from mcp_support import TRANSPORTS, Seen, bridge_session, text_of

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_that_takes_too_long_fails_and_its_task_is_canceled(transport: str) -> None:
    agent = SlowAgent()
    async with (
        running_server(agent, card=slow_card()) as server,
        bridge_session(transport, [server.url], "--timeout", "1") as mcp,
    ):
        result = await mcp.call_tool("Slow_slow", {"text": "go"})
        assert result.isError
        assert text_of(result) == (
            f"the A2A agent at {server.url} did not finish within 1 s (its task was canceled)"
        )
        with anyio.fail_after(20):
            await agent.stopped.wait()
        async with await A2AClient.connect(server.url) as a2a:
            task = await a2a.get_task(agent.canceled[0])
        assert task.status.state is TaskState.CANCELED


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_closing_the_session_cancels_the_tasks_it_left_waiting(transport: str) -> None:
    async with running_server(AskingAgent(), card=asking_card()) as server:
        async with bridge_session(transport, [server.url]) as mcp:
            first = await mcp.call_tool("Weather_forecast", {"text": "weather please"})
            assert first.structuredContent is not None
            task_id = first.structuredContent["task_id"]
        async with await A2AClient.connect(server.url) as a2a:
            with anyio.fail_after(20):
                while (await a2a.get_task(task_id)).status.state is not TaskState.CANCELED:  # noqa: ASYNC110
                    await anyio.sleep(0.1)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_closing_the_session_cancels_a_call_in_flight(transport: str) -> None:
    agent = SlowAgent()
    seen = Seen()
    async with running_server(agent, card=slow_card()) as server:
        async with (
            bridge_session(transport, [server.url], seen=seen) as mcp,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(mcp.call_tool, "Slow_slow", {"text": "go"})
            with anyio.fail_after(20):
                await seen.updated.wait()  # the host has read all the bridge sent so far
            tg.cancel_scope.cancel()
        with anyio.fail_after(20):
            await agent.stopped.wait()


async def test_static_headers_authenticate_the_bridge() -> None:
    async with running_server(WhoAgent(), card=who_card(), api_keys={"k-123": "bridge"}) as server:
        async with bridge_session("stdio", [server.url], "--header", "X-API-Key:k-123") as mcp:
            result = await mcp.call_tool("Who_whoami", {"text": "?"})
            assert text_of(result) == "hello bridge"
        async with bridge_session("stdio", [server.url]) as mcp:
            refused = await mcp.call_tool("Who_whoami", {"text": "?"})
            assert refused.isError
            assert text_of(refused).startswith(f"the A2A agent at {server.url} answered with")


async def test_over_http_the_callers_bearer_token_is_passed_through() -> None:
    tokens = {"tok-ada": "ada", "tok-bob": "bob"}
    async with running_server(WhoAgent(), card=who_card(), bearer_tokens=tokens) as server:
        for token, who in tokens.items():
            headers = {"Authorization": f"Bearer {token}"}
            async with bridge_session(
                "http", [server.url], "--passthrough", headers=headers
            ) as mcp:
                result = await mcp.call_tool("Who_whoami", {"text": "?"})
                assert text_of(result) == f"hello {who}"
        async with bridge_session("http", [server.url], "--passthrough") as mcp:
            missing = await mcp.call_tool("Who_whoami", {"text": "?"})
            assert missing.isError
            assert "needs the caller's bearer token" in text_of(missing)


async def test_a_changed_card_updates_the_tools_and_notifies_the_host() -> None:
    """The agent is redeployed at the same address with one more skill."""
    one = card("Echo", skill("echo", "Echo", "Repeats"))
    two = card("Echo", skill("echo", "Echo", "Repeats"), skill("shout", "Shout", "Repeats loudly"))
    seen = Seen()
    first: Any = running_server(echo_agent(), card=one)
    url: str = (await first.__aenter__()).url
    try:
        async with bridge_session("stdio", [url], "--refresh", "0.3", seen=seen) as mcp:
            assert [t.name for t in (await mcp.list_tools()).tools] == ["Echo_echo"]
            await first.__aexit__(None, None, None)
            first = None
            async with running_server(echo_agent(), card=two, port=int(url.rsplit(":", 1)[1])):
                with anyio.fail_after(20):
                    await seen.list_changed.wait()
                tools = (await mcp.list_tools()).tools
                assert [t.name for t in tools] == ["Echo_echo", "Echo_shout"]
                result = await mcp.call_tool("Echo_shout", {"text": "hey"})
                assert text_of(result) == "echo: hey"
    finally:
        if first is not None:
            await first.__aexit__(None, None, None)


async def test_oauth2_client_credentials_authenticate_the_bridge() -> None:
    from a2a_core.testing.idp import IdentityProvider

    async with IdentityProvider(audience="trips") as idp:
        idp.add_client("bridge-app", "s3cret", scopes=["a2a.send"])
        async with running_server(
            WhoAgent(),
            card=who_card(),
            oidc_issuer=idp.issuer,
            oidc_audience="trips",
            oidc_token_url=idp.token_url,
        ) as server:
            credentials = ["--client-id", "bridge-app", "--client-secret", "s3cret"]
            async with bridge_session("stdio", [server.url], *credentials) as mcp:
                first = await mcp.call_tool("Who_whoami", {"text": "?"})
                second = await mcp.call_tool("Who_whoami", {"text": "?"})
            assert [text_of(first), text_of(second)] == ["hello bridge-app"] * 2
            assert idp.counters.token == 1  # the token is cached between calls


async def test_failed_and_rejected_tasks_are_tool_errors_with_one_line() -> None:
    async with (
        running_server(RefusingAgent(), card=refusing_card()) as server,
        bridge_session("stdio", [server.url]) as mcp,
    ):
        rejected = await mcp.call_tool("Booker_book", {"text": "a week on Mars"})
        failed = await mcp.call_tool("Booker_book", {"text": "a week in Rome"})
        assert (rejected.isError, text_of(rejected)) == (
            True,
            "the agent rejected the task: I do not plan trips to Mars",
        )
        assert (failed.isError, text_of(failed)) == (
            True,
            "the agent failed the task: the booking system is down",
        )


async def test_log_messages_follow_the_level_the_host_sets() -> None:
    seen = Seen()
    async with (
        running_server(echo_agent(), card=card("Echo", skill("echo", "Echo", "Repeats"))) as srv,
        bridge_session("stdio", [srv.url], seen=seen) as mcp,
    ):
        await mcp.call_tool("Echo_echo", {"text": "loud"})
        heard = len(seen.logs)
        assert heard > 0
        await mcp.set_logging_level("warning")
        await mcp.call_tool("Echo_echo", {"text": "quiet"})
        await mcp.send_ping()  # anything sent before the ping's answer has arrived by now
        assert len(seen.logs) == heard
