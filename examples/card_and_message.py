"""Build an agent card and a message, then print them in every wire version A2A speaks.

Run it with ``python3 dev.py demo`` (or ``uv run python examples/card_and_message.py``).

The same two objects of the internal model come out as:
- A2A 1.0 ProtoJSON (JSON-RPC and HTTP+JSON bodies are the same);
- A2A 0.3 JSON-RPC (``kind`` discriminators, lower-case enums, ``message/send``);
- A2A 0.3 HTTP+JSON (the 0.3 proto's JSON, ``POST /v1/message:send``);
- the hybrid agent card, the 1.0 card plus the 0.3 top-level fields, which
  clients of either version can read.
"""

from __future__ import annotations

import json
from typing import Any

from a2a_core import AgentCardBuilder, Message, Part, Role, SendMessageRequest, new_id
from a2a_core.wire import Codec, Operation, V10Codec, dumps
from a2a_core.wire.v03 import V03JsonRpcCodec
from a2a_core.wire.v03_rest import V03RestCodec


def build_card() -> AgentCardBuilder:
    return (
        AgentCardBuilder("Trip planner", description="Plans trips and books them", version="1.2.0")
        .provider("Example Travel", "https://travel.example.com")
        .jsonrpc("https://agents.example.com/trips/a2a")  # 1.0 and 0.3, preferred
        .http_json("https://agents.example.com/trips/rest")  # 1.0 and 0.3
        .skill(
            "plan",
            "Plan a trip",
            "Suggests an itinerary for a destination and dates",
            tags=["travel", "planning"],
            examples=["Three days in Lisbon in May"],
        )
        .output_modes("text/plain", "application/json")
        .streaming()
        .bearer_auth(bearer_format="JWT")
        .require("bearer")
    )


def build_message() -> Message:
    return Message(
        message_id=new_id(),
        context_id="ctx-1",
        role=Role.USER,
        parts=[
            Part(text="Plan three days in Lisbon"),
            Part(data={"budget_eur": 900, "travellers": 2}),
            Part(raw=b"%PDF-1.7 ...", filename="passport.pdf", media_type="application/pdf"),
        ],
    )


def show(title: str, value: Any) -> None:
    print(f"--- {title}")
    print(json.dumps(json.loads(dumps(value)), indent=2, ensure_ascii=False))
    print()


def jsonrpc_request(codec: Codec, request: SendMessageRequest) -> dict[str, Any]:
    method = Operation.SEND_MESSAGE.method(codec.version)
    params = codec.encode_request(Operation.SEND_MESSAGE, request)
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def main() -> None:
    builder = build_card()
    card = builder.build()
    request = SendMessageRequest(message=build_message())

    v10, v03_rpc, v03_rest = V10Codec(), V03JsonRpcCodec(), V03RestCodec()

    print("=== A2A 1.0 (ProtoJSON; header A2A-Version: 1.0)\n")
    show("agent card (GET /.well-known/agent-card.json)", v10.encode_card(card))
    show("JSON-RPC request", jsonrpc_request(v10, request))
    show("HTTP+JSON body (POST /message:send)", v10.encode_request(Operation.SEND_MESSAGE, request))

    print("=== A2A 0.3 JSON-RPC (no version header)\n")
    show("agent card", v03_rpc.encode_card(card))
    show("JSON-RPC request", jsonrpc_request(v03_rpc, request))

    print("=== A2A 0.3 HTTP+JSON\n")
    show("agent card", v03_rest.encode_card(card))
    show("body (POST /v1/message:send)", v03_rest.encode_request(Operation.SEND_MESSAGE, request))

    print("=== Hybrid agent card (what a server speaking both versions publishes)\n")
    show("agent card", builder.build_hybrid())


if __name__ == "__main__":
    main()
