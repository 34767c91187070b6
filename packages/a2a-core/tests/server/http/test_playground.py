"""The playground page as HTTP: where it is served, with which headers, and when not.

Over ASGI (``httpx.ASGITransport``) and one real socket: the page and its
files under ``/playground/`` with a strict CSP; a browser at the agent's URL
is sent there (also when mounted); curl and JSON clients keep their answers;
``playground=False`` serves none of it. The files themselves are checked for
what the CSP forbids (inline scripts and styles) and for anything fetched
from elsewhere. The browser tests (tests/browser) drive the page itself.
"""

from __future__ import annotations

import re
from importlib import resources

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_core.server import A2AService
from a2a_core.server.asgi import create_app
from a2a_http_support import echo, make_card

pytestmark = pytest.mark.timeout(60)

BROWSER = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
STATIC = resources.files("a2a_core.server.asgi") / "playground_static"
FILES = sorted(item.name for item in STATIC.iterdir() if item.is_file())


def client_for(app: object, root_path: str = "") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app, root_path=root_path)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://host.test")


async def test_the_page_and_its_files_are_served_with_a_strict_csp(service: A2AService) -> None:
    async with client_for(create_app(service)) as client:
        page = await client.get("/playground/")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        csp = page.headers["content-security-policy"]
        for directive in (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
        ):
            assert directive in csp
        assert "unsafe-inline" not in csp
        assert "unsafe-eval" not in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        assert '<meta name="a2a-agent" content="../">' in page.text
        kinds = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
        for name in FILES:
            r = await client.get(f"/playground/{name}")
            assert r.status_code == 200, name
            assert r.headers["content-type"].startswith(kinds[name[name.rindex(".") :]])
            assert r.headers["content-security-policy"] == csp
            # conditional GET: the page's files are revalidated, not re-sent
            again = await client.get(
                f"/playground/{name}", headers={"if-none-match": r.headers["etag"]}
            )
            assert (again.status_code, again.content) == (304, b"")
        head = await client.head("/playground/app.js")
        assert (head.status_code, head.content) == (200, b"")
        assert int(head.headers["content-length"]) > 0


async def test_unknown_files_and_other_methods_are_refused(service: A2AService) -> None:
    async with client_for(create_app(service)) as client:
        for path in ("/playground/nope.js", "/playground/../app.py", "/playground/a/app.js"):
            assert (await client.get(path)).status_code == 404, path
        r = await client.post("/playground/", content=b"x")
        assert (r.status_code, r.headers["allow"]) == (405, "GET, HEAD")
        bare = await client.get("/playground")
        assert (bare.status_code, bare.headers["location"]) == (303, "/playground/")
        # a REST route that merely starts like it is still the REST binding's
        assert (await client.get("/playgroundx")).status_code == 404


async def test_a_browser_at_the_agent_url_goes_to_the_playground(unused_tcp_port: int) -> None:
    async with (
        running_server(echo, port=unused_tcp_port) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        r = await client.get("/", headers=BROWSER)
        assert (r.status_code, r.headers["location"]) == (303, "/playground/")
        followed = await client.get("/", headers=BROWSER, follow_redirects=True)
        assert followed.url.path == "/playground/"
        assert "<title>A2A playground</title>" in followed.text
        # curl still gets the plain-text landing page, a JSON client the JSON-RPC 405
        text = await client.get("/", headers={"accept": "*/*"})
        assert text.headers["content-type"] == "text/plain; charset=utf-8"
        assert (await client.get("/", headers={"accept": "application/json"})).status_code == 405


async def test_mounted_apps_send_browsers_below_their_mount_path() -> None:
    service = A2AService(echo, make_card())
    app = create_app(service, jsonrpc_path="/rpc")
    async with client_for(app, root_path="/agents/one") as client:
        for path in ("/agents/one/", "/agents/one/rpc"):
            r = await client.get(path, headers=BROWSER)
            assert (r.status_code, r.headers["location"]) == (303, "/agents/one/playground/")
        page = await client.get("/agents/one/playground/")
        assert page.status_code == 200
    await service.aclose()


async def test_playground_false_serves_none_of_it(unused_tcp_port: int) -> None:
    async with (
        running_server(echo, port=unused_tcp_port, playground=False) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        assert srv.app.options.playground is False
        for path in ("/playground/", "/playground/app.js"):
            assert (await client.get(path)).status_code == 404
        page = await client.get("/", headers=BROWSER)  # the landing page, as before
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "playground" not in page.text


def test_create_app_takes_the_option(service: A2AService) -> None:
    assert create_app(service).options.playground is True
    assert create_app(service, playground=False).options.playground is False


def test_the_files_need_no_inline_code_and_nothing_from_elsewhere() -> None:
    texts = {name: (STATIC / name).read_text(encoding="utf-8") for name in FILES}
    page = texts["index.html"]
    # every script is a module file of ours; no inline script, handler or style
    scripts = re.findall(r"<script\b[^>]*>([^<]*)</script>", page)
    assert scripts == [""]
    assert '<script type="module" src="app.js"></script>' in page
    assert not re.search(r"\son[a-z]+=", page)
    assert "<style" not in page
    assert "style=" not in page
    # the modules import each other by relative path only
    for name, text in texts.items():
        if name.endswith(".js"):
            for target in re.findall(r'from "([^"]+)"', text):
                assert target.startswith("./"), (name, target)
                assert target[2:] in texts, (name, target)
            assert "innerHTML" not in text, name
            assert "eval(" not in text, name
        # no URL of another site: nothing is fetched from the internet
        assert not re.findall(r"(?:src|href)=\"(?:https?:)?//", text), name
        assert "@import" not in text, name


async def test_mount_takes_the_option() -> None:
    """``a2a_core.mount`` passes ``playground`` on: served below the mount path, or not."""
    from a2a_core import mount
    from starlette.applications import Starlette

    host = Starlette()
    mount(host, echo, path="/on")
    mount(host, echo, path="/off", playground=False)
    transport = httpx.ASGITransport(host)
    async with httpx.AsyncClient(transport=transport, base_url="http://host.test") as client:
        r = await client.get("/on/", headers=BROWSER)
        assert (r.status_code, r.headers["location"]) == (303, "/on/playground/")
        assert (await client.get("/on/playground/")).status_code == 200
        assert (await client.get("/off/playground/")).status_code == 404
        off = await client.get("/off/", headers=BROWSER)
        assert off.status_code == 200
        assert off.headers["content-type"] == "text/html; charset=utf-8"
