"""A test identity provider on 127.0.0.1: discovery, JWKS and a client-credentials token endpoint.

Keys are made when it starts (RSA, or EC with ``algorithm="ES256"``); tests
mint tokens with ``issue`` (any claims, expired or not yet valid ones too),
register clients with ``add_client`` and rotate keys with ``rotate``::

    async with IdentityProvider() as idp:
        token = idp.issue("alice", audience="my-agent", scopes=["a2a.send"])
        async with running_server(agent, oidc_issuer=idp.issuer, oidc_audience="my-agent"):
            ...

``protected_whoami`` is the usual pair on top of it: a provider with one
client-credentials client and, behind it, an agent that names its caller::

    async with protected_whoami("my-agent", "svc", "s3cret") as remote:
        ...  # remote.url, remote.idp, remote.callers == ["svc", "alice", ...]

Needs the ``[jwt]`` extra (PyJWT with cryptography). Loopback only; never for production.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import secrets
import socket
import ssl
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, unquote_plus

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

if TYPE_CHECKING:
    from ..compose.serve import RunningServer
    from ..server.executor import RequestContext

__all__ = [
    "TOKEN_FAILURES",
    "IdentityProvider",
    "ProtectedAgent",
    "SigningKey",
    "failing_token_endpoint",
    "protected_whoami",
]

_Receive = Callable[[], Awaitable[dict[str, Any]]]
_Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class SigningKey:
    """One key pair of the provider: ``kid``, algorithm, private key, public JWK."""

    kid: str
    algorithm: str
    private_key: Any
    jwk: dict[str, Any]

    @classmethod
    def generate(cls, algorithm: str = "RS256", kid: str | None = None) -> SigningKey:
        """A fresh key pair for ``algorithm`` (RS256/PS256 -> RSA 2048, ES256 -> P-256)."""
        kid = kid or uuid.uuid4().hex[:12]
        if algorithm.startswith(("RS", "PS")):
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            public_jwk = dict(RSAAlgorithm.to_jwk(private.public_key(), as_dict=True))
        elif algorithm == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
            public_jwk = dict(ECAlgorithm.to_jwk(private.public_key(), as_dict=True))
        else:
            raise ValueError(f"unsupported test key algorithm {algorithm!r}")
        public_jwk.update({"kid": kid, "alg": algorithm, "use": "sig"})
        return cls(kid, algorithm, private, public_jwk)

    def public_pem(self) -> bytes:
        """The public key in PEM (what an algorithm-confusion attacker would use as a secret)."""
        from cryptography.hazmat.primitives import serialization

        return self.private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


@dataclass
class _Client:
    secret: str
    scopes: frozenset[str]
    subject: str


@dataclass
class _Counters:
    discovery: int = 0
    jwks: int = 0
    token: int = 0
    token_failures: int = 0
    issued: list[str] = field(default_factory=list[str])


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


class IdentityProvider:
    """An OpenID Connect provider for tests, served on 127.0.0.1 while entered (async)."""

    def __init__(
        self,
        *,
        algorithm: str = "RS256",
        audience: str = "a2a-agent",
        token_ttl: int = 300,
    ) -> None:
        self.algorithm = algorithm
        self.default_audience = audience
        self.token_ttl = token_ttl
        self.keys: list[SigningKey] = [SigningKey.generate(algorithm)]
        """Published keys; the first one signs."""
        self.clients: dict[str, _Client] = {}
        self.counters = _Counters()
        self.issuer = ""
        """``http://127.0.0.1:<port>`` once started."""
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None

    # -- keys, clients, tokens ---------------------------------------------------------

    @property
    def signing_key(self) -> SigningKey:
        """The key new tokens are signed with."""
        return self.keys[0]

    def rotate(self, *, keep_old: bool = False) -> SigningKey:
        """Sign with a new key from now on; the old keys stay published only with ``keep_old``."""
        new = SigningKey.generate(self.algorithm)
        self.keys = [new, *self.keys] if keep_old else [new]
        return new

    def add_client(
        self,
        client_id: str,
        secret: str | None = None,
        *,
        scopes: Iterable[str] = (),
        subject: str | None = None,
    ) -> str:
        """Register a client-credentials client; returns its secret."""
        secret = secret or secrets.token_urlsafe(24)
        self.clients[client_id] = _Client(secret, frozenset(scopes), subject or client_id)
        return secret

    def issue(
        self,
        subject: str = "alice",
        *,
        audience: str | list[str] | None = None,
        scopes: Iterable[str] = (),
        expires_in: float | None = None,
        not_before: float | None = None,
        issuer: str | None = None,
        key: SigningKey | None = None,
        claims: Mapping[str, Any] | None = None,
    ) -> str:
        """A signed token; ``expires_in`` / ``not_before`` are seconds from now (negative: past)."""
        now = time.time()
        key = key or self.signing_key
        payload: dict[str, Any] = {
            "iss": issuer if issuer is not None else self.issuer,
            "sub": subject,
            "aud": audience if audience is not None else self.default_audience,
            "iat": int(now),
            "exp": int(now + (self.token_ttl if expires_in is None else expires_in)),
            "jti": uuid.uuid4().hex,
        }
        if not_before is not None:
            payload["nbf"] = int(now + not_before)
        scope_list = list(scopes)
        if scope_list:
            payload["scope"] = " ".join(scope_list)
        payload.update(claims or {})
        return jwt.encode(
            payload, key.private_key, algorithm=key.algorithm, headers={"kid": key.kid}
        )

    @property
    def discovery_url(self) -> str:
        """``<issuer>/.well-known/openid-configuration``."""
        return f"{self.issuer}/.well-known/openid-configuration"

    @property
    def token_url(self) -> str:
        """The client-credentials token endpoint."""
        return f"{self.issuer}/token"

    @property
    def jwks_url(self) -> str:
        """The published key set."""
        return f"{self.issuer}/jwks"

    # -- HTTP --------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: _Receive, send: _Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if path == "/.well-known/openid-configuration" and method == "GET":
            self.counters.discovery += 1
            await _json(send, 200, self._discovery())
        elif path == "/jwks" and method == "GET":
            self.counters.jwks += 1
            await _json(send, 200, {"keys": [k.jwk for k in self.keys]})
        elif path == "/token" and method == "POST":
            self.counters.token += 1
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            status, answer = self._token(headers, body)
            if status != 200:
                self.counters.token_failures += 1
            await _json(send, status, answer)
        else:
            await _json(send, 404, {"error": "not_found"})

    def _discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "jwks_uri": self.jwks_url,
            "token_endpoint": self.token_url,
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "id_token_signing_alg_values_supported": [self.algorithm],
        }

    def _token(self, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        client_id, secret = form.get("client_id"), form.get("client_secret")
        auth = headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(auth[6:].strip()).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return 401, {"error": "invalid_client"}
            # Each part was form-encoded before joining them (RFC 6749 section 2.3.1).
            raw_id, _, raw_secret = decoded.partition(":")
            client_id, secret = unquote_plus(raw_id), unquote_plus(raw_secret)
        client = self.clients.get(client_id or "")
        if client is None or secret is None or not secrets.compare_digest(client.secret, secret):
            return 401, {"error": "invalid_client"}
        requested = set(form.get("scope", "").split())
        granted = sorted(requested & client.scopes) if requested else sorted(client.scopes)
        if requested - client.scopes:
            return 400, {"error": "invalid_scope"}
        audience = form.get("audience") or form.get("resource") or self.default_audience
        token = self.issue(client.subject, audience=audience, scopes=granted)
        self.counters.issued.append(token)
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.token_ttl,
        }
        if granted:
            answer["scope"] = " ".join(granted)
        return 200, answer

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> IdentityProvider:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self, lifespan="on", log_level="warning", access_log=False)
        self._server = _Server(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve(sockets=[sock]))
        deadline = time.monotonic() + 10
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the identity provider stopped during startup")
            if time.monotonic() > deadline:
                raise RuntimeError("the identity provider did not start")
            await asyncio.sleep(0.005)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=10)
            except TimeoutError:
                self._task.cancel()
        if self._sock is not None:
            self._sock.close()

    def __repr__(self) -> str:
        return f"IdentityProvider(issuer={self.issuer!r}, clients={sorted(self.clients)})"


