"""Mutual TLS over real TLS on 127.0.0.1, with certificates made in the test (``TestCA``).

The server requires a client certificate from its CA and takes the caller from the
subject (CN by default, or another field); a client without a certificate, or with one
from another CA (even naming the same CN), is refused in the handshake; two principals
do not see each other's tasks; the card declares the mutual-TLS scheme; the ASGI TLS
extension reaches the app.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from a2a_core.client import A2AClient
from a2a_core.client.transports.errors import A2AConnectionError
from a2a_core.compose.serve import running_server
from a2a_core.errors import TaskNotFoundError
from a2a_core.mtls import MutualTLSAuth
from a2a_core.server.executor import RequestContext
from a2a_core.server.tls import ServerTLS, with_tls_extension
from a2a_core.testing import AskingAgent
from a2a_core.testing.pki import IssuedCert, TestCA
from uvicorn.protocols.http.h11_impl import H11Protocol

pytestmark = pytest.mark.timeout(60)


async def whoami(context: RequestContext) -> str:
    """Says who is calling."""
    principal = context.principal
    return f"{principal.scheme}:{principal.id}" if principal is not None else "anonymous"


class PKI:
    def __init__(self, folder: Path) -> None:
        self.ca = TestCA(folder / "ca", "Agents CA")
        self.server = self.ca.server_cert()
        self.alice = self.ca.client_cert("alice", organization="Accounts", uri="spiffe://a/alice")
        self.bob = self.ca.client_cert("bob", organization="Accounts")
        self.other_ca = TestCA(folder / "other", "Other CA")
        self.impostor = self.other_ca.client_cert("alice")  # same CN, wrong issuer

    def tls(self, field: str = "CN") -> ServerTLS:
        return ServerTLS(
            self.server.cert, self.server.key, client_ca=self.ca.cert_path, principal_field=field
        )

    async def client(self, url: str, who: IssuedCert | None) -> A2AClient:
        cert = who.pair if who is not None else None
        return await A2AClient.connect(url, verify=str(self.ca.cert_path), cert=cert)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"))


async def test_the_certificate_subject_is_the_principal(pki: PKI) -> None:
    async with running_server(whoami, tls=pki.tls()) as srv:
        assert srv.url.startswith("https://localhost:")
        async with await pki.client(srv.url, pki.alice) as alice:
            assert (await alice.send("who?")).text == "mtls:alice"
            card = alice.card
            assert card is not None
            scheme = card.security_schemes["mtls"]
            assert scheme.mtls_security_scheme is not None
            assert all(i.url.startswith("https://") for i in card.supported_interfaces)
        async with await pki.client(srv.url, pki.bob) as bob:
            assert (await bob.send("who?")).text == "mtls:bob"


async def test_another_subject_field_names_the_principal(pki: PKI) -> None:
    async with running_server(whoami, tls=pki.tls("san:uri")) as srv:
        async with await pki.client(srv.url, pki.alice) as alice:
            assert (await alice.send("who?")).text == "mtls:spiffe://a/alice"
        # bob's certificate has no URI name: refused by the app with 401, not served anonymously
        async with httpx.AsyncClient(verify=_context(pki, pki.bob), base_url=srv.url) as http:
            answer = await http.post(
                "/",
                json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
                headers={"A2A-Version": "1.0"},
            )
        assert answer.status_code == 401
        assert "spiffe" not in answer.text


def _context(pki: PKI, who: IssuedCert | None) -> Any:
    from a2a_core.client.tls import client_ssl_context

    return client_ssl_context(str(pki.ca.cert_path), who.pair if who is not None else None)


@pytest.mark.parametrize("who", ["nobody", "impostor"])
async def test_no_certificate_or_one_from_another_ca_is_refused(pki: PKI, who: str) -> None:
    presented = None if who == "nobody" else pki.impostor
    async with running_server(whoami, tls=pki.tls()) as srv:
        with pytest.raises((A2AConnectionError, httpx.TransportError)):
            await pki.client(srv.url, presented)
        async with httpx.AsyncClient(verify=_context(pki, presented)) as http:
            with pytest.raises(httpx.TransportError):
                await http.get(srv.url + "/.well-known/agent-card.json")
        async with await pki.client(srv.url, pki.alice) as alice:  # the server still serves
            assert (await alice.send("who?")).text == "mtls:alice"


async def test_two_principals_do_not_see_each_others_tasks(pki: PKI) -> None:
    async with running_server(AskingAgent(), tls=pki.tls()) as srv:
        alice = await pki.client(srv.url, pki.alice)
        bob = await pki.client(srv.url, pki.bob)
        async with alice, bob:
            task_id = (await alice.send("hello")).task_id
            assert task_id is not None
            assert (await alice.get_task(task_id)).id == task_id
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(task_id)
            with pytest.raises(TaskNotFoundError):
                await bob.cancel(task_id)
            assert task_id not in [t.id for t in (await bob.list_tasks()).tasks]
            assert task_id in [t.id for t in (await alice.list_tasks()).tasks]


async def test_the_app_sees_the_asgi_tls_extension(pki: PKI) -> None:
    """The protocol serve() uses puts the verified client certificate in the scope."""
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        seen.append(scope["extensions"]["tls"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        http=with_tls_extension(H11Protocol),
        **pki.tls().uvicorn_options(),
    )
    server = uvicorn.Server(config)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            while not server.started:
                assert not task.done()
                await asyncio.sleep(0.01)
            async with httpx.AsyncClient(verify=_context(pki, pki.bob)) as http:
                assert (await http.get(f"https://localhost:{port}/")).status_code == 204
        finally:
            server.should_exit = True
            await asyncio.wait_for(task, 10)
    (tls,) = seen
    assert tls["client_cert_name"] == "O=Accounts,CN=bob"
    assert tls["client_cert_error"] is None
    assert tls["tls_version"] in (0x0303, 0x0304)
    (pem,) = tls["client_cert_chain"]
    assert MutualTLSAuth().principal_of(pem).id == "bob"
    principal = MutualTLSAuth("subject").principal_of(pem)
    assert principal.id == "O=Accounts,CN=bob"
    assert principal.attributes["issuer"] == "CN=Agents CA"
    assert MutualTLSAuth("O").principal_of(pem).id == "Accounts"


def test_configuration_mistakes_are_named(pki: PKI, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="principal_field"):
        MutualTLSAuth("nickname")
    with pytest.raises(ValueError, match="CA file not found"):
        ServerTLS(pki.server.cert, pki.server.key, client_ca=tmp_path / "none.pem").check()
    assert "key_password" not in repr(
        ServerTLS(pki.server.cert, pki.server.key, key_password="s3cret")
    )
    assert "s3cret" not in repr(ServerTLS(pki.server.cert, pki.server.key, key_password="s3cret"))


async def test_grpc_serves_the_same_tls_and_takes_the_same_principal(pki: PKI) -> None:
    pytest.importorskip("grpc")
    ca = str(pki.ca.cert_path)
    async with running_server(AskingAgent(), tls=pki.tls(), grpc_port=0) as srv:

        async def over_grpc(who: IssuedCert) -> A2AClient:
            client = await A2AClient.connect(
                srv.url, verify=ca, cert=who.pair, preferred_bindings=["GRPC"]
            )
            assert client.interface is not None
            assert client.interface.protocol_binding == "GRPC"
            assert client.interface.url.startswith("grpcs://localhost:")
            return client

        alice = await over_grpc(pki.alice)
        bob = await over_grpc(pki.bob)
        async with alice, bob:
            task_id = (await alice.send("hello")).task_id
            assert task_id is not None
            assert (await alice.get_task(task_id)).id == task_id
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(task_id)
            assert task_id not in [t.id for t in (await bob.list_tasks()).tasks]
        # the task belongs to alice whichever binding she uses
        async with await pki.client(srv.url, pki.alice) as over_http:
            assert (await over_http.get_task(task_id)).id == task_id
        address = srv.grpc_address
        assert address is not None
        grpc_url = f"grpcs://localhost:{address.rpartition(':')[2]}"
        for presented in (None, pki.impostor):
            cert = presented.pair if presented is not None else None
            async with A2AClient.for_endpoint(
                grpc_url, binding="GRPC", verify=ca, cert=cert, timeout=10
            ) as refused:
                with pytest.raises(A2AConnectionError):
                    await refused.get_task(task_id)
