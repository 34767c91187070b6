"""Serving over TLS, optionally requiring client certificates (mutual TLS).

``ServerTLS`` is the ``tls=`` option of ``serve`` / ``running_server`` (and
``a2a serve --tls-cert/--tls-key/--tls-client-ca``). uvicorn terminates TLS;
with ``client_ca`` the handshake requires a client certificate issued by that
CA (a client without one, or with one from another CA, never reaches the
app), and ``MutualTLSAuth`` makes its subject field the principal.

uvicorn does not put the peer certificate in the ASGI scope, so the HTTP
protocol class is wrapped: when a TLS connection is made, the app it calls
for that connection's requests adds the ASGI TLS extension
(``scope["extensions"]["tls"]``: ``client_cert_chain`` with the verified leaf
certificate in PEM, ``client_cert_name`` in RFC 4514, ``tls_version``), read
from the transport's ``ssl_object``. Python's ``ssl`` exposes only the leaf of
the client's chain, and no cipher suite number (``cipher_suite`` is None).

The gRPC listener beside it (``grpc_port``) serves with the same certificate
and client CA; its calls' client certificates reach ``MutualTLSAuth`` the
same way, and the card lists it as ``grpcs://host:port``.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["ServerTLS", "tls_extension", "with_tls_extension"]

_TLS_VERSIONS = {"TLSv1": 0x0301, "TLSv1.1": 0x0302, "TLSv1.2": 0x0303, "TLSv1.3": 0x0304}

_App = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Any]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """TLS for the HTTP server: its certificate and key, and the CA of client certificates.

    - ``cert`` / ``key``: PEM files (the chain first in ``cert``); ``key`` may be in
      ``cert``; ``key_password`` for an encrypted key.
    - ``client_ca``: PEM file of the CA(s) whose client certificates are accepted;
      given, every connection must present one (mutual TLS) and the subject's
      ``principal_field`` (see ``a2a_core.mtls.PRINCIPAL_FIELDS``; default ``CN``)
      is the caller.
    """

    cert: str | os.PathLike[str]
    key: str | os.PathLike[str] | None = None
    client_ca: str | os.PathLike[str] | None = None
    principal_field: str = "CN"
    key_password: str | None = None

    @property
    def mutual(self) -> bool:
        """Whether client certificates are required."""
        return self.client_ca is not None

    def check(self) -> None:
        """Refuse missing files and an unknown principal field early, with their names."""
        for what, path in (("certificate", self.cert), ("key", self.key), ("CA", self.client_ca)):
            if path is not None and not os.path.isfile(path):
                raise ValueError(f"TLS {what} file not found: {os.fspath(path)!r}")
        from ..mtls import PRINCIPAL_FIELDS

        if self.principal_field not in PRINCIPAL_FIELDS:
            raise ValueError(
                f"principal_field {self.principal_field!r} is not one of "
                f"{', '.join(PRINCIPAL_FIELDS)}"
            )

    def uvicorn_options(self) -> dict[str, Any]:
        """The ``uvicorn.Config`` keywords for this TLS setup."""
        options: dict[str, Any] = {
            "ssl_certfile": os.fspath(self.cert),
            "ssl_keyfile": os.fspath(self.key) if self.key is not None else None,
            "ssl_keyfile_password": self.key_password,
        }
        if self.client_ca is not None:
            options["ssl_ca_certs"] = os.fspath(self.client_ca)
            options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
        return options

    def grpc_options(self) -> dict[str, Any]:
        """``GrpcServer`` keywords serving gRPC with the same certificate (and client CA)."""
        import grpc

        if self.key_password is not None:
            raise ValueError("gRPC cannot read an encrypted key: give an unencrypted one")
        cert = _read(self.cert)
        key = _read(self.key) if self.key is not None else cert  # the key in the cert file
        roots = _read(self.client_ca) if self.client_ca is not None else None
        credentials = grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=roots, require_client_auth=self.mutual
        )
        return {"credentials": credentials, "client_certificates": self.mutual}

    def __repr__(self) -> str:  # never the key password
        return (
            f"ServerTLS(cert={os.fspath(self.cert)!r}, client_ca="
            f"{os.fspath(self.client_ca) if self.client_ca else None!r}, "
            f"principal_field={self.principal_field!r})"
        )


def _read(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def tls_extension(transport: asyncio.BaseTransport) -> dict[str, Any] | None:
    """The ASGI TLS extension for a connection, or None when it is not TLS."""
    ssl_object = cast("ssl.SSLObject | None", transport.get_extra_info("ssl_object"))
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    # A server that does not ask for client certificates (CERT_NONE) gets none; one that
    # does only completes the handshake with a certificate that verified.
    chain = [ssl.DER_cert_to_PEM_cert(der)] if der else []
    return {
        "server_cert": None,
        "client_cert_chain": chain,
        "client_cert_name": _rfc4514(der) if der else None,
        "client_cert_error": None,
        "tls_version": _TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": None,
    }


def _rfc4514(der: bytes) -> str | None:
    try:
        from cryptography import x509
    except ImportError:  # pragma: no cover - the name is optional in the extension
        return None
    return x509.load_der_x509_certificate(der).subject.rfc4514_string()


def with_tls_extension(protocol: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP ``protocol`` whose TLS connections fill the TLS extension."""
    base = cast("type[Any]", protocol)

    class TLSExtensionProtocol(base):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # pyright: ignore[reportUnknownMemberType]
            extension = tls_extension(transport)
            if extension is not None:
                self.app = _adding(self.app, extension)

    TLSExtensionProtocol.__name__ = f"TLS{protocol.__name__}"
    return cast("type[asyncio.Protocol]", TLSExtensionProtocol)


def _adding(app: _App, extension: dict[str, Any]) -> _App:
    async def with_tls(
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        scope["extensions"] = {**(scope.get("extensions") or {}), "tls": extension}
        await app(scope, receive, send)

    return with_tls
