"""Network streams that still read a server's answer when it cut the upload short.

A server that refuses a large body (413) answers as soon as it has the
headers and stops reading: it closes the connection (the kernel then resets
it, since unread data is left) or leaves it open. httpcore means to handle
that: it swallows the ``WriteError`` of a cut upload and reads the response.
Over its default (anyio/asyncio) streams it cannot: the answer waits in the
kernel's receive queue, unread (anyio pauses reading between reads); the
write that meets the reset makes asyncio close the socket, and the queued
answer goes with it. The client sees "connection reset" instead of the 413,
or, when the server leaves the connection open without reading, a write
timeout. (Linux keeps data that arrived before a reset readable until the
socket is closed; it is asyncio's transport that closes it.)

``EarlyAnswerBackend`` is an httpcore network backend over plain
non-blocking sockets driven by the event loop (``sock_recv`` and our own
send loop), with TLS through ``ssl.SSLObject``. A failed write leaves the
socket open, so the answer that came first is still read. A write that has
to wait also watches for the answer: when the server answers (or hangs up)
mid-upload, the upload stops with a ``WriteError``, which httpcore swallows
before reading the response. The connection is then not reused (the request
never finished), as httpcore decides.
"""

# httpcore's stream and backend interfaces take per-operation ``timeout`` arguments.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["EarlyAnswerBackend", "PlainStream", "TlsStream", "answer_early", "drop_idle"]

_TLS_READ = 64 * 1024


class _Answered(Exception):
    """The server answered (or hung up) while a write waited."""


def _timeout_scope(timeout: float | None) -> asyncio.Timeout:
    return asyncio.timeout(timeout)


