"""Client-side TLS: which servers to trust, and the client certificate to present.

``A2AClient.connect(verify=..., cert=...)`` (and ``for_endpoint``, the sync
client, the gateways that take connect options, ``a2a ... --cacert/--cert/--key``)
build one ``ssl.SSLContext`` here and give it to httpx as ``verify=`` (httpx's
own ``cert=`` is deprecated). ``verify`` is True (the system's trusted CAs), a
CA bundle file (a private CA, as for an mTLS deployment), a ready context, or
False (no verification: tests against self-signed servers only).
"""

from __future__ import annotations

import os
import ssl

from .transports.base import TLSFiles

__all__ = ["ClientCert", "TLSFiles", "VerifySetting", "client_ssl_context", "tls_files"]

VerifySetting = ssl.SSLContext | str | os.PathLike[str] | bool
"""``verify=``: True (system CAs), a CA bundle path, an ``SSLContext``, or False."""

ClientCert = str | os.PathLike[str] | tuple[str | os.PathLike[str], str | os.PathLike[str]]
"""``cert=``: a PEM file holding the certificate and its key, or (certificate, key) files."""


def client_ssl_context(
    verify: VerifySetting = True, cert: ClientCert | None = None
) -> ssl.SSLContext | bool:
    """What httpx's ``verify=`` takes for these settings (True when nothing is special)."""
    if cert is None and isinstance(verify, bool | ssl.SSLContext):
        return verify
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif verify is True:
        context = ssl.create_default_context()
    elif verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        path = os.fspath(verify)
        if not os.path.isfile(path):
            raise ValueError(f"CA bundle not found: {path!r}")
        context = ssl.create_default_context(cafile=path)
    if cert is not None:
        certfile, keyfile = cert if isinstance(cert, tuple) else (cert, None)
        for path in (certfile, keyfile):
            if path is not None and not os.path.isfile(path):
                raise ValueError(f"client certificate file not found: {os.fspath(path)!r}")
        context.load_cert_chain(certfile, keyfile)
    return context


def _read(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def tls_files(verify: VerifySetting = True, cert: ClientCert | None = None) -> TLSFiles | None:
    """The files behind ``verify`` / ``cert``; None when they name none (system roots, no
    client certificate, or a ready ``SSLContext``, whose files cannot be read back)."""
    roots = _read(verify) if isinstance(verify, str | os.PathLike) else None
    chain = key = None
    if cert is not None:
        certfile, keyfile = cert if isinstance(cert, tuple) else (cert, None)
        chain = _read(certfile)
        key = _read(keyfile) if keyfile is not None else chain  # the key in the cert file
    if roots is None and chain is None:
        return None
    return TLSFiles(roots, chain, key)
