"""``RemoteA2ARunnable``: a remote A2A agent as a LangChain ``Runnable``.

Input: text, a LangChain message or a list of them (the last human message is
sent, its image/audio/file content blocks as file parts: the remote agent
keeps its own conversation by contextId), a state
dict with ``messages``, any other dict (sent as a data part), or A2A
``Message`` / ``Part`` objects. Output: the answer's text (``output="text"``)
or an ``AIMessage`` carrying the raw reply in ``response_metadata["a2a"]``
and the received files as content blocks (``output="message"``), so it
drops into chains and LangGraph nodes.
``stream``/``astream`` yield the text as the remote agent produces it.

Conversations follow the caller's ``thread_id``: calls in one thread share a
remote contextId, and when the remote agent asked for input, the next call
in that thread answers it (continues the same remote task). The remote side
is ``a2a_core.client.RemoteAgentSession`` (``.session``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from a2a_core.client import A2AClient, RemoteAgentSession, RemoteReply
from a2a_core.client.session import outgoing_parts
from a2a_core.identity import Credential
from a2a_core.types import AgentCard, Message, Part
from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from ._convert import file_block, jsonable, message_parts
from ._remote import caller_credential, thread_key

__all__ = ["RemoteA2ARunnable"]

Output = Literal["text", "message"]


def _message_parts(message: BaseMessage) -> list[Part]:
    """A message's text, then its image/audio/file content blocks as file parts."""
    parts = message_parts(message)
    return parts or outgoing_parts("")


def input_parts(value: Any) -> list[Part]:
    """The parts sent for a runnable input (see the module docstring)."""
    if isinstance(value, str):
        return outgoing_parts(value)
    if isinstance(value, Message):
        return list(value.parts)
    if isinstance(value, Part):
        return [value]
    if isinstance(value, BaseMessage):
        return _message_parts(value)
    if isinstance(value, Mapping) and "messages" in value:
        value = cast(Mapping[str, Any], value)["messages"]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = cast(Sequence[Any], value)
        if items and all(isinstance(p, Part) for p in items):
            return list(cast(Sequence[Part], items))
        humans = [m for m in items if isinstance(m, HumanMessage)]
        if humans:
            return _message_parts(humans[-1])
        if items and isinstance(items[-1], BaseMessage):
            return _message_parts(items[-1])
        if items and isinstance(items[-1], tuple | list):
            last = cast(Sequence[Any], items[-1])
            return outgoing_parts(str(last[-1]) if last else "")
    return outgoing_parts("", jsonable(value))


class RemoteA2ARunnable(Runnable[Any, Any]):
    """A remote A2A agent with ``invoke``/``ainvoke``/``batch``/``stream``/``astream``.

    ``target``: the agent's URL, its card, or (async use only) a connected
    ``A2AClient``. Other keyword options go to ``A2AClient.connect``
    (``headers``, ``auth``, ``timeout``...).
    """

    def __init__(
        self,
        target: str | AgentCard | A2AClient,
        *,
        name: str | None = None,
        output: Output = "text",
        **connect_options: Any,
    ) -> None:
        if output not in ("text", "message"):
            raise ValueError(f"output must be 'text' or 'message', not {output!r}")
        self.session = RemoteAgentSession(target, **connect_options)
        self.output = output
        self.name = name or "RemoteA2ARunnable"

    def _credential(self, config: RunnableConfig) -> Credential | None:
        """The caller's credential, read only when the session forwards it (passthrough)."""
        return caller_credential(config) if self.session.passthrough else None

    def __repr__(self) -> str:
        return f"RemoteA2ARunnable({self.session.label!r})"

    @property
    def InputType(self) -> Any:
        return str | dict[str, Any] | BaseMessage | list[BaseMessage]

    @property
    def OutputType(self) -> Any:
        return str if self.output == "text" else AIMessage

    # -- one exchange ------------------------------------------------------------------------
    def _shape(self, reply: RemoteReply) -> Any:
        if self.output == "text":
            return reply.text
        files = [file_block(p) for p in reply.files if p.raw is not None]
        content: Any = [{"type": "text", "text": reply.text}, *files] if files else reply.text
        return AIMessage(
            content=content,
            name=reply.agent,
            response_metadata={"a2a": reply.to_json()},
        )

    def _chunk(self, text: str) -> Any:
        return text if self.output == "text" else AIMessageChunk(content=text)

    # -- Runnable ----------------------------------------------------------------------------
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._invoke, input, ensure_config(config), **kwargs)

    def _invoke(
        self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        reply = self.session.ask_sync(
            input_parts(value),
            conversation=thread_key(config),
            credential=self._credential(config),
        )
        return self._shape(reply)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._ainvoke, input, ensure_config(config), **kwargs)

    async def _ainvoke(
        self, value: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        reply = await self.session.ask(
            input_parts(value),
            conversation=thread_key(config),
            credential=self._credential(config),
        )
        return self._shape(reply)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(
            one(), self._astream, ensure_config(config), **kwargs
        ):
            yield chunk

    async def _astream(
        self,
        inputs: AsyncIterator[Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> AsyncIterator[Any]:
        value = [item async for item in inputs][-1]
        deltas = self.session.stream_text(
            input_parts(value),
            conversation=thread_key(config),
            credential=self._credential(config),
        )
        async for delta in deltas:
            yield self._chunk(delta)

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        def one() -> Iterator[Any]:
            yield input

        yield from self._transform_stream_with_config(
            one(), self._stream, ensure_config(config), **kwargs
        )

    def _stream(
        self,
        inputs: Iterator[Any],
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> Iterator[Any]:
        value = list(inputs)[-1]
        deltas = self.session.stream_text_sync(
            input_parts(value),
            conversation=thread_key(config),
            credential=self._credential(config),
        )
        for delta in deltas:
            yield self._chunk(delta)

    # -- lifecycle ---------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the connections this runnable opened."""
        await self.session.aclose()

    def close(self) -> None:
        """Close the sync connection (from sync code)."""
        self.session.close()