class PlainStream(httpcore.AsyncNetworkStream):
    """A TCP (or Unix) socket: reads with the loop's ``sock_recv``; writes watch for an answer."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self._loop = asyncio.get_running_loop()
        self._reading = False
        """A read is waiting (HTTP/2 reads and writes at once): writes then leave the
        socket's reader to it."""
        self.answer_check: Callable[[], bool] | None = None
        """Called when the socket turns readable while a write waits: whether that is the
        server's answer (stop the upload). None: anything readable is (plain HTTP)."""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._reading = True
        try:
            async with _timeout_scope(timeout):
                return await self._loop.sock_recv(self.sock, max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout("no data in time") from exc
        except OSError as exc:
            raise httpcore.ReadError(repr(exc)) from exc
        finally:
            self._reading = False

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        try:
            async with _timeout_scope(timeout):
                while view:
                    try:
                        sent = self.sock.send(view)
                    except (BlockingIOError, InterruptedError):
                        if await self._wait_writable():
                            check = self.answer_check
                            if check is None or check():
                                raise _Answered from None
                        continue
                    view = view[sent:]
        except TimeoutError as exc:
            raise httpcore.WriteTimeout("could not send in time") from exc
        except _Answered as exc:
            raise httpcore.WriteError("the server answered before the request was sent") from exc
        except OSError as exc:
            raise httpcore.WriteError(repr(exc)) from exc

    async def _wait_writable(self) -> bool:
        """Wait until the socket takes more data, or has data to read (then True)."""
        fd = self.sock.fileno()
        waiter: asyncio.Future[bool] = self._loop.create_future()
        watch = not self._reading

        def ready(readable: bool) -> None:
            if not waiter.done():
                waiter.set_result(readable)

        self._loop.add_writer(fd, ready, False)
        if watch:
            self._loop.add_reader(fd, ready, True)
        try:
            return await waiter
        finally:
            self._loop.remove_writer(fd)
            if watch:
                self._loop.remove_reader(fd)

    async def aclose(self) -> None:
        self.sock.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = TlsStream(self, ssl_context, server_hostname)
        try:
            await stream.handshake(timeout)
        except BaseException:
            await self.aclose()
            raise
        return stream

    def get_extra_info(self, info: str) -> Any:
        if info == "socket":
            return self.sock
        if info == "client_addr":
            return self.sock.getsockname()
        if info == "server_addr":
            return self.sock.getpeername()
        if info == "is_readable":
            return _readable(self.sock)
        return None


def _readable(sock: socket.socket) -> bool:
    """Whether a read would not block (data, EOF or an error): an idle connection that is
    readable was closed by the server (httpcore then does not reuse it)."""
    try:
        sock.recv(1, socket.MSG_PEEK)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
    return True


class TlsStream(httpcore.AsyncNetworkStream):
    """TLS over a ``PlainStream`` with ``ssl.SSLObject``: the plain stream's writes keep
    watching for the server's answer, and its reads still find it after a reset."""

    def __init__(
        self, raw: PlainStream, context: ssl.SSLContext, server_hostname: str | None
    ) -> None:
        self.raw = raw
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(
            self._incoming, self._outgoing, server_side=False, server_hostname=server_hostname
        )
        self._plain = bytearray()
        """Application data decrypted while a write waited (the start of the answer)."""
        self._eof = False
        raw.answer_check = self._answered

    def _answered(self) -> bool:
        """Readable during an upload: TLS records the server sends unasked (session
        tickets) are taken in and the upload goes on; application data, a close or an
        error is the server's answer."""
        try:
            data = self.raw.sock.recv(_TLS_READ)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        if not data:
            self._incoming.write_eof()
            return True
        self._incoming.write(data)
        try:
            plain = self._tls.read(_TLS_READ)
        except ssl.SSLWantReadError:
            return False
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            self._eof = True
            return True
        except ssl.SSLError:
            return True  # the read meets it again
        if not plain:
            self._eof = True
        self._plain += plain
        return True

    async def handshake(self, timeout: float | None) -> None:
        try:
            async with _timeout_scope(timeout):
                await self._run(self._tls.do_handshake, None)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout("TLS handshake timed out") from exc
        except (httpcore.ReadError, httpcore.WriteError, ssl.SSLError) as exc:
            raise httpcore.ConnectError(repr(exc)) from exc

    async def _flush(self, timeout: float | None, reading: bool = False) -> None:
        pending = self._outgoing.read()
        if pending:
            try:
                await self.raw.write(pending, timeout)
            except httpcore.WriteError:
                if not reading:
                    raise
                # The upload was cut (the server answered or hung up): what it sent
                # before is still to be read.

    async def _run(self, operation: Any, timeout: float | None, *args: Any) -> Any:
        reading = operation == self._tls.read
        while True:
            try:
                result = operation(*args)
            except ssl.SSLWantReadError:
                await self._flush(timeout, reading)
                data = await self.raw.read(_TLS_READ, timeout)
                if data:
                    self._incoming.write(data)
                else:
                    self._incoming.write_eof()
                continue
            await self._flush(timeout, reading)
            return result

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._plain:
            data = bytes(self._plain[:max_bytes])
            del self._plain[:max_bytes]
            return data
        if self._eof:
            return b""
        try:
            data = await self._run(self._tls.read, timeout, max_bytes)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            return b""  # closed (with or without close_notify): the end, as for plain TCP
        except ssl.SSLError as exc:
            raise httpcore.ReadError(repr(exc)) from exc
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        try:
            while view:
                written: int = await self._run(self._tls.write, timeout, view[:_TLS_READ])
                view = view[written:]
        except ssl.SSLError as exc:
            raise httpcore.WriteError(repr(exc)) from exc

    async def aclose(self) -> None:
        with contextlib.suppress(ssl.SSLError, OSError):
            self._tls.unwrap()
            pending = self._outgoing.read()
            if pending:
                self.raw.sock.send(pending)  # best effort, never waits
        await self.raw.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("TLS inside TLS (an HTTPS proxy tunnel) is not supported")

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._tls
        return self.raw.get_extra_info(info)


class EarlyAnswerBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend over plain sockets, reading a server's early answer."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with _timeout_scope(timeout):
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                last: OSError | None = None
                for family, kind, proto, _, address in infos:
                    sock = socket.socket(family, kind, proto)
                    try:
                        sock.setblocking(False)
                        for option in socket_options or ():
                            sock.setsockopt(*option)  # pyright: ignore[reportCallIssue, reportArgumentType]
                        if local_address is not None:
                            sock.bind((local_address, 0))
                        await loop.sock_connect(sock, address)
                    except OSError as exc:
                        sock.close()
                        last = exc
                        continue
                    except BaseException:
                        sock.close()
                        raise
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    return PlainStream(sock)
                raise last or OSError(f"no address for {host}")
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(repr(exc)) from exc

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            for option in socket_options or ():
                sock.setsockopt(*option)  # pyright: ignore[reportCallIssue, reportArgumentType]
            async with _timeout_scope(timeout):
                await loop.sock_connect(sock, path)
        except TimeoutError as exc:
            sock.close()
            raise httpcore.ConnectTimeout(f"connecting to {path} timed out") from exc
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(repr(exc)) from exc
        except BaseException:
            sock.close()
            raise
        return PlainStream(sock)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _pools(http: httpx.AsyncClient) -> list[Any]:
    """The connection pools of ``http``'s own HTTP transports (a custom one has none)."""
    transports: list[Any] = [getattr(http, "_transport", None)]
    transports.extend(getattr(http, "_mounts", {}).values())
    return [
        getattr(t, "_pool", None) for t in transports if isinstance(t, httpx.AsyncHTTPTransport)
    ]


async def drop_idle(http: httpx.AsyncClient) -> None:
    """Close ``http``'s idle connections, so that the next request opens a new one.

    The pool forgets closed connections when it next hands one out. Best effort: a
    client whose transport is not httpx's own keeps its connections.
    """
    for pool in _pools(http):
        connections: list[Any] = list(getattr(pool, "connections", None) or ())
        for connection in connections:
            if connection.is_idle():
                with contextlib.suppress(Exception):
                    await connection.aclose()


def answer_early(http: httpx.AsyncClient) -> httpx.AsyncClient:
    """``http`` with its connection pools on ``EarlyAnswerBackend``; returns ``http``.

    Applies to httpx's own HTTP transports (the client's, and those of
    proxies from the environment); a custom transport is left as it is.
    httpx has no public way to give its pool a network backend, so the pool's
    is replaced in place (the 413 tests fail if that stops taking effect).
    """
    for pool in _pools(http):
        if isinstance(getattr(pool, "_network_backend", None), httpcore.AsyncNetworkBackend):
            pool._network_backend = EarlyAnswerBackend()
    return http
