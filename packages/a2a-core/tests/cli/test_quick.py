"""The one-shot ``a2a send`` path (``a2a_core.cli.quick``) answers exactly as the client path.

A small real HTTP server on 127.0.0.1 publishes a chosen card and answers
``SendMessage`` with chosen bytes. Each case runs ``a2a send`` twice, once as
it runs (the one-shot path first) and once with the one-shot path switched
off, and compares exit status, stdout, stderr and what the server received.
The cases also pin which path answered: an answer the light reader vouches
for is shown without the models; anything else is decoded by the client's
code from the same bytes; a card it cannot vouch for sends nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from a2a_core.cli import quick
from cli_support import cli

pytestmark = pytest.mark.timeout(60)

TASK: dict[str, Any] = {
    "id": "task-1",
    "contextId": "ctx-1",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00.000Z"},
    "artifacts": [
        {"artifactId": "a-1", "name": "result", "parts": [{"text": "Hello there"}]},
    ],
    "history": [
        {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], "taskId": "task-1"}
    ],
}


def card(*interfaces: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "Quick test agent",
        "description": "Canned answers",
        "version": "1.0.0",
        "supportedInterfaces": list(interfaces),
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
        **extra,
    }


def jsonrpc(url: str = "/", **extra: Any) -> dict[str, Any]:
    return {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0", **extra}


def rest(url: str = "/rest") -> dict[str, Any]:
    return {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}


def success(result: dict[str, Any], **envelope: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result, **envelope}).encode()


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def with_task(**changes: Any) -> dict[str, Any]:
    return {"task": {**TASK, **changes}}


@dataclass
class Canned:
    """What the server publishes and answers, and what it was sent."""

    card: dict[str, Any] | bytes
    answer: bytes
    status: int = 200
    posts: list[tuple[dict[str, str], Any]] = field(
        default_factory=list[tuple[dict[str, str], Any]]
    )


class _Handler(BaseHTTPRequestHandler):
    canned: Canned

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path != "/.well-known/agent-card.json":
            self._reply(404, b"{}")
            return
        body = self.canned.card
        self._reply(200, body if isinstance(body, bytes) else json.dumps(body).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        sent = json.loads(self.rfile.read(length))
        self.canned.posts.append((dict(self.headers.items()), sent))
        self._reply(self.canned.status, self.canned.answer)


@pytest.fixture
def agent() -> Iterator[tuple[str, Canned]]:
    canned = Canned(card=card(jsonrpc()), answer=success({"task": TASK}))
    handler = type("Handler", (_Handler,), {"canned": canned})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", canned
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Spy:
    """Which path answered in the last run."""

    quick: list[int | None] = field(default_factory=list[int | None])
    """What each one-shot run returned: an exit status, -1 for an error, None to hand over."""
    models: int = 0


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    found = Spy()
    run, with_models = quick.run, quick._answer_with_models  # pyright: ignore[reportPrivateUsage]

    def spied_run(args: Any) -> int | None:
        try:
            code = run(args)
        except Exception:
            found.quick.append(-1)  # it answered, with an error (exit status from main)
            raise
        found.quick.append(code)
        return code

    def spied_models(*args: Any) -> int:
        found.models += 1
        return with_models(*args)

    monkeypatch.setattr(quick, "run", spied_run)
    monkeypatch.setattr(quick, "_answer_with_models", spied_models)
    return found


_COMPARED_HEADERS = ("content-type", "a2a-version", "authorization", "accept", "x-extra")


def _compared(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items() if k.lower() in _COMPARED_HEADERS}


def both_ways(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    canned: Canned,
    argv: list[str],
) -> tuple[tuple[int, str, str], list[tuple[dict[str, str], Any]]]:
    """Run ``a2a send ARGV`` through the one-shot path, then without it; both must agree."""
    canned.posts.clear()
    fast = cli(capsys, "send", *argv)
    fast_posts = list(canned.posts)
    canned.posts.clear()
    with monkeypatch.context() as patch:
        patch.setattr(quick, "run", lambda args: None)
        slow = cli(capsys, "send", *argv)
    assert fast == slow
    assert len(fast_posts) == len(canned.posts) <= 1
    for (fast_headers, fast_body), (slow_headers, slow_body) in zip(
        fast_posts, canned.posts, strict=True
    ):
        assert _compared(fast_headers) == _compared(slow_headers)
        for body in (fast_body, slow_body):
            body["params"]["message"]["messageId"] = "-"
        assert fast_body == slow_body
    return fast, fast_posts


LIGHT_ANSWERS = {
    "task": success({"task": TASK}),
    "message reply": success(
        {"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "Hi!"}]}}
    ),
    "failed with a status message": success(
        with_task(
            status={
                "state": "TASK_STATE_FAILED",
                "message": {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": "boom"}]},
            },
            artifacts=[],
        )
    ),
    "input required": success(
        with_task(
            status={
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": {
                    "messageId": "q",
                    "role": "ROLE_AGENT",
                    "parts": [{"text": "Your name?"}],
                },
            }
        )
    ),
    "data and url parts, unknown fields": success(
        with_task(
            kind="task",
            artifacts=[
                {
                    "artifactId": "d",
                    "description": "numbers",
                    "parts": [
                        {"data": {"n": [1, 2.5, None, "é"]}, "mediaType": "application/json"},
                        {"url": "https://example.com/f.pdf", "filename": "f.pdf"},
                        {"text": "tail", "metadata": {"k": 1}},
                    ],
                    "extensions": ["urn:x"],
                },
            ],
        )
    ),
    "working, no wait": success(with_task(status={"state": "TASK_STATE_WORKING"}, artifacts=[])),
    "ids that look like exponents": success(with_task(id="3e407", contextId="1E999")),
}


@pytest.mark.parametrize("quiet", [False, True])
@pytest.mark.parametrize("name", list(LIGHT_ANSWERS))
def test_answers_read_without_models_show_the_same(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
    name: str,
    quiet: bool,
) -> None:
    url, canned = agent
    canned.answer = LIGHT_ANSWERS[name]
    wait = ["--no-wait"] if "no wait" in name else []  # a blocking send would follow it
    (code, out, _), posts = both_ways(
        capsys, monkeypatch, canned, [url, "hi", *wait, *(["-q"] if quiet else [])]
    )
    assert spy.quick[0] is not None
    assert spy.models == 0
    assert len(posts) == 1
    assert out or quiet  # quiet shows only content, which a failed or working task may lack
    assert code == (1 if "failed" in name else 0)


ODD_ANSWERS = {
    "raw part (base64)": success(
        with_task(artifacts=[{"artifactId": "r", "parts": [{"raw": "aGk=", "filename": "x"}]}])
    ),
    "snake_case field": success(with_task(context_id="ctx-2")),
    "lower-case state": success(with_task(status={"state": "completed"})),
    "extra error member": success({"task": TASK}, error={"code": -32603, "message": "x"}),
    "JSON-RPC error": json.dumps(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}
    ).encode(),
    "wrong id": json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"task": TASK}}).encode(),
    "part with two contents": success(
        with_task(artifacts=[{"artifactId": "x", "parts": [{"text": "a", "url": "b"}]}])
    ),
    "bad timestamp": success(with_task(status={"state": "TASK_STATE_COMPLETED", "timestamp": "x"})),
    "number out of range": success({"task": TASK}).replace(
        b'"Hello there"}', b'"x"}, {"data": 1e400}'
    ),
    "NaN in data": success({"task": TASK}).replace(b'"Hello there"}', b'"x"}, {"data": NaN}'),
    "lone surrogate": success({"task": TASK}).replace(b"Hello there", b"\\ud800"),
    "not JSON": b"<html>oops</html>",
    "null context id": success(with_task(contextId=None)),
    "empty parts": success(with_task(artifacts=[{"artifactId": "e", "parts": []}])),
    "deep metadata": success(with_task(metadata={"a": nested(30)})),
}


@pytest.mark.parametrize("name", list(ODD_ANSWERS))
def test_answers_it_cannot_vouch_for_are_decoded_by_the_client(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
    name: str,
) -> None:
    url, canned = agent
    canned.answer = ODD_ANSWERS[name]
    _, posts = both_ways(capsys, monkeypatch, canned, [url, "hi"])
    assert spy.quick[0] is not None
    assert spy.models == 1
    assert len(posts) == 1


def test_http_errors_and_json_output_go_through_the_client(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
) -> None:
    url, canned = agent
    (code, out, _), _ = both_ways(capsys, monkeypatch, canned, [url, "hi", "--json"])
    assert code == 0
    assert json.loads(out)["task"]["id"] == "task-1"
    canned.status = 500
    canned.answer = b'{"error": "down"}'
    (code, out, err), _ = both_ways(capsys, monkeypatch, canned, [url, "hi"])
    assert code == 3
    assert out == ""
    assert "a2a: error:" in err
    assert spy.models == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["hi there", "--task-id", "t-9", "--context-id", "c-9", "--no-wait"],
        ["hi", "--data", '{"n": [1, 2]}', "--bearer", "s3cret", "-H", "X-Extra: 1"],
        ["hi", "--timeout", "0", "--binding", "jsonrpc", "--protocol-version", "1.0"],
    ],
)
def test_the_request_is_the_clients(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
    argv: list[str],
) -> None:
    url, canned = agent
    _, posts = both_ways(capsys, monkeypatch, canned, [url, *argv])
    assert spy.quick[0] is not None
    assert posts[0][1]["method"] == "SendMessage"


def test_a_file_part_is_sent_alike(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    tmp_path: Any,
) -> None:
    report = tmp_path / "report.txt"
    report.write_bytes(b"\x00\x01binary")
    url, canned = agent
    _, posts = both_ways(capsys, monkeypatch, canned, [url, "see", "--file", str(report)])
    assert posts[0][1]["params"]["message"]["parts"][1] == {
        "raw": "AAFiaW5hcnk=",
        "filename": "report.txt",
        "mediaType": "text/plain",
    }


CARDS_IT_DECLINES = {
    "HTTP+JSON preferred": card(rest(), jsonrpc()),
    "0.3 only": {
        "name": "old",
        "description": "d",
        "version": "1",
        "url": "http://127.0.0.1:9/",
        "protocolVersion": "0.3.0",
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
    },
    "security schemes": card(
        jsonrpc(), securitySchemes={"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
    ),
    "snake_case field": card(jsonrpc(), default_input_modes=["text/plain"]),
    "a number for a name": {**card(jsonrpc()), "name": 7},
    "no interface": card(),
    "not JSON": b"not json",
}


@pytest.mark.parametrize("name", list(CARDS_IT_DECLINES))
def test_cards_it_cannot_vouch_for_send_nothing_and_hand_over(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
    name: str,
) -> None:
    url, canned = agent
    canned.card = CARDS_IT_DECLINES[name]
    if name == "HTTP+JSON preferred":
        canned.card = card(rest(url + "/rest"), jsonrpc())
    canned.posts.clear()
    cli(capsys, "send", url, "hi")
    assert spy.quick == [None]


def test_relative_interface_url_and_tenant(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: tuple[str, Canned],
    spy: Spy,
) -> None:
    url, canned = agent
    canned.card = card(jsonrpc("/", tenant="acme"))
    _, posts = both_ways(capsys, monkeypatch, canned, [url, "hi"])
    assert spy.quick[0] is not None
    assert posts[0][1]["params"]["tenant"] == "acme"


def test_save_dir_keeps_the_client_path(
    capsys: pytest.CaptureFixture[str], agent: tuple[str, Canned], spy: Spy, tmp_path: Any
) -> None:
    """Saving the answer's files (``--save-dir``) needs the client: nothing is sent twice."""
    url, canned = agent
    canned.posts.clear()
    code, _, _ = cli(capsys, "send", url, "hi", "--save-dir", str(tmp_path))
    assert spy.quick == [None]
    assert code == 0
    assert len(canned.posts) == 1


