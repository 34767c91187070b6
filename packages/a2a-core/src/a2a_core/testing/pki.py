"""A throwaway certificate authority for tests of TLS and mutual TLS on 127.0.0.1.

``TestCA`` makes a CA key and certificate; ``server_cert`` issues one for
``localhost`` and ``127.0.0.1``, ``client_cert`` one whose subject names a
caller. Each writes PEM files into a folder so they can be handed to
``ServerTLS``, ``A2AClient.connect(verify=..., cert=...)`` or ``a2a ... --cacert``::

    ca = TestCA(tmp_path, "Test CA")
    server = ca.server_cert()
    alice = ca.client_cert("alice")
    tls = ServerTLS(server.cert, server.key, client_ca=ca.cert_path)

Needs ``cryptography``. EC P-256 keys, valid from an hour ago for a day. Never
for production.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["IssuedCert", "TestCA"]


@dataclass(frozen=True)
class IssuedCert:
    """A certificate and its key, as PEM files (``cert``, ``key``)."""

    cert: Path
    key: Path
    certificate: x509.Certificate

    @property
    def pair(self) -> tuple[str, str]:
        """(certificate, key) paths, as ``cert=`` takes them."""
        return str(self.cert), str(self.key)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


class TestCA:
    """A CA whose files live in ``folder`` (``ca.pem``; issued pairs beside it)."""

    __test__ = False  # not a pytest test class

    def __init__(self, folder: Path, name: str = "A2A Test CA") -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.name = name
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._subject = _name(name)
        now = datetime.datetime.now(datetime.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(self._subject)
            .issuer_name(self._subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        slug = "".join(c if c.isalnum() else "-" for c in name.lower())
        self.cert_path = self.folder / f"{slug}.pem"
        self.cert_path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def _issue(
        self,
        file_stem: str,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        names: list[x509.GeneralName],
    ) -> IssuedCert:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        certificate = builder.sign(self._key, hashes.SHA256())
        cert_path = self.folder / f"{file_stem}.pem"
        key_path = self.folder / f"{file_stem}.key"
        cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(_key_pem(key))
        return IssuedCert(cert_path, key_path, certificate)

    def server_cert(self, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")) -> IssuedCert:
        """A server certificate for ``hosts`` (DNS names and IP addresses)."""
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        return self._issue("server", _name(hosts[0]), ExtendedKeyUsageOID.SERVER_AUTH, names)

    def client_cert(
        self,
        common_name: str,
        *,
        organization: str | None = None,
        uri: str | None = None,
        email: str | None = None,
    ) -> IssuedCert:
        """A client certificate whose subject CN is ``common_name`` (plus optional SANs)."""
        names: list[x509.GeneralName] = []
        if uri:
            names.append(x509.UniformResourceIdentifier(uri))
        if email:
            names.append(x509.RFC822Name(email))
        slug = "".join(c if c.isalnum() else "-" for c in common_name.lower())
        return self._issue(
            f"client-{slug}",
            _name(common_name, organization),
            ExtendedKeyUsageOID.CLIENT_AUTH,
            names,
        )
