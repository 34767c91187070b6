"""Conversations across the tasks of a context, over a real socket.

A follow-up in the same context is a new task. A served chat runnable that
takes messages and has no memory of its own is given the context's earlier
turns (bounded, ``conversation="context"``, the default); one with its own
memory (a checkpointer, a ``RunnableWithMessageHistory``) gets only the new
message, so nothing is remembered twice.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_langchain import running_server
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import ConfigurableFieldSpec
from langchain_core.runnables.history import RunnableWithMessageHistory
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from lc_fakes import RecallChatModel

# LangChain 1.x deprecates these in favour of LangGraph persistence; people still use them.
pytestmark = [
    pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated"),
    pytest.mark.filterwarnings("ignore:The class `InMemoryChatMessageHistory` was deprecated"),
]


def messages_graph(checkpointer: Any = None) -> Any:
    model = RecallChatModel()

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    return builder.compile(checkpointer=checkpointer)


def placeholder_chain() -> Any:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a helpful assistant."),
            MessagesPlaceholder(variable_name="history"),
            ("human", "{question}"),
        ]
    )
    return prompt | RecallChatModel()


async def conversation(url: str, *texts: str, context_id: str | None = None) -> list[str]:
    """Each text sent as a new task in one context; the answers."""
    context = context_id or str(uuid.uuid4())
    answers: list[str] = []
    async with await A2AClient.connect(url) as client:
        for text in texts:
            answers.append((await client.send(text, context_id=context)).text)
    return answers


@pytest.mark.parametrize(
    "make", [RecallChatModel, placeholder_chain, messages_graph], ids=["model", "chain", "graph"]
)
async def test_a_chat_runnable_hears_the_earlier_turns_of_its_context(make: Any) -> None:
    async with running_server(make()) as server:
        answers = await conversation(server.url, "my name is Ada", "what is my name?")
        other = await conversation(server.url, "who am I?")
    assert answers[0] == "heard: my name is Ada"
    assert answers[1] == "heard: my name is Ada | what is my name?"
    assert other == ["heard: who am I?"]  # another context knows nothing of it


async def test_the_earlier_turns_are_bounded_and_can_be_switched_off() -> None:
    async with running_server(RecallChatModel(), history_limit=2) as server:
        bounded = await conversation(server.url, "one", "two", "three")
    # Each earlier task is its message and its answer: two messages keep one task.
    assert bounded[2] == "heard: two | three"
    async with running_server(RecallChatModel(), conversation="task") as server:
        alone = await conversation(server.url, "one", "two")
    assert alone == ["heard: one", "heard: two"]


async def test_a_graph_with_a_checkpointer_is_not_told_twice() -> None:
    async with running_server(messages_graph(InMemorySaver())) as server:
        answers = await conversation(server.url, "my name is Ada", "what is my name?")
    assert answers[1] == "heard: my name is Ada | what is my name?"


# -- RunnableWithMessageHistory -----------------------------------------------------------


def with_history(store: dict[Any, InMemoryChatMessageHistory], **options: Any) -> Any:
    """LangChain's documented shape: a prompt over a history placeholder, with a factory."""

    def get_session_history(session_id: str) -> BaseChatMessageHistory:
        if session_id not in store:
            store[session_id] = InMemoryChatMessageHistory()
        return store[session_id]

    return RunnableWithMessageHistory(
        placeholder_chain(),
        get_session_history,
        input_messages_key="question",
        history_messages_key="history",
        **options,
    )


async def test_a_message_history_is_kept_per_context() -> None:
    store: dict[Any, InMemoryChatMessageHistory] = {}
    async with running_server(with_history(store)) as server:
        first = await conversation(server.url, "my name is Ada", "what is my name?")
        second = await conversation(server.url, "I am Bob", "and my name?")
    assert first == ["heard: my name is Ada", "heard: my name is Ada | what is my name?"]
    assert second == ["heard: I am Bob", "heard: I am Bob | and my name?"]
    assert len(store) == 2  # one history per context, each holding its two exchanges
    assert all(len(history.messages) == 4 for history in store.values())


async def test_a_message_history_with_user_and_conversation_keys() -> None:
    store: dict[Any, InMemoryChatMessageHistory] = {}

    def get_history(user_id: str, conversation_id: str) -> BaseChatMessageHistory:
        return store.setdefault((user_id, conversation_id), InMemoryChatMessageHistory())

    runnable = RunnableWithMessageHistory(
        placeholder_chain(),
        get_history,
        input_messages_key="question",
        history_messages_key="history",
        history_factory_config=[
            ConfigurableFieldSpec(id="user_id", annotation=str),
            ConfigurableFieldSpec(id="conversation_id", annotation=str),
        ],
    )
    context = str(uuid.uuid4())
    async with running_server(runnable) as server:
        answers = await conversation(server.url, "hello", "again", context_id=context)
    assert answers[1] == "heard: hello | again"
    assert list(store) == [(context, context)]  # anonymous caller: the context both times


async def test_the_official_sdk_client_continues_a_message_history() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    store: dict[Any, InMemoryChatMessageHistory] = {}
    context = str(uuid.uuid4())
    answers: list[str] = []
    async with running_server(with_history(store)) as server:
        client = await ClientFactory(ClientConfig(streaming=False)).create_from_url(server.url)
        try:
            for text in ("my name is Ada", "what is my name?"):
                request = SendMessageRequest(
                    message=Message(
                        role=Role.ROLE_USER,
                        message_id=str(uuid.uuid4()),
                        context_id=context,
                        parts=[Part(text=text)],
                    )
                )
                task = [r async for r in client.send_message(request)][-1].task
                answers.append("".join(p.text for a in task.artifacts for p in a.parts))
        finally:
            await client.close()
    assert answers == ["heard: my name is Ada", "heard: my name is Ada | what is my name?"]
    assert list(store) == [context]
