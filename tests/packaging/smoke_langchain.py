"""Run inside a fresh environment that holds only the a2a-langchain wheel and its dependencies.

It serves a LangChain chain (a prompt, a fake chat model that streams, a
parser) with the installed adapter, and calls it with the installed core's
client over 127.0.0.1: a blocking send and a stream. It prints one JSON line
for ``tests/packaging/test_install.py`` to check.
"""

from __future__ import annotations

import asyncio
import json

import a2a_core
import a2a_langchain
from a2a_core import A2AClient
from a2a_langchain import running_server
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate


async def main() -> None:
    replies = iter([AIMessage(content="Hello from a wheel"), AIMessage(content="Streamed too")])
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = prompt | GenericFakeChatModel(messages=replies) | StrOutputParser()
    async with (
        running_server(chain, name="Wheel smoke", host="127.0.0.1", port=0) as server,
        await A2AClient.connect(server.url) as client,
    ):
        answer = await client.send_text("Hi")
        streamed = (await client.stream("Stream, please").result()).text
        card = client.card.name if client.card is not None else None
        # The HTTP protocol uvicorn served with: httptools (a dependency of the core), not h11.
        http = [cls.__name__ for cls in server.server.config.http_protocol_class.__mro__]
    print(
        json.dumps(
            {
                "url": server.url,
                "card": card,
                "answer": answer,
                "streamed": streamed,
                "http": http,
                "modules": [a2a_core.__file__, a2a_langchain.__file__],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
