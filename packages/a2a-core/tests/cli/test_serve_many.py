"""``a2a serve A B``: several agents in one process, their AI Catalog, and the config file.

Real ``a2a serve`` subprocesses on 127.0.0.1; ``a2a card`` and the clients in process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient, CatalogNotFoundError
from a2a_core.client.catalog import parse_catalog
from a2a_core.errors import TaskNotFoundError
from a2a_core.signing import CardSignatureError, CardVerifier
from cli_support import AGENTS_FILE, ServeProcess, cli
from servers import free_port, running  # pyright: ignore[reportMissingImports]
from test_cli_signing import KID, _static_card, _write_key  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.timeout(90)

SCRIPTED = f"{AGENTS_FILE}:ScriptedAgent"
FRAMEWORK = f"{AGENTS_FILE}:framework_agent"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    private, _, jwk = _write_key(tmp_path_factory.mktemp("catalog-keys"), "signer")
    return {"private": private, "jwk": jwk}


@pytest.fixture(scope="module")
def many(keys: dict[str, Path]) -> Iterator[str]:
    port = free_port()
    with ServeProcess(
        [
            SCRIPTED,
            f"helper={FRAMEWORK}",
            "--port",
            str(port),
            "--sign-card-key",
            str(keys["private"]),
            "--sign-card-kid",
            KID,
        ]
    ) as p:
        url = p.start()
        out = p.wait_output("Press Ctrl-C")
        assert f"Serving 2 agents at {url}" in out
        assert f"Catalog: {url}/.well-known/ai-catalog.json" in out
        yield f"http://127.0.0.1:{port}"


def test_each_agent_is_served_below_its_name_with_its_card(many: str) -> None:
    async def check() -> None:
        async with await A2AClient.connect(many + "/ScriptedAgent") as scripted:
            assert scripted.card is not None
            assert scripted.card.name == "ScriptedAgent"
            result = await scripted.send("hello there")
            assert result.text == "Echo: hello there"
            assert result.task is not None
            task_id = result.task.id
            assert (await scripted.get_task(task_id)).id == task_id
        async with await A2AClient.connect(many + "/helper") as helper:
            assert helper.card is not None
            assert helper.card.name == "Fake framework agent"
            assert "framework says" in (await helper.send("hi")).text
            with pytest.raises(TaskNotFoundError):
                await helper.get_task(task_id)  # a task of the other agent
            with pytest.raises(TaskNotFoundError):
                await helper.cancel(task_id)

    asyncio.run(check())


def test_the_catalog_lists_both_and_discovery_finds_them(
    capsys: pytest.CaptureFixture[str], many: str
) -> None:
    agents = asyncio.run(A2AClient.discover(many))
    assert [(a.name, a.url) for a in agents] == [
        ("ScriptedAgent", f"{many}/ScriptedAgent/.well-known/agent-card.json"),
        ("Fake framework agent", f"{many}/helper/.well-known/agent-card.json"),
    ]
    code, out, err = cli(capsys, "card", many)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"2 agents in {many}/.well-known/ai-catalog.json"
    assert f"{many}/helper/.well-known/agent-card.json" in out
    code, out, _ = cli(capsys, "card", many + "/helper")  # an agent's URL: its card
    assert code == 0
    assert "Fake framework agent" in out
    assert "2 agents" not in out
    with httpx.Client() as http:
        root = http.get(many + "/", headers={"accept": "text/html"}).text
    assert f'href="{many}/ScriptedAgent/playground/"' in root


def test_the_signed_catalog_verifies_and_a_changed_byte_does_not(
    capsys: pytest.CaptureFixture[str], many: str, keys: dict[str, Path]
) -> None:
    catalog_url = many + "/.well-known/ai-catalog.json"
    code, out, err = cli(capsys, "card", catalog_url, "--verify", "--trusted-key", str(keys["jwk"]))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == f"Signature: valid (catalog, key {KID})"
    body = httpx.get(catalog_url).content
    verifier = CardVerifier(
        {KID: {k: v for k, v in json.loads(keys["jwk"].read_text()).items() if k != "kid"}}
    )
    assert parse_catalog(body, catalog_url).verify(verifier) == KID
    tampered = body.replace(b"Fake framework agent", b"Fake framework agenT", 1)
    assert tampered != body
    with pytest.raises(CardSignatureError, match="does not verify"):
        parse_catalog(tampered, catalog_url).verify(verifier)
    document: dict[str, Any] = json.loads(tampered)
    with running(_static_card(document)) as evil:
        code, _, err = cli(
            capsys,
            "card",
            evil + "/.well-known/ai-catalog.json",
            "--verify",
            "--trusted-key",
            str(keys["jwk"]),
        )
    assert code == 5
    assert err.startswith("a2a: error: signature NOT valid: the signature of the catalog")


def test_a_single_agent_publishes_a_catalog_of_one(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    with ServeProcess([SCRIPTED, "--port", str(port)]) as p:
        url = p.start()
        agents = asyncio.run(A2AClient.discover(url))
        assert [a.url for a in agents] == [f"{url}/.well-known/agent-card.json"]
        code, out, _ = cli(capsys, "card", url)  # a single agent: its card, as before
        assert code == 0
        assert "1 agent" not in out
        assert "ScriptedAgent" in out
        with pytest.raises(CatalogNotFoundError):
            asyncio.run(A2AClient.discover(url + "/nowhere/ai-catalog.json"))  # nothing there


# -- the config file and the environment ------------------------------------------------


def _service(p: ServeProcess, port: int) -> dict[str, Any]:
    """What a client sees of the service: the catalog and each card, port-neutral."""
    url = p.start()
    assert url == f"http://localhost:{port}"
    with httpx.Client() as http:
        base = f"http://127.0.0.1:{port}"
        catalog = http.get(base + "/.well-known/ai-catalog.json").json()
        cards = [http.get(e["url"]).json() for e in catalog["entries"]]
        security = http.post(base + "/helper", json={}).status_code
    text = json.dumps({"catalog": catalog, "cards": cards, "auth": security})
    return json.loads(text.replace(str(port), "PORT"))


def test_the_config_file_and_the_environment_give_the_same_service_as_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    with ServeProcess(
        [
            f"main={SCRIPTED}",
            f"helper={FRAMEWORK}",
            "--port",
            str(port),
            "--bearer-token",
            "s3cret",
            "--store",
            "sqlite:///" + str(tmp_path / "flags.db"),
            "--no-playground",
        ]
    ) as p:
        by_flags = _service(p, port)
    assert by_flags["auth"] == 401
    (tmp_path / "a2a.toml").write_text(
        f"""\
