"""A server's 413 reaches the client as PayloadTooLargeError, also when the upload was cut.

Bodies of 10 MiB + 1 byte, 20 MiB and 100 MiB (exactly: the request's
``Content-Length``) over JSON-RPC and HTTP+JSON, sent by ``A2AClient`` as it
is built by default, to four servers:

- ours, which drains a refused body (up to ``DRAIN_MAX_BYTES``) before it answers;
- ours with the drain bound below the body, so it answers and hangs up mid-upload;
- a raw socket server that answers 413 after the headers and closes without
  reading (the kernel resets the connection: unread data is left);
- a raw socket server that answers 413 and leaves the connection open, never reading.

Without ``EarlyAnswerBackend`` the last three end in a connection error or a
write timeout (the answer is lost in the socket asyncio closes).
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient
from a2a_core.client.transports import answer_early
from a2a_core.client.transports._early import EarlyAnswerBackend
from a2a_core.compose.serve import running_server
from a2a_core.errors import PayloadTooLargeError
from a2a_core.server.asgi import http as asgi_http

pytestmark = pytest.mark.timeout(240)

MiB = 1024 * 1024
SIZES = {"10MiB+1": 10 * MiB + 1, "20MiB": 20 * MiB, "100MiB": 100 * MiB}
BINDINGS = {"jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
_NGINX_413 = (
    b"<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n"
    b"<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n</body>\r\n</html>\r\n"
)


async def echo(context: Any) -> str:
    return f"{len(context.text)} characters"


@dataclass
class RawServer:
    """Answers every request with 413 once it has the headers; never reads the body."""

    keep_open: bool
    sock: socket.socket = field(default_factory=socket.socket)
    declared: list[int] = field(default_factory=list[int])
    """The Content-Length of each request, as received."""
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        self.declared.append(int(value))
                conn.sendall(
                    b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/html\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (len(_NGINX_413), _NGINX_413)
                )
                if self.keep_open:
                    # Never read; wait for the client to give up (it closes: recv sees EOF
                    # once the unread data is all that is left... so poll the stop flag).
                    conn.settimeout(0.2)
                    while not self._stop.is_set():
                        try:
                            if not conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                                break
                        except BlockingIOError:
                            pass
                        except OSError:
                            break
                        self._stop.wait(0.05)
                # Closing with unread data: the kernel resets the connection.

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def big_text() -> str:
    """100 MiB of text, made once; sends use slices of it."""
    return "x" * (100 * MiB)


@pytest.fixture(scope="module")
def overhead() -> Iterator[dict[str, int]]:
    """Bytes each binding's request adds around the text (to send exact body sizes)."""
    import asyncio

    server = RawServer(keep_open=False)
    found: dict[str, int] = {}

    async def probe(binding: str) -> None:
        async with A2AClient.for_endpoint(server.url, binding=binding) as client:
            with pytest.raises(PayloadTooLargeError):
                await client.send("x" * 1000)

    try:
        for key, binding in BINDINGS.items():
            asyncio.run(probe(binding))
            found[key] = server.declared[-1] - 1000
        yield found
    finally:
        server.close()


