"""Card signatures on the command line: the keys ``a2a card --verify`` trusts, the key
``a2a serve --sign-card-key`` signs with.

Both need the ``[jwt]`` extra (PyJWT with cryptography); without it the options
are a usage error naming the extra. A trusted key is a JWK or JWKS file (its
``kid``s name the keys) or ``KID=FILE`` with a PEM public key. A signing key is
a PEM private key; its algorithm follows from the key (P-256: ES256, P-384:
ES384, Ed25519: EdDSA, RSA: PS256) and its ``kid`` defaults to the key's
RFC 7638 thumbprint, so a verifier holding the public JWK finds it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .usage import UsageError

if TYPE_CHECKING:
    from ..signing import CardSigner, CardVerifier

__all__ = ["card_signer", "card_verifier", "public_jwk", "trusted_keys"]

_EXTRA = "pip install 'a2a-adapters-core[jwt]'"


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None


def trusted_keys(specs: Sequence[str]) -> dict[str, Any]:
    """``--trusted-key`` values as kid -> key (JWK dicts, or public key objects from PEM)."""
    keys: dict[str, Any] = {}
    for spec in specs:
        kid, sep, path = spec.partition("=")
        if not sep:
            kid, path = "", spec
        data = _read(path, "the trusted key")
        if data.lstrip().startswith(b"{"):
            keys.update(_jwks(data, path, kid))
            continue
        if not kid:
            raise UsageError(
                f"--trusted-key {spec!r}: a PEM key needs its key id, as KID=FILE "
                "(a JWK or JWKS file names its own)"
            )
        try:
            from cryptography.hazmat.primitives.serialization import load_pem_public_key
        except ImportError:
            raise UsageError(f"--trusted-key needs the [jwt] extra: {_EXTRA}") from None
        try:
            keys[kid] = load_pem_public_key(data)
        except ValueError:
            raise UsageError(f"{path!r} is not a PEM public key") from None
    return keys


def _jwks(data: bytes, path: str, kid: str) -> dict[str, Any]:
    try:
        document = json.loads(data)
    except ValueError:
        raise UsageError(f"{path!r} is not JSON (a JWK or a JWKS)") from None
    if not isinstance(document, dict):
        raise UsageError(f"{path!r} is not a JWK or a JWKS")
    found = cast("dict[str, Any]", document)
    raw: object = found.get("keys", [found])
    members = cast("list[Any]", raw) if isinstance(raw, list) else []
    keys: dict[str, Any] = {}
    for member in members:
        if not isinstance(member, dict):
            continue
        jwk = cast("dict[str, Any]", member)
        name = kid or jwk.get("kid")
        if isinstance(name, str) and name:
            keys[name] = jwk
    if not keys:
        raise UsageError(f"{path!r} holds no key with a kid (use KID=FILE)")
    return keys


def card_verifier(args: argparse.Namespace) -> CardVerifier:
    """The verifier of ``--trusted-key`` / ``--jwks``; a usage error when neither is given."""
    specs: Sequence[str] = args.trusted_key or ()
    jwks: str | None = args.jwks
    if not specs and not jwks:
        raise UsageError("--verify needs the keys to trust: --trusted-key FILE or --jwks URL")
    try:
        from ..signing import CardVerifier
    except ImportError:
        raise UsageError(f"--verify needs the [jwt] extra: {_EXTRA}") from None
    try:
        return CardVerifier(trusted_keys(specs) or None, jwks_url=jwks)
    except ValueError as exc:  # a JWK PyJWT cannot read
        raise UsageError(f"a trusted key cannot be used: {exc}") from None


def public_jwk(private_key: Any) -> dict[str, Any]:
    """The public JWK of a private key (what verifiers are given), without ``kid``."""
    from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

    public = private_key.public_key()
    for algorithm in (ECAlgorithm, RSAAlgorithm, OKPAlgorithm):
        try:
            return dict(algorithm.to_jwk(public, as_dict=True))
        except Exception:
            continue
    raise UsageError(f"cannot sign cards with a {type(private_key).__name__}")


def _thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: SHA-256 over the required members, sorted, without whitespace."""
    required = {
        "EC": ("crv", "kty", "x", "y"),
        "RSA": ("e", "kty", "n"),
        "OKP": ("crv", "kty", "x"),
    }
    members = {name: jwk[name] for name in required[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _algorithm(private_key: Any) -> str:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        by_curve = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        found = by_curve.get(private_key.curve.name)
        if found is None:
            raise UsageError(f"cannot sign cards with the curve {private_key.curve.name}")
        return found
    if isinstance(private_key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    if isinstance(private_key, rsa.RSAPrivateKey):
        return "PS256"
    raise UsageError(
        f"cannot sign cards with a {type(private_key).__name__} (EC, Ed25519 or RSA keys)"
    )


def card_signer(path: str, kid: str | None) -> CardSigner:
    """``--sign-card-key FILE [--sign-card-kid KID]`` as a ``CardSigner``."""
    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        from ..signing import CardSigner
    except ImportError:
        raise UsageError(f"--sign-card-key needs the [jwt] extra: {_EXTRA}") from None
    data = _read(path, "the card signing key")
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path!r} is not an unencrypted PEM private key ({exc})") from None
    algorithm = _algorithm(key)
    return CardSigner(key, kid or _thumbprint(public_jwk(key)), algorithm=algorithm)