# the same service, from a file
port = {port}
bearer-token = ["s3cret"]
store = "sqlite:///{tmp_path / "file.db"}"
no-playground = true

[agents.main]
target = "{SCRIPTED}"

[agents.helper]
target = "{FRAMEWORK}"
""",
        encoding="utf-8",
    )
    with ServeProcess(["--config", str(tmp_path / "a2a.toml")]) as p:
        by_file = _service(p, port)
    assert by_file == by_flags
    env = {
        "A2A_TARGETS": f"main={SCRIPTED},helper={FRAMEWORK}",
        "A2A_PORT": str(port),
        "A2A_SERVE_BEARER_TOKEN": "s3cret",
        "A2A_STORE": "sqlite:///" + str(tmp_path / "env.db"),
        "A2A_NO_PLAYGROUND": "true",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with ServeProcess(["--port", str(port)]) as p:  # a flag too: it wins, same value
        by_env = _service(p, port)
    assert by_env == by_flags
    # flags over the environment over the file
    monkeypatch.setenv("A2A_PORT", "1")  # not a port we could bind
    other = free_port()
    (tmp_path / "a2a.toml").write_text(f"port = 2\ntargets = ['{SCRIPTED}']\n", encoding="utf-8")
    with ServeProcess(["--config", str(tmp_path / "a2a.toml"), "--port", str(other)]) as p:
        assert p.start() == f"http://localhost:{other}"


def test_per_agent_settings_come_from_agents_tables(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "agents.toml"
    config.write_text(
        f"""\
[tool.a2a]
port = {port}

[tool.a2a.agents.greeter]
target = "{SCRIPTED}"
name = "Greeter"
description = "Says hello"
skill = ["greet:Greet:Greets whoever writes"]
""",
        encoding="utf-8",
    )
    pyproject = tmp_path / "pyproject.toml"
    config.rename(pyproject)
    with ServeProcess([], cwd=tmp_path) as p:  # [tool.a2a] of ./pyproject.toml
        url = p.start()
        card = httpx.get(url + "/greeter/.well-known/agent-card.json").json()
    assert card["name"] == "Greeter"
    assert [s["id"] for s in card["skills"]][-1] == "greet"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("port = 8000\nprot = 9000\n", "{file}:2: unknown key 'prot' (did you mean 'port'?)"),
        ("port = 'eighty'\n", "{file}:1: port: not a port number: 'eighty'"),
        ("push = 'yes'\n", "{file}:1: push: must be true or false"),
        (
            "log-level = 'loud'\n",
            "{file}:1: log-level: 'loud' is not one of critical, error, warning, info, debug",
        ),
        (
            "[agents.crew]\ntarget = 'x.py:crew'\nmodel = 'gpt'\n",
            "{file}:3: unknown key 'model'",
        ),
        ("[agents.crew]\nname = 'Crew'\n", "{file}:1: [agents.crew] needs a 'target'"),
        ("port = \n", "{file}: not valid TOML: "),
    ],
)
def test_an_unknown_or_invalid_setting_is_one_line_naming_file_line_and_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "a2a.toml"
    config.write_text(text, encoding="utf-8")
    code, out, err = cli(capsys, "serve", "--config", str(config))
    assert code == 2
    assert out == ""
    assert err.startswith("a2a: error: " + message.format(file=config))
    assert err.count("\n") == 1


def test_an_invalid_environment_value_names_the_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A2A_LEASE_SECONDS", "soon")
    code, _, err = cli(capsys, "serve", SCRIPTED)
    assert code == 2
    assert err == "a2a: error: $A2A_LEASE_SECONDS: not a number of seconds: 'soon'\n"


def test_per_agent_flags_are_refused_with_several_agents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli(capsys, "serve", SCRIPTED, FRAMEWORK, "--name", "Both")
    assert code == 2
    assert err.startswith("a2a: error: --name is one agent's: with several agents")
    code, _, err = cli(capsys, "serve")
    assert code == 2
    assert "name a TARGET to serve" in err
