"""The agent card at the well-known paths: hybrid document, caching headers, conditional GETs."""

from __future__ import annotations

from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import httpx
import pytest
from a2a_core.server import A2AService
from a2a_core.server.asgi import CARD_PATHS, A2AApp, CardDocument, create_app
from a2a_http_support import echo, make_card

CARD = "/.well-known/agent-card.json"
LEGACY = "/.well-known/agent.json"


async def test_card_and_legacy_path_serve_the_same_document(
    client: httpx.AsyncClient, app: A2AApp
) -> None:
    current = await client.get(CARD)
    legacy = await client.get(LEGACY)
    assert current.status_code == legacy.status_code == 200
    assert current.content == legacy.content == app.card_document.body
    assert current.headers["content-type"] == "application/json"
    assert int(current.headers["content-length"]) == len(current.content)
    assert set(CARD_PATHS) == {CARD, LEGACY}


async def test_card_is_hybrid(client: httpx.AsyncClient) -> None:
    card = (await client.get(CARD)).json()
    assert card["name"] == "Echo"
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0", "0.3"}
    # 0.3 readers find their top-level fields too.
    assert card["protocolVersion"] == "0.3.0"
    assert card["url"] == "http://localhost:9999"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["capabilities"]["streaming"] is True


async def test_caching_headers(client: httpx.AsyncClient) -> None:
    r = await client.get(CARD)
    assert r.headers["cache-control"] == "public, max-age=300"
    etag = r.headers["etag"]
    assert etag.startswith('"')
    assert etag.endswith('"')
    assert len(etag) > 10
    modified = parsedate_to_datetime(r.headers["last-modified"])
    assert modified.tzinfo is not None


async def test_max_age_is_configurable(service: A2AService, make_client: Any) -> None:
    client = make_client(create_app(service, card_max_age=42))
    r = await client.get(CARD)
    assert r.headers["cache-control"] == "public, max-age=42"


@pytest.mark.parametrize(
    ("make_header", "status"),
    [
        (lambda etag: etag, 304),
        (lambda etag: "W/" + etag, 304),
        (lambda etag: '"other", ' + etag, 304),
        (lambda etag: "*", 304),
        (lambda etag: '"other"', 200),
        (lambda etag: etag[:-2] + '"', 200),
    ],
)
async def test_if_none_match(client: httpx.AsyncClient, make_header: Any, status: int) -> None:
    etag = (await client.get(CARD)).headers["etag"]
    r = await client.get(CARD, headers={"if-none-match": make_header(etag)})
    assert r.status_code == status
    if status == 304:
        assert r.content == b""
        assert r.headers["etag"] == etag
        assert "max-age" in r.headers["cache-control"]
    else:
        assert r.json()["name"] == "Echo"


async def test_if_modified_since(client: httpx.AsyncClient) -> None:
    first = await client.get(CARD)
    stamp = parsedate_to_datetime(first.headers["last-modified"]).timestamp()
    later = formatdate(stamp + 60, usegmt=True)
    earlier = formatdate(stamp - 60, usegmt=True)
    assert (await client.get(CARD, headers={"if-modified-since": later})).status_code == 304
    assert (
        await client.get(CARD, headers={"if-modified-since": first.headers["last-modified"]})
    ).status_code == 304
    assert (await client.get(CARD, headers={"if-modified-since": earlier})).status_code == 200
    assert (await client.get(CARD, headers={"if-modified-since": "garbage"})).status_code == 200
    # If-None-Match wins over If-Modified-Since.
    r = await client.get(CARD, headers={"if-modified-since": later, "if-none-match": '"x"'})
    assert r.status_code == 200


async def test_head_and_wrong_method(client: httpx.AsyncClient) -> None:
    full = await client.get(CARD)
    head = await client.head(CARD)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == full.headers["content-length"]
    assert head.headers["etag"] == full.headers["etag"]
    r = await client.post(CARD, json={})
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, HEAD"


async def test_served_card_can_differ_from_the_service_card(make_client: Any) -> None:
    svc = A2AService(echo, make_card())
    published = svc.card.model_copy(update={"name": "Published"})
    client = make_client(create_app(svc, card=published))
    assert (await client.get(CARD)).json()["name"] == "Published"
    await svc.aclose()


def test_card_document_is_encoded_once_and_hashed() -> None:
    doc = CardDocument({"name": "x"}, max_age=10, modified_at=0)
    assert doc.body == b'{"name":"x"}'
    other = CardDocument({"name": "y"}, max_age=10, modified_at=0)
    assert doc.etag != other.etag
    assert doc.last_modified == "Thu, 01 Jan 1970 00:00:00 GMT"
    with pytest.raises(ValueError, match="max_age"):
        CardDocument({}, max_age=-1)
