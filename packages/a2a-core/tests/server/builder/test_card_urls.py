"""The card's interface URLs match the origin the client used (issue 10), over real sockets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a_core import A2AClient, configure_service, create_app, running_server
from a2a_core.server import ConfigurationError, RequestContext
from a2a_core.server.asgi import files_route
from a2a_core.server.asgi.files_route import file_base
from a2a_core.server.asgi.http import header_map
from a2a_core.server.asgi.origin import TrustedProxies, request_base
from asgi_server import serving

pytestmark = pytest.mark.timeout(60)

CARD = "/.well-known/agent-card.json"


async def shout(context: RequestContext) -> str:
    """Shouts back."""
    return context.text.upper()


def urls(card: dict[str, Any]) -> set[str]:
    return {i["url"] for i in card["supportedInterfaces"]}


async def test_the_card_names_the_origin_each_client_used() -> None:
    async with running_server(shout, host="127.0.0.1") as server:
        port = server.port
        async with httpx.AsyncClient() as http:
            via_ip = (await http.get(f"http://127.0.0.1:{port}{CARD}")).json()
            via_name = (await http.get(f"http://localhost:{port}{CARD}")).json()
        assert urls(via_ip) == {f"http://127.0.0.1:{port}"}
        assert urls(via_name) == {f"http://localhost:{port}"}
        assert via_ip["url"] == f"http://127.0.0.1:{port}"  # the 0.3 field too
        for base in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            async with await A2AClient.connect(base) as client:
                assert (await client.send("hi")).text == "HI"


async def test_card_caching_is_per_origin() -> None:
    async with running_server(shout) as server:
        ip, name = f"http://127.0.0.1:{server.port}{CARD}", f"http://localhost:{server.port}{CARD}"
        async with httpx.AsyncClient() as http:
            first = await http.get(ip)
            other = await http.get(name)
            assert first.headers["vary"] == "host"
            assert first.headers["etag"] != other.headers["etag"]
            same = await http.get(ip, headers={"If-None-Match": first.headers["etag"]})
            assert same.status_code == 304
            # a copy cached for one origin is not current for the other
            crossed = await http.get(name, headers={"If-None-Match": first.headers["etag"]})
            assert crossed.status_code == 200
            assert urls(crossed.json()) == {f"http://localhost:{server.port}"}


async def test_a_configured_public_url_always_wins() -> None:
    public = "https://agents.example.com/shout"
    async with running_server(shout, public_url=public + "/") as server:
        async with httpx.AsyncClient() as http:
            response = await http.get(
                f"http://127.0.0.1:{server.port}{CARD}",
                headers={"X-Forwarded-Host": "evil.example", "Forwarded": "host=evil.example"},
            )
        assert urls(response.json()) == {public}
        assert "vary" not in response.headers
        assert server.app.card.supported_interfaces[0].url == public


async def test_forwarded_headers_are_ignored_without_trusted_proxies() -> None:
    async with running_server(shout) as server:
        async with httpx.AsyncClient() as http:
            card = (
                await http.get(
                    f"http://127.0.0.1:{server.port}{CARD}",
                    headers={
                        "X-Forwarded-Proto": "https",
                        "X-Forwarded-Host": "evil.example",
                        "X-Forwarded-Prefix": "/phish",
                        "Forwarded": "proto=https;host=evil.example",
                    },
                )
            ).json()
        assert urls(card) == {f"http://127.0.0.1:{server.port}"}


async def test_forwarded_headers_of_a_trusted_proxy_say_the_origin() -> None:
    async with running_server(shout, trusted_proxies=["127.0.0.0/8"]) as server:
        url = f"http://127.0.0.1:{server.port}{CARD}"
        async with httpx.AsyncClient() as http:
            x_forwarded = (
                await http.get(
                    url,
                    headers={
                        "X-Forwarded-Proto": "https",
                        "X-Forwarded-Host": "agents.example.com",
                        "X-Forwarded-Prefix": "/shout/",
                    },
                )
            ).json()
            rfc7239 = (
                await http.get(url, headers={"Forwarded": 'proto=https;host="a.example:8443"'})
            ).json()
            response = await http.get(url)
        assert urls(x_forwarded) == {"https://agents.example.com/shout"}
        assert urls(rfc7239) == {"https://a.example:8443"}
        assert urls(response.json()) == {f"http://127.0.0.1:{server.port}"}
        assert "x-forwarded-host" in response.headers["vary"]


async def test_create_app_never_publishes_an_empty_card() -> None:
    """``create_app`` of a configured agent publishes its routes under the request's origin."""
    service = configure_service(shout)
    assert service.card.supported_interfaces == []
    async with serving(create_app(service)) as port:
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as http:
            card = (await http.get(url + CARD)).json()
        assert urls(card) == {url}
        async with await A2AClient.connect(url) as client:
            assert (await client.send("hi")).text == "HI"


