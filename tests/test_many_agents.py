"""Three agents in one ``a2a serve``: a function, a LangChain chain, a CrewAI crew (scripted).

One real ``a2a serve`` subprocess on 127.0.0.1 serves ``examples/many_agents.py``'s three
agents with a card-signing key. The official a2a-sdk client reaches each from its own card;
the signed AI Catalog lists all three and verifies, and stops verifying when a byte changes;
discovery from the host finds all three; a task of one is not found through another. The
documented example config (``examples/a2a.toml``) reads without an error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from a2a_core.cli.serve import add_parser
from a2a_core.cli.serveconfig import load_settings
from a2a_core.client import A2AClient
from a2a_core.client.catalog import parse_catalog
from a2a_core.errors import TaskNotFoundError
from a2a_core.signing import CardSignatureError, CardVerifier
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "many_agents.py"
KID = "catalog-key"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = tmp_path_factory.mktemp("keys") / "card-key.pem"
    pem.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pem, dict(ECAlgorithm.to_jwk(private.public_key(), as_dict=True))


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, key: tuple[Path, dict[str, Any]]
) -> Iterator[str]:
    port = _free_port()
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "A2A_"))}
    env.update(HOME=str(home), OPENAI_API_KEY="", PYTHONUNBUFFERED="1")
    targets = [f"{EXAMPLE}:{name}" for name in ("shout", "helper", "planner")]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "a2a_core.cli",
            "serve",
            *targets,
            "--port",
            str(port),
            "--sign-card-key",
            str(key[0]),
            "--sign-card-kid",
            KID,
        ],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                _, err = proc.communicate(timeout=10)
                pytest.fail(f"a2a serve did not start: {err}")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def _sdk_answer(agent_url: str, text: str) -> str:
    """Ask through the official a2a-sdk client, from the card at the agent's URL."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart

    client = await ClientFactory(ClientConfig(streaming=False)).create_from_url(agent_url)
    try:
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[SdkPart(text=text)]
            )
        )
        responses = [r async for r in client.send_message(request)]
    finally:
        await client.close()
    task = responses[-1].task
    assert task.status.state == 3  # COMPLETED
    return "".join(p.text for a in task.artifacts for p in a.parts)


def test_the_official_sdk_client_reaches_each_agent_from_its_own_card(service: str) -> None:
    async def ask_all() -> list[str]:
        return [
            await _sdk_answer(f"{service}/shout", "hello there"),
            await _sdk_answer(f"{service}/helper", "What is A2A?"),
            await _sdk_answer(f"{service}/planner", "Lisbon"),
        ]

    shouted, helped, planned = asyncio.run(ask_all())
    assert shouted == "HELLO THERE"
    assert "You asked: 'What is A2A?'" in helped
    assert "Plan for Lisbon" in planned
    cards = {
        n: httpx.get(f"{service}/{n}/.well-known/agent-card.json").json()
        for n in ("shout", "helper", "planner")
    }
    assert cards["planner"]["name"] == "Trip planner"
    assert {i["url"] for i in cards["helper"]["supportedInterfaces"]} == {f"{service}/helper"}
    assert all(card["signatures"] for card in cards.values())


def test_the_catalog_lists_all_three_and_verifies_until_a_byte_changes(
    service: str, key: tuple[Path, dict[str, Any]]
) -> None:
    response = httpx.get(service + "/.well-known/ai-catalog.json")
    assert response.headers["content-type"] == "application/ai-catalog+json"
    catalog = parse_catalog(response.content, str(response.url))
    assert [(e.name, e.url) for e in catalog.agents] == [
        ("shout", f"{service}/shout/.well-known/agent-card.json"),
        ("LangChain agent", f"{service}/helper/.well-known/agent-card.json"),
        ("Trip planner", f"{service}/planner/.well-known/agent-card.json"),
    ]
    verifier = CardVerifier({KID: key[1]})
    assert catalog.verify(verifier) == KID
    body = response.content
    index = body.index(b"Trip planner") + 1
    for changed in (
        body[:index] + b"R" + body[index + 1 :],
        body.replace(b"/planner/", b"/plannex/"),
    ):
        with pytest.raises(CardSignatureError, match="does not verify"):
            parse_catalog(changed, str(response.url)).verify(verifier)
    document = json.loads(body)
    assert re.fullmatch(r"[\w-]+\.\.[\w-]+", document["signature"])  # detached compact JWS


def test_discovery_from_the_host_finds_all_three_and_tasks_stay_with_their_agent(
    service: str, key: tuple[Path, dict[str, Any]]
) -> None:
    async def check() -> None:
        agents = await A2AClient.discover(service, verify_catalog=CardVerifier({KID: key[1]}))
        assert [a.url.split("/")[-3] for a in agents if a.url] == ["shout", "helper", "planner"]
        async with await A2AClient.connect(card_url=agents[0].url) as shout:
            result = await shout.send("quiet")
            assert result.text == "QUIET"
            assert result.task is not None
            task_id = result.task.id
        for other in agents[1:]:
            async with await A2AClient.connect(card_url=other.url) as client:
                with pytest.raises(TaskNotFoundError):
                    await client.get_task(task_id)
        async with await A2AClient.connect(card_url=agents[0].url) as shout:
            assert (await shout.get_task(task_id)).id == task_id

    asyncio.run(check())


def test_the_documented_example_config_reads_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("A2A_")]:
        monkeypatch.delenv(name)
    root = argparse.ArgumentParser()
    add_parser(root.add_subparsers())
    args = root.parse_args(["serve", "--config", str(ROOT / "examples" / "a2a.toml")])
    layered = load_settings(args, cast(argparse.ArgumentParser, args.serve_parser))
    assert [a.name for a in layered.agents or []] == ["shout", "helper", "planner"]
    assert args.store == "redis://cache:6379/0"
    assert args.oidc_issuer == "https://login.example.com/realms/agents"
    assert args.sign_card_key == str(ROOT / "examples" / "card-key.pem")
    helper = (layered.agents or [])[1]
    assert helper.target == f"{ROOT / 'examples' / 'many_agents.py'}:helper"
    assert dict(helper.settings["option"]) == {"stream": True}