@asynccontextmanager
async def _server(kind: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, Any]]:
    if kind.startswith("raw"):
        raw = RawServer(keep_open=kind == "raw-open")
        try:
            yield raw.url, raw
        finally:
            raw.close()
        return
    if kind == "ours-undrained":
        monkeypatch.setattr(asgi_http, "DRAIN_MAX_BYTES", 1 * MiB)
    async with running_server(echo, name="Echo") as server:
        yield server.url, None


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
@pytest.mark.parametrize("binding", list(BINDINGS))
@pytest.mark.parametrize("kind", ["ours", "ours-undrained", "raw-close", "raw-open"])
async def test_a_413_is_payload_too_large(
    kind: str,
    binding: str,
    size: str,
    big_text: str,
    overhead: dict[str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body_size = SIZES[size]
    text = big_text[: body_size - overhead[binding]]
    async with _server(kind, monkeypatch) as (url, raw):
        client = A2AClient.for_endpoint(url, binding=BINDINGS[binding], timeout=60)
        async with client:
            with pytest.raises(PayloadTooLargeError):
                await client.send(text)
        if raw is not None:
            assert raw.declared == [body_size]  # the size it was meant to be
    del text


async def test_the_client_works_on_after_a_413() -> None:
    """After a refused upload (the connection is not reused), the next calls on the same
    client work: a large body that fits, and a small one."""
    async with (
        running_server(echo, name="Echo") as server,
        A2AClient.for_endpoint(server.url, binding="HTTP+JSON") as client,
    ):
        with pytest.raises(PayloadTooLargeError):
            await client.send("x" * (11 * MiB))
        assert (await client.send("y" * (3 * MiB))).text == f"{3 * MiB} characters"
        assert (await client.send("z")).text == "1 characters"


async def test_answer_early_replaces_the_network_backend_of_a_given_client() -> None:
    async with httpx.AsyncClient() as http:
        pool: Any = http._transport._pool  # pyright: ignore[reportAttributeAccessIssue, reportPrivateUsage, reportUnknownMemberType]
        assert not isinstance(pool._network_backend, EarlyAnswerBackend)
        assert answer_early(http) is http
        assert isinstance(pool._network_backend, EarlyAnswerBackend)


async def test_a_given_client_with_answer_early_gets_the_413() -> None:
    raw = RawServer(keep_open=False)
    try:
        http = answer_early(httpx.AsyncClient(timeout=30))
        async with http, A2AClient.for_endpoint(raw.url, http_client=http) as client:
            with pytest.raises(PayloadTooLargeError):
                await client.send("x" * (20 * MiB))
    finally:
        raw.close()


# --- TLS: the same backend, through ssl.SSLObject -------------------------------------


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (the key and the certificate, as PEM files)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    key_file, cert_file = folder / "key.pem", folder / "cert.pem"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(key_file), str(cert_file)


class TlsServer:
    """HTTPS on a raw socket: ``refuse`` answers 413 after the headers and closes without
    reading (after ``linger`` seconds; 0: at once); otherwise the whole body is read and
    200 answered (a normal exchange).

    The refusing server sends without delay (``TCP_NODELAY``, as asyncio, uvicorn and
    nginx do). With Nagle's algorithm on, its 413 can wait in its own send queue behind
    an unacknowledged TLS session ticket, and the reset that follows discards it: the
    answer never leaves the server, and no client can read it.
    """

    def __init__(self, files: tuple[str, str], *, refuse: bool, linger: float = 0.0) -> None:
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(files[1], files[0])
        self.refuse = refuse
        self.linger = linger
        self.received: list[int] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                raw, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            raw.settimeout(10)
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                with self.context.wrap_socket(raw, server_side=True) as conn:
                    self._answer(conn)
            except (OSError, ssl.SSLError):
                raw.close()

    def _answer(self, conn: ssl.SSLSocket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            if not chunk:
                return
            head += chunk
        header, _, body = head.partition(b"\r\n\r\n")
        length = 0
        for line in header.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if self.refuse:
            conn.sendall(
                b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/html\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_NGINX_413), _NGINX_413)
            )
            if self.linger:
                self._stop.wait(self.linger)  # as nginx's lingering close, then a reset
            return  # closing with unread data: a reset
        received = len(body)
        while received < length:
            chunk = conn.recv(65536)
            if not chunk:
                return
            received += len(chunk)
        self.received.append(received)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self.thread.join(5)


def _trusting(files: tuple[str, str]) -> httpx.AsyncClient:
    context = ssl.create_default_context(cafile=files[1])
    return answer_early(httpx.AsyncClient(verify=context, timeout=30))


@pytest.mark.parametrize("linger", [0.0, 0.5], ids=["reset-at-once", "reset-after-0.5s"])
async def test_over_tls_a_cut_upload_still_gets_the_413(
    tls_files: tuple[str, str], linger: float
) -> None:
    server = TlsServer(tls_files, refuse=True, linger=linger)
    try:
        http = _trusting(tls_files)
        async with http, A2AClient.for_endpoint(server.url, http_client=http) as client:
            for size in SIZES.values():
                with pytest.raises(PayloadTooLargeError):
                    await client.send("x" * size)
    finally:
        server.close()


async def test_over_tls_a_whole_upload_and_its_answer_arrive(tls_files: tuple[str, str]) -> None:
    """An upload large enough to wait on the socket: the session tickets a TLS 1.3 server
    sends after the handshake make the socket readable, and are not taken for an answer."""
    server = TlsServer(tls_files, refuse=False)
    try:
        http = _trusting(tls_files)
        async with http:
            for size in (3 * MiB, 24 * MiB):
                response = await http.post(server.url, content=b"y" * size)
                assert (response.status_code, response.text) == (200, "ok")
        assert server.received == [3 * MiB, 24 * MiB]
    finally:
        server.close()


async def test_over_tls_an_untrusted_certificate_is_refused(tls_files: tuple[str, str]) -> None:
    server = TlsServer(tls_files, refuse=False)
    try:
        async with answer_early(httpx.AsyncClient(timeout=10)) as http:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.get(server.url)
    finally:
        server.close()


@pytest.mark.parametrize("binding", list(BINDINGS))
@pytest.mark.parametrize("kind", ["ours", "ours-undrained"])
async def test_over_tls_our_server_refusing_gets_the_413(
    tls_files: tuple[str, str], kind: str, binding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our own server over TLS (``serve(tls=ServerTLS(...))``), draining or cutting the upload
    (a body beyond ``DRAIN_MAX_BYTES``), and ``A2AClient`` as built by default with ``verify=``."""
    from a2a_core.server.tls import ServerTLS

    if kind == "ours-undrained":
        monkeypatch.setattr(asgi_http, "DRAIN_MAX_BYTES", 1 * MiB)
    tls = ServerTLS(cert=tls_files[1], key=tls_files[0])
    async with running_server(echo, name="Echo", tls=tls) as server:
        url = server.url.replace("//localhost:", "//127.0.0.1:")  # the certificate's name
        assert url.startswith("https://127.0.0.1:")
        verify = ssl.create_default_context(cafile=tls_files[1])
        client = A2AClient.for_endpoint(url, binding=BINDINGS[binding], timeout=60, verify=verify)
        async with client:
            for size in (10 * MiB + 1, 20 * MiB):
                with pytest.raises(PayloadTooLargeError):
                    await client.send("x" * size)
            assert (await client.send("small")).text == "5 characters"
