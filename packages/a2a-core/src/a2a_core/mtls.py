"""Mutual TLS: the verified client certificate of the connection names the caller.

``MutualTLSAuth`` is an auth backend like the bearer ones, but its credential
is not a header: the TLS layer has already checked the client's certificate
against the trusted CA when the connection was made. The app hands each
request's TLS facts (the ASGI TLS extension, ``scope["extensions"]["tls"]``)
to backends through ``a2a_core.identity.connection_tls``; this backend parses
the leaf certificate (``cryptography``, in the ``[jwt]`` or ``[mtls]`` extra)
and makes one field of it the principal: the subject's common name by default.

uvicorn does not fill the extension itself; ``serve`` / ``running_server``
with ``tls=ServerTLS(...)`` (``a2a_core.server.tls``) serve through a protocol
that does. Another ASGI server that implements the extension works too; a
certificate it reports with a ``client_cert_error`` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from .errors import AuthenticationRequiredError
from .identity import Principal, connection_tls
from .types import MutualTlsSecurityScheme, SecurityScheme

__all__ = ["PRINCIPAL_FIELDS", "MutualTLSAuth"]

PRINCIPAL_FIELDS: Mapping[str, str] = {
    "CN": "2.5.4.3",
    "O": "2.5.4.10",
    "OU": "2.5.4.11",
    "serialNumber": "2.5.4.5",
    "UID": "0.9.2342.19200300.100.1.1",
    "emailAddress": "1.2.840.113549.1.9.1",
    "subject": "",
    "san:uri": "",
    "san:email": "",
    "san:dns": "",
}
"""What can name the principal: a subject attribute (RFC 4514 short name), the whole
subject as an RFC 4514 string (``subject``), or the first subject alternative name of a
kind (``san:uri`` for SPIFFE IDs, ``san:email``, ``san:dns``)."""


class MutualTLSAuth:
    """The caller is the verified client certificate's ``principal_field`` (default ``CN``).

    Without a client certificate on the connection it answers None (another
    backend may accept the request); a certificate without that field, or one
    the server reports as unverified, is refused.
    """

    def __init__(
        self,
        principal_field: str = "CN",
        *,
        scheme_name: str = "mtls",
        description: str | None = "A client certificate issued by the agent's trusted CA",
    ) -> None:
        if principal_field not in PRINCIPAL_FIELDS:
            raise ValueError(
                f"principal_field {principal_field!r} is not one of {', '.join(PRINCIPAL_FIELDS)}"
            )
        if not scheme_name:
            raise ValueError("scheme_name must not be empty")
        try:  # fail at configuration, not per request
            import cryptography.x509  # pyright: ignore[reportUnusedImport]  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "MutualTLSAuth needs cryptography: pip install 'a2a-adapters-core[mtls]'"
            ) from exc
        self.principal_field = principal_field
        self._scheme_name = scheme_name
        self._scheme = SecurityScheme(
            mtls_security_scheme=MutualTlsSecurityScheme(description=description)
        )

    @property
    def scheme_name(self) -> str:
        """The name of its security scheme in the card."""
        return self._scheme_name

    @property
    def security_scheme(self) -> SecurityScheme:
        """The mutual-TLS scheme, published in the agent card."""
        return self._scheme

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The principal of the connection's client certificate; None without one."""
        tls = connection_tls.get()
        if tls is None:
            return None
        if tls.get("client_cert_error"):
            raise AuthenticationRequiredError("Client certificate not accepted")
        chain: Any = tls.get("client_cert_chain") or ()
        if not chain:
            return None
        leaf = chain[0]
        return self.principal_of(leaf if isinstance(leaf, str) else str(leaf))

    def principal_of(self, pem: str) -> Principal:
        """The principal a PEM certificate names (``AuthenticationRequiredError`` if none)."""
        from cryptography import x509

        try:
            cert = x509.load_pem_x509_certificate(pem.encode("ascii"))
        except ValueError:
            raise AuthenticationRequiredError("Client certificate not readable") from None
        value = _field(cert, self.principal_field)
        if not value:
            raise AuthenticationRequiredError(
                f"The client certificate has no {self.principal_field}"
            )
        attributes = {
            "subject": cert.subject.rfc4514_string(),
            "issuer": cert.issuer.rfc4514_string(),
            "serial_number": format(cert.serial_number, "x"),
        }
        return Principal(id=value, scheme=self._scheme_name, attributes=attributes)

    def __repr__(self) -> str:
        return f"MutualTLSAuth(principal_field={self.principal_field!r})"


def _field(cert: Any, name: str) -> str | None:
    from cryptography import x509

    if name == "subject":
        return cast(str, cert.subject.rfc4514_string()) or None
    if name.startswith("san:"):
        kinds: dict[str, Any] = {
            "san:uri": x509.UniformResourceIdentifier,
            "san:email": x509.RFC822Name,
            "san:dns": x509.DNSName,
        }
        try:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return None
        values = cast("list[str]", san.get_values_for_type(kinds[name]))
        return values[0] if values else None
    found = cert.subject.get_attributes_for_oid(x509.ObjectIdentifier(PRINCIPAL_FIELDS[name]))
    if not found:
        return None
    value = found[0].value
    return value if isinstance(value, str) else None