TokenFailure = Literal["down", "refused", "malformed", "tls"]
TOKEN_FAILURES: tuple[TokenFailure, ...] = ("down", "refused", "malformed", "tls")
"""Every way a client can fail to get a token: no endpoint, a refusal, not a token, bad TLS."""

_NOT_A_TOKEN = b"<html><body>Sign in</body></html>"


@contextlib.asynccontextmanager
async def failing_token_endpoint(
    failure: TokenFailure, idp: IdentityProvider, folder: Path
) -> AsyncGenerator[str]:
    """The URL of a token endpoint that fails as ``failure`` says, while entered.

    ``down``: nothing listens there; ``refused``: ``idp``'s own endpoint (the test
    sends a wrong secret); ``malformed``: it answers 200 with an HTML page;
    ``tls``: HTTPS with a certificate of a CA made in ``folder``, which no client trusts.
    """
    if failure == "refused":
        yield idp.token_url
        return
    if failure == "down":
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        yield f"http://127.0.0.1:{port}/token"  # closed again: connections are refused
        return
    context: ssl.SSLContext | None = None
    if failure == "tls":
        from .pki import TestCA

        issued = TestCA(folder).server_cert()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(issued.cert, issued.key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nconnection: close\r\n"
            length = b"content-length: %d\r\n\r\n" % len(_NOT_A_TOKEN)
            writer.write(head + length + _NOT_A_TOKEN)
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client gave up (a TLS handshake it refused)
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if context else 'http'}://127.0.0.1:{port}/token"
    finally:
        server.close()
        await server.wait_closed()


