"""Signed agent cards: JWS over the RFC 8785 canonical card (needs the ``[jwt]`` extra).

As A2A §8.4 describes the ``signatures`` field: the card's 1.0 JSON with
``signatures`` removed and empty values left out is canonicalized (JCS, by the
``rfc8785`` package), signed as a JWS with a protected header holding ``alg``,
``typ: JOSE`` and ``kid``, and published as ``{protected, signature}`` (the
detached payload is the card itself). ``CardSigner`` signs (the server's
``card_signer`` option); ``CardVerifier`` checks a card against trusted keys
or a pinned JWKS URL (a ``jku`` in the card is never followed) and raises
``CardSignatureError`` for an unsigned or tampered card.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import httpx

from .types import AgentCard, AgentCardSignature

try:
    import jwt
    import rfc8785
    from jwt import PyJWK, PyJWKSet
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "a2a_core.signing needs the [jwt] extra: pip install 'a2a-adapters-core[jwt]'"
    ) from exc

__all__ = [
    "CardSignatureError",
    "CardSigner",
    "CardVerifier",
    "canonical_card",
    "canonical_json",
]

_ASYMMETRIC = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)


class CardSignatureError(Exception):
    """The card carries no signature, or none that verifies with a trusted key."""


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        out = {
            k: c for k, v in cast("dict[str, Any]", value).items() if (c := _clean(v)) is not None
        }
        return out or None
    if isinstance(value, list):
        items = [c for v in cast("list[Any]", value) if (c := _clean(v)) is not None]
        return items or None
    if isinstance(value, str) and not value:
        return None
    return value


def canonical_card(card: AgentCard) -> bytes:
    """The signed payload: the 1.0 card JSON without ``signatures`` and empty values, in JCS."""
    document = card.model_dump(mode="json", by_alias=True, exclude={"signatures"})
    return rfc8785.dumps(_clean(document) or {})


def canonical_json(document: Any) -> bytes:
    """Any JSON document in its RFC 8785 (JCS) form: the payload of a detached signature."""
    return rfc8785.dumps(document)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class CardSigner:
    """Signs cards with ``key`` (a private key object or PEM) as ``kid``, with ``algorithm``."""

    def __init__(
        self, key: Any, kid: str, *, algorithm: str = "ES256", jku: str | None = None
    ) -> None:
        if algorithm not in _ASYMMETRIC:
            raise ValueError(f"card signatures use an asymmetric algorithm, not {algorithm!r}")
        if not kid:
            raise ValueError("kid must name the key (verifiers look it up by id)")
        self._key = key
        self.kid = kid
        self.algorithm = algorithm
        self.jku = jku

    def signature(self, card: AgentCard) -> AgentCardSignature:
        """The JWS signature of ``card`` (its current ``signatures`` are not covered)."""
        header: dict[str, Any] = {"kid": self.kid, "typ": "JOSE"}
        if self.jku:
            header["jku"] = self.jku
        token = jwt.api_jws.encode(
            canonical_card(card), self._key, algorithm=self.algorithm, headers=header
        )
        protected, _, signature = token.split(".")
        return AgentCardSignature(protected=protected, signature=signature)

    def detached(self, payload: bytes) -> str:
        """A detached JWS over ``payload`` in compact form (``header..signature``), as the
        AI Catalog's ``signature`` member carries it (the same key, kid and algorithm)."""
        header: dict[str, Any] = {"kid": self.kid}
        if self.jku:
            header["jku"] = self.jku
        token = jwt.api_jws.encode(payload, self._key, algorithm=self.algorithm, headers=header)
        protected, _, signature = token.split(".")
        return f"{protected}..{signature}"

    def __call__(self, card: AgentCard) -> AgentCard:
        """The card with its signature added (the server calls this on the card it serves)."""
        return card.model_copy(update={"signatures": [*card.signatures, self.signature(card)]})

    def __repr__(self) -> str:
        return f"CardSigner(kid={self.kid!r}, algorithm={self.algorithm!r})"


