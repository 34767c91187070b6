"""JWT bearer tokens from an OIDC issuer: a real server on 127.0.0.1 behind the test IdP.

Every check of ``JWTBearerAuth`` is exercised over HTTP: valid, expired, not yet
valid, wrong audience, wrong issuer, a rotated key, ``alg: none``, HS256 signed
with the public key, a missing scope; each refusal is a 401/403 with
``WWW-Authenticate``, a generic message, and one log line.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_core.oidc import JWTBearerAuth
from a2a_core.server import RequestContext
from a2a_core.testing.idp import IdentityProvider

AUD = "agent-under-test"


async def echo(context: RequestContext) -> str:
    """Echoes the text, naming the caller."""
    who = context.call.principal.id if context.call and context.call.principal else "-"
    return f"echo: {context.text} ({who})"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict[str, Any], claims: dict[str, Any], sign: Any = None) -> str:
    """A token built by hand, the way an attacker would (no library help)."""
    head = _b64(json.dumps(header).encode())
    body = _b64(json.dumps(claims).encode())
    signature = sign(f"{head}.{body}".encode()) if sign else b""
    return f"{head}.{body}.{_b64(signature)}"


@pytest.fixture
async def idp() -> AsyncIterator[IdentityProvider]:
    async with IdentityProvider(audience=AUD) as provider:
        yield provider


@pytest.fixture
async def server(idp: IdentityProvider) -> AsyncIterator[Any]:
    async with running_server(
        echo,
        oidc_issuer=idp.issuer,
        oidc_audience=AUD,
        oidc_leeway=5,
        operation_scopes={"send": "a2a.send", "read": ["a2a.read", "a2a.send"]},
    ) as srv:
        yield srv


def send_body(text: str = "hi") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}},
    }


async def call(srv: Any, token: str | None) -> httpx.Response:
    headers = {"A2A-Version": "1.0"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(srv.url + "/", json=send_body(), headers=headers)


def claims(idp: IdentityProvider, **changes: Any) -> dict[str, Any]:
    import time

    now = int(time.time())
    base = {"iss": idp.issuer, "sub": "mallory", "aud": AUD, "exp": now + 300, "iat": now}
    base.update(changes)
    base["scope"] = "a2a.send"
    return base


async def test_a_valid_token_is_accepted_and_names_the_principal(
    idp: IdentityProvider, server: Any
) -> None:
    answer = await call(server, idp.issue("alice", scopes=["a2a.send"]))
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    text = json.dumps(result)
    assert "echo: hi (alice)" in text
    task_id = (result.get("task") or {}).get("id")
    if task_id:  # the task is alice's: her token sees it, bob's does not
        got = await _get(server, idp.issue("alice", scopes=["a2a.read"]), task_id)
        assert got.status_code == 200
        other = await _get(server, idp.issue("bob", scopes=["a2a.read"]), task_id)
        assert other.json()["error"]["code"] == -32001


async def _get(srv: Any, token: str, task_id: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            srv.url + "/",
            json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}},
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        )


def _refused(answer: httpx.Response, status: int = 401) -> None:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    if status == 401:
        assert error["code"] == -32051
        assert answer.headers["www-authenticate"].startswith("Bearer realm=")
        assert error["message"] in (
            "Invalid bearer token",
            "This agent requires authentication (see the agent card's securitySchemes)",
        )
    else:
        assert error["code"] == -32052
    # no detail that helps an attacker: nothing about why the token failed
    for word in ("expired", "audience", "issuer", "signature", "kid", "algorithm"):
        assert word not in answer.text.lower()


@pytest.mark.parametrize(
    ("case", "kwargs"),
    [
        ("expired", {"expires_in": -120}),
        ("not yet valid", {"not_before": 120}),
        ("wrong audience", {"audience": "another-agent"}),
        ("wrong issuer", {"issuer": "http://127.0.0.1:1/evil"}),
    ],
)
async def test_bad_claims_are_refused(
    idp: IdentityProvider,
    server: Any,
    case: str,
    kwargs: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = idp.issue("alice", scopes=["a2a.send"], **kwargs)
    with caplog.at_level(logging.WARNING, logger="a2a_core.auth"):
        answer = await call(server, token)
    _refused(answer)
    lines = [r for r in caplog.records if r.name == "a2a_core.auth"]
    assert len(lines) == 1, [r.getMessage() for r in lines]  # logged once
    assert token not in lines[0].getMessage()  # never the credential


async def test_expiry_within_the_skew_is_accepted(idp: IdentityProvider, server: Any) -> None:
    # leeway 5 s: a token that expired 2 s ago still passes, one 120 s ago does not (above)
    answer = await call(server, idp.issue("alice", scopes=["a2a.send"], expires_in=-2))
    assert answer.status_code == 200, answer.text


async def test_no_token_is_401_with_a_challenge(server: Any) -> None:
    _refused(await call(server, None))


async def test_a_rotated_key_is_fetched_once_for_its_unknown_kid(idp: IdentityProvider) -> None:
    async with running_server(echo, oidc_issuer=idp.issuer, oidc_audience=AUD) as srv:
        assert (await call(srv, idp.issue("alice"))).status_code == 200
        assert idp.counters.jwks == 1
        old = idp.signing_key
        idp.rotate()  # the old key is withdrawn, a new one signs
        # the backend refreshes at most once per min_refresh_interval (30 s): make it due
        backend = _jwt_backend(srv)
        backend.keys.min_refresh_interval = 0
        assert (await call(srv, idp.issue("alice"))).status_code == 200
        assert idp.counters.jwks == 2
        # a token of the withdrawn key: refused (its kid is unknown after the refresh)
        _refused(await call(srv, idp.issue("alice", key=old)))
        # an unknown kid refreshes once, then is rate-limited: no fetch storm
        backend.keys.min_refresh_interval = 3600
        for _ in range(3):
            _refused(await call(srv, idp.issue("alice", key=old)))
        assert idp.counters.jwks == 3  # the first withdrawn-key call refreshed, no more


def _jwt_backend(srv: Any) -> JWTBearerAuth:
    bound = getattr(srv.service.authenticate, "__self__", None)  # the one backend's method
    assert isinstance(bound, JWTBearerAuth)
    return bound


async def test_alg_none_is_refused(idp: IdentityProvider, server: Any) -> None:
    token = forged({"alg": "none", "typ": "JWT", "kid": idp.signing_key.kid}, claims(idp))
    _refused(await call(server, token))


async def test_hs256_signed_with_the_public_key_is_refused(
    idp: IdentityProvider, server: Any
) -> None:
    pem = idp.signing_key.public_pem()
    token = forged(
        {"alg": "HS256", "typ": "JWT", "kid": idp.signing_key.kid},
        claims(idp),
        lambda data: hmac.new(pem, data, hashlib.sha256).digest(),
    )
    _refused(await call(server, token))


async def test_a_tampered_payload_is_refused(idp: IdentityProvider, server: Any) -> None:
    head, _, sig = idp.issue("alice", scopes=["a2a.send"]).split(".")
    body = _b64(json.dumps(claims(idp, sub="admin")).encode())
    _refused(await call(server, f"{head}.{body}.{sig}"))


async def test_a_missing_scope_is_403(
    idp: IdentityProvider, server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="a2a_core.auth"):
        answer = await call(server, idp.issue("alice", scopes=["a2a.read"]))
    _refused(answer, 403)
    assert len([r for r in caplog.records if r.name == "a2a_core.auth"]) == 1
    # RFC 6750 §3.1: the challenge names the error and the scope the operation needs
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer realm=")
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="a2a.send"' in challenge


async def test_a_missing_scope_over_rest_names_the_scopes(
    idp: IdentityProvider, server: Any
) -> None:
    token = idp.issue("alice", scopes=["a2a.other"])
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(
            server.url + "/tasks/nope",
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 403, answer.text
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="a2a.read a2a.send"' in challenge  # either one is enough for a read
    # a token with the scope is not challenged: the task simply does not exist
    token = idp.issue("alice", scopes=["a2a.read"])
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(
            server.url + "/tasks/nope",
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 404, answer.text
    assert "www-authenticate" not in answer.headers


async def test_the_card_advertises_openid_connect(idp: IdentityProvider, server: Any) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        card = (await http.get(server.url + "/.well-known/agent-card.json")).json()
    scheme = card["securitySchemes"]["oidc"]  # the 1.0 shape (and the 0.3 one beside it)
    assert scheme["openIdConnectSecurityScheme"] == {"openIdConnectUrl": idp.discovery_url}
    # the requirement lists the scopes operation_scopes names, so a client knows what to ask for
    assert {"schemes": {"oidc": {"list": ["a2a.read", "a2a.send"]}}} in card["securityRequirements"]


async def test_schemes_without_scopes_list_none(idp: IdentityProvider) -> None:
    async with (
        running_server(
            echo,
            oidc_issuer=idp.issuer,
            oidc_audience=AUD,
            bearer_tokens={"static-token": "ops"},
            operation_scopes={"send": "a2a.send"},
        ) as srv,
        httpx.AsyncClient(timeout=10) as http,
    ):
        card = (await http.get(srv.url + "/.well-known/agent-card.json")).json()
    requirements = card["securityRequirements"]
    assert {"schemes": {"oidc": {"list": ["a2a.send"]}}} in requirements
    assert {"schemes": {"bearer": {"list": []}}} in requirements


async def test_an_oauth2_token_url_advertises_client_credentials(idp: IdentityProvider) -> None:
    async with (
        running_server(
            echo,
            oidc_issuer=idp.issuer,
            oidc_audience=AUD,
            oidc_token_url=idp.token_url,
            operation_scopes={"send": "a2a.send"},
        ) as srv,
        httpx.AsyncClient(timeout=10) as http,
    ):
        card = (await http.get(srv.url + "/.well-known/agent-card.json")).json()
    flow = card["securitySchemes"]["oidc"]["oauth2SecurityScheme"]["flows"]["clientCredentials"]
    assert flow["tokenUrl"] == idp.token_url
    assert "a2a.send" in flow["scopes"]


def test_unsafe_configurations_are_refused() -> None:
    for algorithms in (["none"], ["HS256"], ["RS256", "HS512"], []):
        with pytest.raises(ValueError, match="algorithms"):
            JWTBearerAuth("https://issuer", "aud", algorithms=algorithms)
    with pytest.raises(ValueError, match="leeway"):
        JWTBearerAuth("https://issuer", "aud", leeway=3600)
    with pytest.raises(ValueError, match="audience"):
        JWTBearerAuth("https://issuer", "")


async def test_an_es256_issuer_and_a_key_type_mismatch(caplog: pytest.LogCaptureFixture) -> None:
    async with IdentityProvider(algorithm="ES256", audience=AUD) as idp:
        backend = JWTBearerAuth(idp.issuer, AUD, algorithms=["ES256", "RS256"])
        principal = await backend.authenticate(
            {"authorization": f"Bearer {idp.issue('carol', scopes=['x', 'y'])}"}
        )
        assert principal is not None
        assert (principal.id, principal.scopes) == ("carol", frozenset({"x", "y"}))
        # an RS256 header over the EC key's kid: the key type does not fit the algorithm
        from a2a_core.errors import AuthenticationRequiredError

        token = forged({"alg": "RS256", "kid": idp.signing_key.kid}, claims(idp), lambda d: b"x")
        with pytest.raises(AuthenticationRequiredError) as caught:
            await backend.authenticate({"authorization": f"Bearer {token}"})
        assert "RSA" in str(caught.value.__cause__) or "EC" in str(caught.value.__cause__)


async def test_a_key_declared_for_one_algorithm_refuses_a_token_of_another(
    idp: IdentityProvider,
) -> None:
    """The JWKS says the key is for RS256: an RS384 token signed with it is refused."""
    import jwt

    backend = JWTBearerAuth(idp.issuer, AUD, algorithms=["RS256", "RS384"])
    key = idp.signing_key
    good = jwt.encode(claims(idp), key.private_key, algorithm="RS256", headers={"kid": key.kid})
    assert (await backend.verify(good))["sub"]
    other = jwt.encode(claims(idp), key.private_key, algorithm="RS384", headers={"kid": key.kid})
    with pytest.raises(jwt.InvalidAlgorithmError, match="the key is for RS256"):
        await backend.verify(other)
