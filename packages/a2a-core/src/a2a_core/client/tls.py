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

__all__ = ["ClientCert", "VerifySetting", "client_ssl_context"]

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