class CardVerifier:
    """Verifies card signatures against ``keys`` (kid -> public key or JWK dict) or a pinned
    ``jwks_url``; ``algorithms`` is the allow-list (asymmetric only)."""

    def __init__(
        self,
        keys: Mapping[str, Any] | None = None,
        *,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = ("ES256", "RS256", "PS256", "EdDSA"),
        timeout: float = 10.0,
    ) -> None:
        if not keys and not jwks_url:
            raise ValueError("give the trusted keys or the JWKS URL to fetch them from")
        bad = [a for a in algorithms if a not in _ASYMMETRIC]
        if bad or not algorithms:
            raise ValueError(f"algorithms must be asymmetric; refused: {bad or '(none)'}")
        self._keys: dict[str, Any] = {}
        for kid, key in (keys or {}).items():
            if isinstance(key, Mapping):
                key = PyJWK.from_dict(dict(cast("Mapping[str, Any]", key))).key
            self._keys[kid] = key
        self.jwks_url = jwks_url
        self.algorithms = list(algorithms)
        self._timeout = timeout
        self._fetched = False

    async def load(self) -> None:
        """Fetch the pinned JWKS (once); the verifier then works without I/O."""
        if self.jwks_url is None or self._fetched:
            return
        async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as http:
            response = await http.get(self.jwks_url)
        response.raise_for_status()
        for key in PyJWKSet.from_dict(response.json()).keys:
            if key.key_id:
                self._keys.setdefault(key.key_id, key.key)
        self._fetched = True

    def verify(self, card: AgentCard) -> str:
        """The ``kid`` of the first signature that verifies; ``CardSignatureError`` if none."""
        if not card.signatures:
            raise CardSignatureError(f"the agent card of {card.name!r} is not signed")
        payload = _b64(canonical_card(card))
        reasons: list[str] = []
        for signed in card.signatures:
            try:
                header = json.loads(base64.urlsafe_b64decode(signed.protected + "=" * 4))
            except ValueError:
                reasons.append("a protected header that is not JSON")
                continue
            if not isinstance(header, dict):
                reasons.append("a protected header that is not an object")
                continue
            kid = cast("dict[str, Any]", header).get("kid")
            key = self._keys.get(kid) if isinstance(kid, str) else None
            if key is None:
                reasons.append(f"kid {str(kid)[:40]!r} is not a trusted key")
                continue
            try:
                jwt.api_jws.decode_complete(
                    f"{signed.protected}.{payload}.{signed.signature}",
                    key,
                    algorithms=self.algorithms,
                )
            except jwt.PyJWTError as exc:
                reasons.append(f"kid {kid!r}: {exc}")
                continue
            return cast(str, kid)
        raise CardSignatureError(
            f"no signature on the agent card of {card.name!r} verifies ({'; '.join(reasons)})"
        )

    def verify_detached(self, payload: bytes, jws: str, *, what: str = "the document") -> str:
        """The ``kid`` that signed ``payload`` as the detached compact JWS ``jws``
        (``header..signature``); ``CardSignatureError`` when it does not verify."""
        protected, sep, rest = jws.partition(".")
        embedded, sep2, signature = rest.partition(".")
        if not sep or not sep2 or embedded:
            raise CardSignatureError(f"the signature of {what} is not a detached compact JWS")
        try:
            header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
        except ValueError:
            raise CardSignatureError(
                f"the signature of {what} has a header that is not JSON"
            ) from None
        kid = cast("dict[str, Any]", header).get("kid") if isinstance(header, dict) else None
        key = self._keys.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise CardSignatureError(
                f"the signature of {what}: kid {str(kid)[:40]!r} is not a trusted key"
            )
        try:
            jwt.api_jws.decode_complete(
                f"{protected}.{_b64(payload)}.{signature}", key, algorithms=self.algorithms
            )
        except jwt.PyJWTError as exc:
            raise CardSignatureError(f"the signature of {what} does not verify: {exc}") from None
        return cast(str, kid)

    async def averify(self, card: AgentCard) -> str:
        """``verify``, fetching the pinned JWKS first when one is configured."""
        await self.load()
        return self.verify(card)
