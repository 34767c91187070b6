"""In-process cost of one blocking send of a trivial echo agent (run: python bench_send.py).

Not a test: it prints microseconds per operation, for comparing changes on
the hot path (service -> manager -> run -> store -> bus).
"""

from __future__ import annotations

import asyncio
import sys
import time

from a2a_core.server import A2AService, ServerCallContext
from a2a_core.server.executor import RequestContext
from a2a_core.types import AgentCard, Message, SendMessageRequest


async def echo(context: RequestContext) -> str:
    return context.text


async def reply(context: RequestContext) -> Message:
    return Message.agent(context.text)


async def main(n: int) -> None:
    card = AgentCard(name="bench", description="bench", version="1.0")
    call = ServerCallContext(version="1.0")
    for label, agent in (("task reply", echo),):
        service = A2AService(agent, card)
        requests = [SendMessageRequest(message=Message.user(f"hi {i}")) for i in range(n)]
        for request in requests[:200]:  # warm up
            await service.send_message(request, call)
        best = float("inf")
        for _ in range(3):
            requests = [SendMessageRequest(message=Message.user(f"hi {i}")) for i in range(n)]
            start = time.process_time()
            for request in requests:
                await service.send_message(request, call)
            best = min(best, time.process_time() - start)
        print(f"{label}: {best / n * 1e6:.1f} us/op over {n} blocking sends (best of 3, CPU time)")
        await service.aclose()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
