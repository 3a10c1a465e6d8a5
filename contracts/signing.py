"""Canonical JSON and Ed25519 signatures of policy bundles, so the runtime can detect tampering.

The Policy Service signs every bundle it issues (seed 001 §5, §4.1); the runtime verifies it with the
public keys the backend publishes at ``GET /policy/keys`` before it trusts a single capability.

* **Canonical JSON** of a bundle: its wire form (``by_alias``, absent optional fields left out, the
  ``signature`` field excluded) as produced by the model, serialised with sorted keys, no whitespace,
  UTF-8 (not ASCII-escaped). It is computed from the *model*, never from received text, so a bundle
  that went through any JSON round trip (key order, ``+00:00`` vs ``Z``, spacing) canonicalises to the
  same bytes.
* **Signature string**: ``{keyId}.{signature}``, both base64url without padding. ``keyId`` names the
  public key (:func:`key_id`), so keys can be rotated while old bundles still verify; ``PolicyBundle``
  has no key-id field of its own.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from contracts.policy import PolicyBundle

__all__ = [
    "b64url_decode",
    "b64url_encode",
    "canonical_json",
    "key_id",
    "public_key_from_text",
    "public_key_to_text",
    "sign_bundle",
    "verify_bundle",
]

_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_ED25519_SIGNATURE_BYTES = 64


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict inverse of :func:`b64url_encode`; ``ValueError`` for anything else (padding included)."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as exc:
        raise ValueError("not unpadded base64url") from exc


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short, stable name for a public key: base64url of the first 12 bytes of its SHA-256."""
    return b64url_encode(hashlib.sha256(_raw(public_key)).digest()[:12])


def public_key_to_text(public_key: Ed25519PublicKey) -> str:
    """The raw 32-byte key as base64url: how keys are published and written to state files."""
    return b64url_encode(_raw(public_key))


def public_key_from_text(text: str) -> Ed25519PublicKey:
    """Inverse of :func:`public_key_to_text`; ``ValueError`` if it is not an Ed25519 public key."""
    raw = b64url_decode(text)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(raw)


def canonical_json(bundle: PolicyBundle) -> bytes:
    """The bytes that are signed: the bundle's wire form without ``signature``, canonicalised."""
    wire = bundle.model_dump(mode="json", by_alias=True, exclude={"signature"}, exclude_none=True)
    return json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign_bundle(
    bundle: PolicyBundle, private_key: Ed25519PrivateKey, *, kid: str | None = None
) -> PolicyBundle:
    """A copy of ``bundle`` carrying a fresh signature by ``private_key`` (any old one is replaced).

    ``kid`` is the key's :func:`key_id`, for signers that sign often: deriving it from the private key
    costs about as much as the signature itself.
    """
    signature = private_key.sign(canonical_json(bundle))
    token = f"{kid or key_id(private_key.public_key())}.{b64url_encode(signature)}"
    return bundle.model_copy(update={"signature": token})


def verify_bundle(
    bundle: PolicyBundle,
    public_keys: Mapping[str, Ed25519PublicKey] | Iterable[Ed25519PublicKey],
) -> bool:
    """True only if ``bundle`` carries a valid signature by one of ``public_keys``.

    ``public_keys`` is either ``{keyId: key}`` or plain keys (their ids are computed). An unsigned
    bundle, an unknown key id, a malformed signature string and a signature that does not match all
    answer False; this function never raises on what it was handed.
    """
    if bundle.signature is None or bundle.signature.count(".") != 1:
        return False
    kid, encoded = bundle.signature.split(".")
    keys = public_keys if isinstance(public_keys, Mapping) else {key_id(k): k for k in public_keys}
    public_key = keys.get(kid)
    if public_key is None:
        return False
    try:
        signature = b64url_decode(encoded)
    except ValueError:
        return False
    if len(signature) != _ED25519_SIGNATURE_BYTES:
        return False
    try:
        public_key.verify(signature, canonical_json(bundle))
    except InvalidSignature:
        return False
    return True