async def test_create_app_publishes_a_public_url_and_its_prefixes() -> None:
    service = configure_service(shout)
    app = create_app(service, public_url="https://x.example/a", jsonrpc_path="/rpc")
    async with serving(app) as port, httpx.AsyncClient() as http:
        card = (await http.get(f"http://127.0.0.1:{port}{CARD}")).json()
    assert {(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]} == {
        ("JSONRPC", "https://x.example/a/rpc"),
        ("HTTP+JSON", "https://x.example/a"),
    }


def test_an_app_with_no_binding_is_refused_at_startup() -> None:
    service = configure_service(shout)
    with pytest.raises(ConfigurationError, match="no binding"):
        create_app(service, jsonrpc_path=None, rest=False)


def test_a_bad_trusted_proxy_entry_is_refused_at_startup() -> None:
    with pytest.raises(ConfigurationError, match="trusted_proxies"):
        TrustedProxies(["10.0.0.300"])


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("agents.example.com", "http://agents.example.com/m"),
        ("[::1]:8080", "http://[::1]:8080/m"),
        ("evil.example/x?y", "http://10.0.0.1:9000/m"),  # not a host: the server's address
        ('a"b', "http://10.0.0.1:9000/m"),
        (None, "http://10.0.0.1:9000/m"),
    ],
)
def test_request_base_accepts_only_a_valid_host(host: str | None, expected: str) -> None:
    scope = {"scheme": "http", "server": ("10.0.0.1", 9000), "root_path": "/m", "client": None}
    headers = {"host": host} if host is not None else {}
    assert request_base(scope, headers, None) == expected


_FILE_BASE_CASES = [
    [(b"host", b"agents.example.com")],
    [(b"host", b"Agents.Example.com:8443"), (b"accept", b"*/*")],
    [(b"host", b"a.example"), (b"host", b"b.example")],  # joined: not a host
    [(b"host", b"evil.example/x?y")],
    [],
]


@pytest.mark.parametrize("raw", _FILE_BASE_CASES)
@pytest.mark.parametrize("root", ["", "/m"])
def test_file_base_says_what_request_base_says(raw: list[tuple[bytes, bytes]], root: str) -> None:
    scope = {"scheme": "http", "server": ("10.0.0.1", 9000), "root_path": root, "headers": raw}
    expected = request_base(scope, header_map(raw), None)
    assert file_base(scope, None, None) == expected
    assert file_base(scope, None, None) == expected  # from the cache, the same


def test_file_base_tells_origins_apart_and_stays_bounded() -> None:
    def scope(host: bytes, scheme: str = "http") -> dict[str, Any]:
        return {
            "scheme": scheme,
            "server": ("10.0.0.1", 80),
            "root_path": "",
            "headers": [(b"host", host)],
        }

    assert file_base(scope(b"one.example"), None, None) == "http://one.example"
    assert file_base(scope(b"two.example"), None, None) == "http://two.example"
    assert file_base(scope(b"one.example", "https"), None, None) == "https://one.example"
    for index in range(3 * files_route._BASES_KEPT):
        assert file_base(scope(b"h%d.example" % index), None, None) == f"http://h{index}.example"
    assert len(files_route._bases) <= files_route._BASES_KEPT
    assert (
        file_base(scope(b"x.example"), "https://public.example/", None) == "https://public.example"
    )
