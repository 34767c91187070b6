"""The ``a2a`` command end to end, on 127.0.0.1 only.

- ``a2a serve`` runs as a real subprocess (the installed console script):
  ``cli_agents.py:ScriptedAgent`` (a file target) for most tests, a
  ``module:attr`` target served through a plugin adapter, a gateway to the
  official SDK's server, and bad targets;
- the client commands run in process (``main(argv)``) against that server
  and against an official ``a2a-sdk`` server (``servers.sdk_app``), checking
  human output, ``--json`` output and exit statuses.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a_core.types import (
    AgentCard,
    ListTasksResponse,
    Message,
    SendMessageResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.wire import V10Codec
from cli_support import AGENTS_FILE, HERE, ServeProcess, a2a_command, cli, subprocess_env
from servers import (  # pyright: ignore[reportMissingImports] - tests/client/servers.py
    free_port,
    running,
    sdk_app,
)

pytestmark = pytest.mark.timeout(90)

CONTINUE = re.compile(
    r'Continue with: a2a send (\S+) "<answer>" --task-id (\S+) --context-id (\S+)'
)


# -- servers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    """``a2a serve cli_agents.py:ScriptedAgent`` (a file target, an executor class)."""
    port = free_port()
    process = ServeProcess(
        [
            f"{AGENTS_FILE}:ScriptedAgent",
            "--port",
            str(port),
            "--public-url",
            f"http://127.0.0.1:{port}",
            "--name",
            "CLI test agent",
            "--description",
            "Scripted for the CLI tests",
            "--skill",
            "echo:Echo:Echoes: what you say",
            "--skill",
            "ask:Ask:Asks your name",
            "--push",
            "--allow-private-push-targets",
            "--grpc-port",
            "0",
        ]
    )
    with process:
        yield process.start()
        # Tasks still running (the interrupted client's) are canceled: a clean stop.
        assert process.stop(signal.SIGINT) == 0
        assert process.output().endswith("Stopped.\n")
        assert "Traceback" not in process.errors()


@pytest.fixture(scope="module")
def sdk() -> Iterator[str]:
    """The official SDK's server (1.0 with 0.3 compatibility) with its scripted agent."""
    port = free_port()
    with running(sdk_app(port, v03=True), port) as url:
        yield url


