"""A 0.3 message whose parts omit ``kind`` is answered (real sockets), as both official SDKs do.

python-a2a sends such parts. The one content member says what the part is; a
part with an unknown ``type`` (the conformance kit's check) is still refused.
"""

from __future__ import annotations

import httpx
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_http_support import rpc


async def echo(context: RequestContext) -> str:
    """Says what it got."""
    return f"got {context.text!r} and {[p.data for p in context.message.parts if p.data]}"


def message(*parts: dict[str, object]) -> dict[str, object]:
    return {"message": {"messageId": "m-1", "role": "user", "parts": list(parts)}}


async def test_parts_without_kind_are_read_by_their_member() -> None:
    async with running_server(echo) as server, httpx.AsyncClient(timeout=10) as http:
        body = rpc("message/send", message({"text": "hello"}, {"data": {"city": "Paris"}}))
        answer = (await http.post(server.url, json=body)).json()
        refused = (
            await http.post(
                server.url, json=rpc("message/send", message({"type": "odd", "text": "x"}))
            )
        ).json()
    assert answer["result"]["status"]["state"] == "completed"
    [artifact] = answer["result"]["artifacts"]
    assert artifact["parts"] == [{"kind": "text", "text": "got 'hello' and [{'city': 'Paris'}]"}]
    assert refused["error"]["code"] == -32602
