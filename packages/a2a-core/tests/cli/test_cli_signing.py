"""Signed cards on the command line: ``a2a serve --sign-card-key`` signs the served card and
``a2a card --verify`` checks it (exit 0), refusing an unsigned or tampered card and a key it
does not trust (exit 5). The server is a real ``a2a serve`` subprocess on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import AGENTS_FILE, ServeProcess, cli
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from servers import free_port, running  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.timeout(90)

KID = "cli-card-key"


def _write_key(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A P-256 key: (private PEM, public PEM, public JWK with kid) files."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = folder / f"{name}.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = folder / f"{name}.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    jwk = dict(ECAlgorithm.to_jwk(key.public_key(), as_dict=True))
    jwk["kid"] = KID
    jwk_file = folder / f"{name}.jwk"
    jwk_file.write_text(json.dumps(jwk))
    return private, public, jwk_file


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("card-keys")
    private, public, jwk = _write_key(folder, "signer")
    _, _, stranger = _write_key(folder, "stranger")  # same kid, another key
    return {"private": private, "public": public, "jwk": jwk, "stranger": stranger}


@pytest.fixture(scope="module")
def signed(keys: dict[str, Path]) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", str(port), "--public-url", url]
    with ServeProcess(
        [*args, "--sign-card-key", str(keys["private"]), "--sign-card-kid", KID]
    ) as p:
        assert p.start() == url
        assert f"card signed (ES256, kid {KID})" in p.wait_output("Press Ctrl-C")
        yield url


def _static_card(document: dict[str, Any]) -> Any:
    body = json.dumps(document).encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return app


def _served_document(capsys: pytest.CaptureFixture[str], url: str) -> dict[str, Any]:
    code, out, _ = cli(capsys, "card", url, "--json")
    assert code == 0
    return json.loads(out)


def test_a_signed_card_verifies_with_the_jwk_and_the_pem_key(
    capsys: pytest.CaptureFixture[str], signed: str, keys: dict[str, Path]
) -> None:
    code, out, err = cli(capsys, "card", signed, "--verify", "--trusted-key", str(keys["jwk"]))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == f"Signature: valid (key {KID})"
    pem = f"{KID}={keys['public']}"
    code, out, err = cli(capsys, "card", signed, "--verify", "--trusted-key", pem, "--json")
    assert code == 0
    assert json.loads(out)["signatures"]  # the JSON stays alone on stdout
    assert err == f"Signature: valid (key {KID})\n"


def test_a_key_it_does_not_trust_is_refused(
    capsys: pytest.CaptureFixture[str], signed: str, keys: dict[str, Path]
) -> None:
    code, _, err = cli(capsys, "card", signed, "--verify", "--trusted-key", str(keys["stranger"]))
    assert code == 5
    assert err.startswith("a2a: error: signature NOT valid: no signature")


def test_a_tampered_card_is_refused(
    capsys: pytest.CaptureFixture[str], signed: str, keys: dict[str, Path]
) -> None:
    document = _served_document(capsys, signed)
    document["description"] = document.get("description", "") + " (and now evil)"
    with running(_static_card(document)) as tampered:
        code, out, err = cli(
            capsys, "card", tampered, "--verify", "--trusted-key", str(keys["jwk"])
        )
    assert code == 5
    assert "(and now evil)" in out  # shown, then refused
    assert err.startswith("a2a: error: signature NOT valid: no signature")


def test_an_unsigned_card_is_refused(
    capsys: pytest.CaptureFixture[str], signed: str, keys: dict[str, Path]
) -> None:
    document = _served_document(capsys, signed)
    del document["signatures"]
    with running(_static_card(document)) as unsigned:
        code, _, err = cli(capsys, "card", unsigned, "--verify", "--trusted-key", str(keys["jwk"]))
    assert code == 5
    assert "is not signed" in err
    code, _, err = cli(capsys, "card", signed, "--verify")
    assert code == 2
    assert "--trusted-key FILE or --jwks URL" in err
    code, _, err = cli(capsys, "card", signed, "--verify", "--trusted-key", str(keys["public"]))
    assert code == 2
    assert "KID=FILE" in err


def test_serve_refuses_a_key_that_is_not_a_private_key(
    capsys: pytest.CaptureFixture[str], keys: dict[str, Path]
) -> None:
    code, _, err = cli(
        capsys, "serve", f"{AGENTS_FILE}:ScriptedAgent", "--sign-card-key", str(keys["public"])
    )
    assert code == 2
    assert "is not an unencrypted PEM private key" in err


def test_client_commands_with_trusted_keys_require_a_valid_signature(
    capsys: pytest.CaptureFixture[str], signed: str, keys: dict[str, Path]
) -> None:
    code, out, err = cli(capsys, "send", signed, "hello", "--trusted-key", str(keys["jwk"]))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "Echo: hello"
    code, out, err = cli(capsys, "send", signed, "hello", "--trusted-key", str(keys["stranger"]))
    assert code == 5
    assert out == ""  # refused before anything was sent
    assert err.startswith("a2a: error: the agent card is not trusted: no signature")
    code, _, err = cli(capsys, "list", signed, "--trusted-key", str(keys["stranger"]))
    assert code == 5


def test_the_default_kid_is_the_rfc_7638_thumbprint() -> None:
    from a2a_core.cli.cardtrust import _thumbprint  # pyright: ignore[reportPrivateUsage]

    # RFC 7638 section 3.1: this RSA key's thumbprint
    jwk = {
        "kty": "RSA",
        "n": (
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_"
            "BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0"
            "_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWh"
            "AI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        ),
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert _thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