class _EarlyRefusal:
    """Publishes a card; answers each POST with 413 once it has the headers and then never
    reads, keeping the connection open (as a server that stops reading a refused upload)."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.card = json.dumps(card(jsonrpc(self.url + "/"))).encode()
        self.stop = threading.Event()
        self.refused = 0
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._one, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _one(self, conn: Any) -> None:
        with conn:
            conn.settimeout(30)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            if head.startswith(b"GET"):
                status, body = b"200 OK", self.card
            else:
                self.refused += 1
                status, body = b"413 Request Entity Too Large", b"<html>too large</html>"
            conn.sendall(
                b"HTTP/1.1 %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                % (status, len(body), body)
            )
            if status.startswith(b"413"):
                self.stop.wait(60)  # never reads the body; open until the test ends

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        for thread in self.threads:
            thread.join(5)


def test_a_large_upload_takes_the_client_path_and_gets_the_413(
    capsys: pytest.CaptureFixture[str], spy: Spy, tmp_path: Any
) -> None:
    """A file larger than ``quick.MAX_BODY_BYTES`` is sent by the client path, whose network
    backend stops the upload at the server's early 413. (The one-shot path's blocking client
    kept writing until its timeout and reported "did not answer in time".)"""
    big = tmp_path / "big.bin"
    big.write_bytes(b"\x00" * (20 * 1024 * 1024))
    server = _EarlyRefusal()
    try:
        code, out, err = cli(capsys, "send", server.url, "--file", str(big), "--timeout", "8")
    finally:
        server.close()
    assert spy.quick == [None]
    assert server.refused == 1
    assert (code, out) == (3, "")
    assert "PayloadTooLargeError" in err


def test_a_small_send_stays_on_the_one_shot_path(
    capsys: pytest.CaptureFixture[str], agent: tuple[str, Canned], spy: Spy
) -> None:
    """The size bound leaves the usual send alone: just under it is still the one-shot path."""
    url, _ = agent
    text = "x" * (quick.MAX_BODY_BYTES - 20)
    code, out, _ = cli(capsys, "send", url, text, "-q")
    assert (code, spy.quick) == (0, [0])
    assert out.strip() == "Hello there"


_ONE_SHOT = """
import json, sys
from a2a_core.cli.main import main
code = main(["send", sys.argv[1], "hi", "-q"])
print(json.dumps([code, sorted(sys.modules)]))
"""


def test_a_one_shot_send_loads_no_event_loop_and_no_models(agent: tuple[str, Canned]) -> None:
    """What keeps ``a2a send`` close to a bare ``httpx.post`` from a cold start: the one-shot
    path answers without asyncio, pydantic or the model classes (every ``a2a`` command
    imports each subcommand's module for its parser, so one importing asyncio at the top
    puts it back into every send). No timing: benchmarks/cli_cold_start.py measures."""
    import subprocess
    import sys

    url, _ = agent
    done = subprocess.run(
        [sys.executable, "-c", _ONE_SHOT, url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0
    assert "Hello there" in done.stdout
    assert "httpx" in loaded  # the probe did send
    heavy = ("asyncio", "pydantic", "a2a_core.types._base", "a2a_core.client.client")
    assert sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in loaded)) == []