async def _json(send: _Send, status: int, value: object) -> None:
    body = json.dumps(value).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store")],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- an agent behind the provider --------------------------------------------------------


@dataclass(frozen=True)
class ProtectedAgent:
    """A running agent that only answers tokens of ``idp`` (see ``protected_whoami``)."""

    idp: IdentityProvider
    server: RunningServer
    callers: list[str]
    """The principal id of every call the agent answered, in order ("-" for none)."""

    @property
    def url(self) -> str:
        """Where the agent is served."""
        return self.server.url


def _whoami(
    callers: list[str], *, echo: bool = False
) -> Callable[[RequestContext], Awaitable[str]]:
    """An agent answering ``hello <caller>`` (``hello <caller>: <text>`` with ``echo``);
    it appends each caller to ``callers``."""

    async def agent(context: RequestContext) -> str:
        """Names the caller."""
        who = context.principal.id if context.principal is not None else "-"
        callers.append(who)
        return f"hello {who}: {context.text}" if echo else f"hello {who}"

    return agent


@contextlib.asynccontextmanager
async def protected_whoami(
    audience: str,
    client_id: str,
    client_secret: str,
    *,
    scopes: Iterable[str] = ("a2a.send",),
    echo: bool = False,
    publish_token_url: bool = False,
    **server_options: Any,
) -> AsyncGenerator[ProtectedAgent]:
    """A test IdP with one client-credentials client, and a ``whoami`` agent behind it.

    The agent (``running_server`` on 127.0.0.1) takes tokens of the provider
    for ``audience`` and needs the ``a2a.send`` scope to send;
    ``publish_token_url`` puts the provider's token endpoint on its card (so
    ``ClientCredentials`` without a ``token_url`` find it). ``server_options``
    go to ``running_server`` (``grpc_port=0``...).
    """
    from ..compose.serve import running_server

    async with IdentityProvider(audience=audience) as idp:
        idp.add_client(client_id, client_secret, scopes=scopes)
        if publish_token_url:
            server_options["oidc_token_url"] = idp.token_url
        callers: list[str] = []
        async with running_server(
            _whoami(callers, echo=echo),
            oidc_issuer=idp.issuer,
            oidc_audience=audience,
            operation_scopes={"send": "a2a.send"},
            **server_options,
        ) as server:
            yield ProtectedAgent(idp, server, callers)
