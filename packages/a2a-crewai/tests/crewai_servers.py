"""Remote agents on loopback for the a2a-crewai tests: the official SDK's server and ours.

``sdk_server()`` runs an a2a-sdk 1.x server (JSON-RPC) in a thread of its
own, with a scripted agent: a first message starting with "ask" asks for a
name and greets it on the next turn; anything else is answered
``SDK says: <text>``. ``asking_agent`` and ``weather_agent`` are the same
behaviours as plain a2a_core agents.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.testing import asgi_in_thread, free_port


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess: this one, its HOME the tests' temporary one, no OpenAI."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["HOME"] = os.environ["A2A_CREWAI_TEST_HOME"]
    env.update(extra)
    return env


def _sdk_app(port: int) -> Any:
    from a2a.server.agent_execution import AgentExecutor as SdkExecutor
    from a2a.server.agent_execution import RequestContext as SdkContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.server.tasks import TaskUpdater as SdkUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Part,
        Task,
        TaskState,
        TaskStatus,
    )
    from starlette.applications import Starlette

    class Scripted(SdkExecutor):
        async def execute(self, context: SdkContext, event_queue: EventQueue) -> None:
            text = context.get_user_input()
            task_id, context_id = context.task_id or "", context.context_id or ""
            current = context.current_task
            if current is None:
                await event_queue.enqueue_event(
                    Task(
                        id=task_id,
                        context_id=context_id,
                        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                        history=[context.message] if context.message else [],
                    )
                )
            updater = SdkUpdater(event_queue, task_id, context_id)
            if current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                await updater.add_artifact([Part(text=f"Hello, {text}!")], name="greeting")
                await updater.complete()
                return
            if text.startswith("ask"):
                await updater.requires_input(
                    updater.new_agent_message([Part(text="What is your name?")])
                )
                return
            await updater.start_work(updater.new_agent_message([Part(text="thinking")]))
            await updater.add_artifact([Part(text=f"SDK says: {text}")], name="answer")
            await updater.complete()

        async def cancel(self, context: SdkContext, event_queue: EventQueue) -> None:
            await SdkUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="SDK Oracle",
        description="The official SDK serving a scripted agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="oracle", name="Oracle", description="Answers", tags=["oracle"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes)


@contextlib.contextmanager
def sdk_server() -> Iterator[str]:
    """The SDK's server on 127.0.0.1 in a background thread; yields its base URL."""
    port = free_port()
    with asgi_in_thread(_sdk_app(port), port=port, lifespan="off") as url:
        yield url


class AskingAgent(AgentExecutor):
    """Asks for a name on the first turn; greets it when the task is continued."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if not context.is_continuation:
            await updater.require_input("What is your name?")
            return
        await updater.finish_with(f"Hello, {context.text}!")


async def weather_agent(context: RequestContext) -> str:
    """Says what the weather is like."""
    return f"Weather desk: sunny in {context.text}"