@pytest.fixture(params=["ours", "sdk"])
def server(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(request.param)


def task_of(out: str) -> Task:
    """The task of a ``send --json`` answer."""
    result = SendMessageResponse.model_validate(json.loads(out)).result
    assert isinstance(result, Task)
    return result


def send_json(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> Task:
    code, out, err = cli(capsys, "send", url, *argv, "--json")
    assert code in (0, 1), err
    return task_of(out)


# -- a2a card -----------------------------------------------------------------------------


def test_card_human(capsys: pytest.CaptureFixture[str], server: str, ours: str) -> None:
    code, out, err = cli(capsys, "card", server)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    if server == ours:
        assert lines[0] == "CLI test agent version 0.1.0"
        assert lines[1] == "Scripted for the CLI tests"
        assert "Capabilities: streaming, push notifications" in out
        assert "  Echo [echo]\n    Echoes: what you say\n" in out
        assert "  Ask [ask]\n    Asks your name\n" in out
        assert f"  JSONRPC    1.0   {ours}\n" in out
        assert f"  HTTP+JSON  0.3   {ours}\n" in out
        assert "  GRPC       1.0   127.0.0.1:" in out
    else:
        assert lines[0] == "SDK scripted agent version 1.0.0"
        assert "Capabilities: streaming\n" in out
        assert "  Echo [echo]\n    Echoes\n    tags: echo\n" in out
        assert f"  HTTP+JSON  1.0   {server}/rest\n" in out
    assert "Skills (" in out
    assert "Interfaces:" in out


def test_card_json(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "card", server, "--json")
    assert code == 0
    assert len(out.splitlines()) == 1
    card = V10Codec().decode_card(json.loads(out))
    assert isinstance(card, AgentCard)
    assert card.skills[0].id == "echo"
    assert json.loads(out)["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"


# -- a2a send -----------------------------------------------------------------------------


def test_send_human(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, err = cli(capsys, "send", server, "hello world")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert re.fullmatch(r"● completed \(task \S+, context \S+\)", lines[0])
    assert lines[1:] == ["[echo]", "Echo: hello world"]


def test_send_json(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "send", server, "hello json", "--json")
    assert code == 0
    task = task_of(out)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts[0].text == "Echo: hello json"
    assert json.loads(out)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(("binding", "version"), [("http+json", "1.0"), ("jsonrpc", "0.3")])
def test_send_with_binding_and_version(
    capsys: pytest.CaptureFixture[str], server: str, binding: str, version: str
) -> None:
    code, out, _ = cli(
        capsys, "send", server, "hello there", "--binding", binding, "--protocol-version", version
    )
    assert code == 0
    assert out.splitlines()[-1] == "Echo: hello there"


def test_send_over_grpc(capsys: pytest.CaptureFixture[str], ours: str) -> None:
    """``a2a serve --grpc-port`` lists gRPC in the card; ``--binding grpc`` uses it."""
    code, out, _ = cli(capsys, "send", ours, "hello grpc", "--binding", "grpc", "--json")
    assert code == 0
    assert json.loads(out.splitlines()[-1])["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    code, out, _ = cli(capsys, "send", ours, "chunks", "--binding", "grpc", "--stream")
    assert code == 0
    assert "c0c1c2" in out


def test_send_reply_message(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "send", server, "reply now")
    assert (code, out) == (0, "Reply: reply now\n")
    code, out, _ = cli(capsys, "send", server, "reply now", "--json")
    result = SendMessageResponse.model_validate(json.loads(out)).result
    assert isinstance(result, Message)
    assert result.text == "Reply: reply now"


def test_send_quiet(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "send", server, "hello quiet", "-q")
    assert (code, out) == (0, "Echo: hello quiet\n")


def test_stream_human_prints_chunks_as_one_text(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    code, out, err = cli(capsys, "send", server, "chunks", "--stream")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert re.fullmatch(r"● (submitted|working) \(task \S+, context \S+\)", lines[0])
    assert "[out]\nc0c1c2\n" in out
    assert lines[-1] == "● completed"
    assert out.index("[out]") < out.index("● completed")


def test_stream_json_is_one_event_per_line(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "send", server, "chunks", "--stream", "--json")
    assert code == 0
    codec = V10Codec()
    events = [codec.decode_event(json.loads(line)) for line in out.splitlines()]
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert "".join(p.text or "" for e in chunks for p in e.artifact.parts) == "c0c1c2"
    assert chunks[-1].last_chunk
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED


def test_input_required_hint_and_continuation(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    code, out, _ = cli(capsys, "send", server, "ask")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("● input-required (task ")
    assert lines[1] == "The agent needs input: What is your name?"
    found = CONTINUE.fullmatch(lines[2])
    assert found is not None, lines
    url, task_id, context_id = found.groups()
    assert url == server
    assert f"task {task_id}, context {context_id}" in lines[0]
    code, out, _ = cli(capsys, "send", url, "Ada", "--task-id", task_id, "--context-id", context_id)
    assert code == 0
    assert out.splitlines()[1:] == ["[greeting]", "Hello, Ada"]
    assert task_id in out.splitlines()[0]


def test_input_required_hint_after_a_stream(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    code, out, _ = cli(capsys, "send", server, "ask", "--stream")
    assert code == 0
    assert "● input-required" in out
    assert "The agent needs input: What is your name?\n" in out
    assert CONTINUE.search(out) is not None


def test_send_data_and_file_parts(
    capsys: pytest.CaptureFixture[str], ours: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    code, out, _ = cli(
        capsys, "send", ours, "parts", "--data", '{"n": [1, 2]}', "--file", str(report), "-q"
    )
    assert code == 0
    described = json.loads(out)
    assert described == [
        {"kind": "text", "mediaType": None, "filename": None, "data": None},
        {"kind": "data", "mediaType": "application/json", "filename": None, "data": {"n": [1, 2]}},
        {"kind": "raw", "mediaType": "text/csv", "filename": "report.csv", "data": None},
    ]


def test_data_and_file_artifacts_are_summarized(
    capsys: pytest.CaptureFixture[str], ours: str
) -> None:
    code, out, _ = cli(capsys, "send", ours, "rich")
    assert code == 0
    assert out.splitlines()[1:] == [
        "[rich]",
        'data: {"answer":42}',
        "file: report.bin (application/pdf, 2.0 KB)",
    ]


def test_failed_task_exits_1(capsys: pytest.CaptureFixture[str], ours: str) -> None:
    code, out, _ = cli(capsys, "send", ours, "fail")
    assert code == 1
    assert out.splitlines()[0].startswith("● failed (task ")
    assert out.splitlines()[1] == "Something went wrong"
    code, out, _ = cli(capsys, "send", ours, "fail", "--stream")
    assert code == 1
    assert out.splitlines()[-1] == "● failed: Something went wrong"
    code, out, _ = cli(capsys, "send", ours, "fail", "--json")
    assert code == 1
    assert task_of(out).status.state is TaskState.FAILED


# -- get, list, cancel, subscribe ---------------------------------------------------------


def test_get_human_and_json(capsys: pytest.CaptureFixture[str], server: str) -> None:
    task = send_json(capsys, server, "hello get")
    code, out, _ = cli(capsys, "get", server, task.id)
    assert code == 0
    assert out.splitlines() == [
        f"● completed (task {task.id}, context {task.context_id})",
        "[echo]",
        "Echo: hello get",
    ]
    code, out, _ = cli(capsys, "get", server, task.id, "--history", "5")
    assert code == 0
    assert "History (" in out
    assert "  user: hello get\n" in out
    code, out, _ = cli(capsys, "get", server, task.id, "--history")  # no number: every message
    assert code == 0
    assert "  user: hello get\n" in out
    code, out, _ = cli(capsys, "get", server, task.id, "--history", "0")
    assert code == 0
    assert "user: hello get" not in out
    code, out, _ = cli(capsys, "get", server, task.id, "--json")
    assert code == 0
    assert Task.model_validate(json.loads(out)).id == task.id


def test_get_unknown_task_is_a_protocol_error(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    code, out, err = cli(capsys, "get", server, "no-such-task")
    assert (code, out) == (3, "")
    assert err.startswith("a2a: error: the agent answered with an error: ")
    assert "TaskNotFoundError" in err
    assert len(err.splitlines()) == 1


def test_list_human_json_and_all(capsys: pytest.CaptureFixture[str], server: str) -> None:
    first = send_json(capsys, server, "hello one")
    second = send_json(capsys, server, "hello two", "--context-id", first.context_id)
    code, out, _ = cli(capsys, "list", server, "--context-id", first.context_id)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["TASK", "STATE", "UPDATED", "TEXT"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == {first.id, second.id}
    row = r"\s+completed\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  Echo: hello "
    assert re.fullmatch(re.escape(first.id) + row + "one", rows[first.id])
    assert re.fullmatch(re.escape(second.id) + row + "two", rows[second.id])

    code, out, _ = cli(capsys, "list", server, "--context-id", first.context_id, "--json")
    page = ListTasksResponse.model_validate(json.loads(out))
    assert {t.id for t in page.tasks} == {first.id, second.id}

    code, out, _ = cli(
        capsys,
        "list",
        server,
        "--context-id",
        first.context_id,
        "--page-size",
        "1",
        "--status",
        "completed",
    )
    assert code == 0
    assert "More tasks: add --page-token " in out
    code, out, _ = cli(
        capsys, "list", server, "--context-id", first.context_id, "--page-size", "1", "--all"
    )
    assert code == 0
    assert len(out.splitlines()) == 3  # header and both tasks, page after page


def test_cancel_then_get_exits_1(capsys: pytest.CaptureFixture[str], server: str) -> None:
    code, out, _ = cli(capsys, "send", server, "slow", "--no-wait")
    assert code == 0
    found = re.search(r"\(task (\S+), context", out)
    assert found is not None
    task_id = found.group(1)
    assert f"Follow it with: a2a subscribe {server} {task_id}" in out
    code, out, _ = cli(capsys, "cancel", server, task_id)
    assert code == 0
    assert out.startswith(f"● canceled (task {task_id}")
    code, _, _ = cli(capsys, "get", server, task_id)
    assert code == 1
    code, _, err = cli(capsys, "cancel", server, task_id)
    assert code == 3
    # In the CLI's words for states, not TASK_STATE_CANCELED or the error's class name.
    assert err == "a2a: error: the task has already ended (canceled): there is nothing to cancel\n"


def test_cancelling_a_finished_task_names_its_state_as_the_cli_does(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    task = send_json(capsys, server, "hello cancel")
    assert task.status.state == TaskState.COMPLETED
    code, out, err = cli(capsys, "cancel", server, task.id)
    assert (code, out) == (3, "")
    assert err == (
        "a2a: error: the task has already ended (completed): there is nothing to cancel\n"
    )
    assert "TASK_STATE" not in err


def test_cancelling_an_unknown_task_still_says_not_found(
    capsys: pytest.CaptureFixture[str], ours: str
) -> None:
    code, _, err = cli(capsys, "cancel", ours, "no-such-task")
    assert code == 3
    assert "TaskNotFoundError" in err


def test_subscribe_follows_a_running_task(capsys: pytest.CaptureFixture[str], ours: str) -> None:
    task = send_json(capsys, ours, "wait", "--no-wait")
    code, out, _ = cli(capsys, "subscribe", ours, task.id)
    assert code == 0
    assert "● working" in out
    assert "Waiting a second" in out
    assert "[waited]\nWaited\n" in out
    assert out.splitlines()[-1] == "● completed"


def test_subscribe_json(capsys: pytest.CaptureFixture[str], ours: str) -> None:
    task = send_json(capsys, ours, "wait", "--no-wait")
    code, out, _ = cli(capsys, "subscribe", ours, task.id, "--json")
    assert code == 0
    codec = V10Codec()
    events = [codec.decode_event(json.loads(line)) for line in out.splitlines()]
    assert isinstance(events[0], Task)
    assert events[0].id == task.id
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED


def test_subscribe_to_a_waiting_task_ends_with_the_hint(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    task = send_json(capsys, server, "ask")
    code, out, _ = cli(capsys, "subscribe", server, task.id)
    assert code == 0
    assert out.startswith(f"● input-required (task {task.id}")
    assert "The agent needs input: What is your name?" in out


def test_subscribe_to_a_finished_task_shows_it(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    task = send_json(capsys, server, "hello done")
    code, out, err = cli(capsys, "subscribe", server, task.id)
    assert code == 0
    assert "Echo: hello done" in out
    assert out.startswith(f"● completed (task {task.id}")
    assert err in ("", "a2a: the task has already finished\n")


# -- errors -------------------------------------------------------------------------------


def test_connection_refused_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()  # nothing listens there: a real refused connection
    url = f"http://127.0.0.1:{port}"
    for argv in (("card", url), ("send", url, "hello"), ("get", url, "t-1"), ("cancel", url, "t")):
        code, out, err = cli(capsys, *argv)
        assert (code, out) == (4, "")
        assert err == f"a2a: error: could not connect to 127.0.0.1:{port}: connection refused\n"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A plain web server (no agent card anywhere) on 127.0.0.1."""
    import functools
    import http.server
    import threading

    class Files(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    folder = tmp_path_factory.mktemp("site")
    (folder / "index.html").write_text("<h1>Not an agent</h1>")
    handler = functools.partial(Files, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
        httpd.shutdown()
        thread.join(5)


@pytest.fixture(scope="module")
def catch_all_site() -> Iterator[str]:
    """A web site that answers every path, card paths included, with a page (an SPA's host)."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>App</title><div id=app></div>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
        httpd.shutdown()
        thread.join(5)


def test_a_site_that_answers_every_path_with_a_page_has_no_agent_card(
    capsys: pytest.CaptureFixture[str], catch_all_site: str
) -> None:
    for argv in (("card", catch_all_site), ("send", catch_all_site, "hello")):
        code, out, err = cli(capsys, *argv)
        assert (code, out) == (3, "")
        assert err == (
            f"a2a: error: no agent card was found at {catch_all_site}: "
            "/.well-known/agent-card.json answered HTTP 200 with a web page "
            "(is this the URL of an A2A agent?)\n"
        )


@pytest.mark.parametrize("command", [("card",), ("send", "hello"), ("get", "t-1")])
def test_a_plain_web_server_has_no_agent_card(
    capsys: pytest.CaptureFixture[str], web_server: str, command: tuple[str, ...]
) -> None:
    code, out, err = cli(capsys, command[0], web_server, *command[1:])
    assert (code, out) == (3, "")
    assert err == (
        f"a2a: error: no agent card was found at {web_server}: /.well-known/agent-card.json "
        "and /.well-known/agent.json answered HTTP 404 (is this the URL of an A2A agent?)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("send", "http://127.0.0.1:9"), "nothing to send"),
        (("send", "http://127.0.0.1:9", "x", "--data", "{oops"), "--data is not valid JSON"),
        (("send", "http://127.0.0.1:9", "x", "--file", "/no/such/file"), "cannot read --file"),
        (("send", "http://127.0.0.1:9", "x", "--header", "no colon"), "--header expects"),
        (("send", "ftp://example", "x"), "must start with http:// or https://"),
        (("send", "http://127.0.0.1:9", "x", "--stream", "--no-wait"), "do not go together"),
        (("list", "http://127.0.0.1:9", "--status", "sleeping"), "unknown task state"),
        (("list", "http://127.0.0.1:9", "--page-size", "1000"), "page size"),
        (("send",), "the following arguments are required"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert message in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:agent", "cannot import 'no_such_module_xyz'"),
        (f"{AGENTS_FILE}:missing", "has no attribute 'missing'"),
        (f"{AGENTS_FILE}:not_an_agent", "Cannot serve a 'int'"),
        ("json:dumps", "Cannot serve a 'function'"),
        ("just_a_name", "TARGET must be module:attribute"),
        ("no/such/file.py:agent", "no such file"),
    ],
)
def test_bad_targets_exit_2(capsys: pytest.CaptureFixture[str], target: str, message: str) -> None:
    code, out, err = cli(capsys, "serve", target, "--port", "0")
    assert (code, out) == (2, "")
    assert err.startswith("a2a: error: ")
    assert message in err
    assert len(err.splitlines()) == 1


def test_serve_configuration_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{AGENTS_FILE}:ScriptedAgent"
    code, _, err = cli(capsys, "serve", target, "--port", "0", "--store", "nosuch://x")
    assert code == 2
    assert "No task store for nosuch:// URLs" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = cli(capsys, "serve", target, "--port", port)
    assert code == 2
    assert err == (
        f"a2a: error: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "give another with --port (0 picks a free one)\n"
    )
    code, _, err = cli(capsys, "serve", target, "--versions", "2.0")
    assert code == 2
    assert "unsupported A2A version '2.0'" in err


def test_serve_passthrough_needs_a_gateway_that_authenticates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"{AGENTS_FILE}:ScriptedAgent"
    code, _, err = cli(capsys, "serve", target, "--port", "0", "--passthrough")
    assert code == 2
    assert "--passthrough is for a gateway" in err
    remote = f"http://127.0.0.1:{free_port()}"
    code, _, err = cli(capsys, "serve", remote, "--port", "0", "--passthrough")
    assert code == 2
    assert "give --oidc-issuer (or --bearer-token)" in err


def test_serve_push_signing_secret_goes_with_push(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("A2A_PUSH_SIGNING_SECRET", raising=False)
    target = f"{AGENTS_FILE}:ScriptedAgent"
    code, _, err = cli(capsys, "serve", target, "--port", "0", "--push-signing-secret", "x" * 32)
    assert code == 2
    assert "--push-signing-secret goes with --push" in err
    code, _, err = cli(
        capsys, "serve", target, "--port", "0", "--push", "--push-signing-secret", "short"
    )
    assert code == 2
    assert "at least 16 bytes" in err


def test_serve_gateway_to_nowhere_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    code, out, err = cli(capsys, "serve", f"http://127.0.0.1:{port}", "--port", "0")
    assert (code, out) == (4, "")
    assert err == f"a2a: error: could not connect to 127.0.0.1:{port}: connection refused\n"


def test_timeout_exits_4(capsys: pytest.CaptureFixture[str], ours: str) -> None:
    code, out, err = cli(capsys, "send", ours, "slow", "--timeout", "0.5")
    assert (code, out) == (4, "")
    assert "in time" in err


def test_help_teaches_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    # The first session serves the built-in echo agent: wheels ship no examples/ folder.
    assert "  a2a serve a2a_core:EchoAgent " in out
    assert "examples/" not in out
    for command in ("serve", "card", "send", "get", "list", "cancel", "subscribe"):
        assert f"    {command}" in out
    assert "exit status:" in out
    assert "130  interrupted" in out
    for command in ("serve", "card", "send", "get", "list", "cancel", "subscribe"):
        code, out, _ = cli(capsys, command, "--help")
        assert code == 0
        assert "examples:\n  a2a " in out
        assert f"  a2a {command} http" in out


# -- a2a serve as a subprocess ------------------------------------------------------------


def test_serve_bad_target_subprocess_exits_2() -> None:
    done = subprocess.run(
        [*a2a_command(), "serve", "no_such_module_xyz:agent"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("a2a: error: cannot import 'no_such_module_xyz'")


def test_serve_the_built_in_echo_agent_from_anywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``a2a --help``'s first command works in an empty folder (as for a wheel's user)."""
    with ServeProcess(["a2a_core:EchoAgent", "--port", "0"], cwd=tmp_path) as process:
        url = process.start().replace("localhost", "127.0.0.1")
        assert '"Echo" (echo adapter)' in process.output()
        code, out, _ = cli(capsys, "send", url, "hello", "-q")
        assert (code, out) == (0, "echo: hello\n")
        assert process.stop(signal.SIGINT) == 0


def test_serve_module_target_through_a_plugin_then_ctrl_c(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ServeProcess(["cli_agents:framework_agent", "--port", "0"], cwd=HERE) as process:
        url = process.start()
        assert re.fullmatch(r"http://localhost:\d+", url)
        assert "(a2a-test-plugin adapter)" in process.output()
        url = url.replace("localhost", "127.0.0.1")
        code, out, _ = cli(capsys, "send", url, "hi", "-q")
        assert (code, out) == (0, "framework says: hi\n")
        code, out, _ = cli(capsys, "card", url)
        assert out.startswith("Fake framework agent version")
        assert "  Fake [fake]\n" in out
        assert process.stop(signal.SIGINT) == 0
    assert process.output().endswith("Stopped.\n")


def test_serve_gateway_to_a_remote_agent(capsys: pytest.CaptureFixture[str], sdk: str) -> None:
    port = free_port()
    gateway = f"http://127.0.0.1:{port}"
    args = [sdk, "--port", str(port), "--public-url", gateway, "--versions", "1.0"]
    with ServeProcess([*args, "--bearer-token", "s3cret"]) as process:
        assert process.start() == gateway
        assert f"a gateway to {sdk}" in process.output()
        code, out, _ = cli(capsys, "card", gateway)
        assert out.startswith("SDK scripted agent version 1.0.0")
        assert "Security:" in out
        assert "HTTP Bearer" in out
        assert " 0.3 " not in out  # --versions 1.0: only 1.0 interfaces
        code, _, err = cli(capsys, "send", gateway, "hello")
        assert code == 3
        assert "AuthenticationRequiredError" in err
        auth = ("--bearer", "s3cret")
        code, out, _ = cli(capsys, "send", gateway, "hello", *auth)
        assert code == 0
        assert out.splitlines()[-1] == "Echo: hello"
        code, out, _ = cli(capsys, "send", gateway, "chunks", "--stream", *auth)
        assert code == 0
        assert "c0c1c2\n" in out
        code, out, _ = cli(capsys, "send", gateway, "ask", *auth)
        found = CONTINUE.search(out)
        assert found is not None
        _, task_id, context_id = found.groups()
        code, out, _ = cli(
            capsys, "send", gateway, "Ada", "--task-id", task_id, "--context-id", context_id, *auth
        )
        assert code == 0
        assert out.splitlines()[-1] == "Hello, Ada"
        assert process.stop(signal.SIGTERM) == 0


def test_ctrl_c_interrupts_a_client_command_with_130(ours: str) -> None:
    proc = subprocess.Popen(
        [*a2a_command(), "send", ours, "slow", "--stream"],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the task exists and works
        assert first.startswith("● ")
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 130
    task_id = re.search(r"\(task (\S+),", first)
    assert task_id is not None
    assert "a2a: interrupted" in err
    assert f"The task may still be running: a2a get {ours} {task_id.group(1)}" in err
    assert out is not None


def test_a2a_serve_refuses_an_oversized_request_head(ours: str) -> None:
    """``a2a serve`` bounds the request head (431), and keeps serving afterwards."""
    port = int(ours.rsplit(":", 1)[1])
    card_get = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n"
    for extra, status in ((b"X-Big: " + b"a" * 100_000 + b"\r\n", b"431"), (b"", b"200")):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(card_get + extra + b"\r\n")
            assert conn.recv(64).split(b" ")[1] == status


def _send_accepting_json_only(url: str) -> dict[str, object]:
    """A 1.0 JSON-RPC send accepting only application/json (CrewAI's client default)."""
    import httpx

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]},
            "configuration": {"acceptedOutputModes": ["application/json"]},
        },
    }
    response = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=20)
    return response.json()


def test_serve_answers_any_accepted_modes_unless_strict(ours: str) -> None:
    answer = _send_accepting_json_only(ours)
    task = answer["result"]["task"]  # type: ignore[index]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "Echo: hello"}]
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", "0", "--strict-output-modes"]
    with ServeProcess(args) as process:
        url = process.start().replace("localhost", "127.0.0.1")
        refused = _send_accepting_json_only(url)
        assert refused["error"]["code"] == -32005  # type: ignore[index]
        assert process.stop(signal.SIGINT) == 0


def test_send_and_get_save_the_answer_files(
    capsys: pytest.CaptureFixture[str], ours: str, tmp_path: Path
) -> None:
    saved = tmp_path / "saved"
    code, _, err = cli(capsys, "send", ours, "rich", "--save-dir", str(saved))
    assert code == 0
    target = saved / "report.bin"
    assert f"a2a: saved {target} (application/pdf, 2048 bytes)" in err
    assert target.read_bytes() == b"x" * 2048
    code, _, err = cli(capsys, "send", ours, "rich", "--stream", "--save-dir", str(saved))
    assert code == 0
    assert (saved / "report-2.bin").read_bytes() == b"x" * 2048  # never overwritten
    task = send_json(capsys, ours, "bigfile")
    part = task.artifacts[0].parts[0]
    assert part.url is not None  # above the inline limit: the server answered a URL
    assert part.raw is None
    code, _, err = cli(capsys, "get", ours, task.id, "--save-dir", str(saved))
    assert code == 0
    assert f"a2a: saved {saved / 'big.bin'} (application/octet-stream, 1536000 bytes)" in err
    assert (saved / "big.bin").read_bytes() == bytes(range(256)) * 6000
