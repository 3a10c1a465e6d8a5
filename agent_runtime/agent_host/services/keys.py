"""The keys that sign policy bundles, and the check a bundle must pass before it is trusted.

The Policy Service signs every bundle (seed 001 §5; :mod:`contracts.signing`); the runtime trusts the
keys the desktop hands it in ``COWORK_POLICY_KEYS`` or, without that, the ones ``GET /policy/keys``
publishes (``BackendClient.policy_keys``). :func:`verify_policy_bundle` is what the session calls on
every bundle it receives (create and resume, seed 000 §3.2 step 5, §9.5) before a single capability
is believed.
"""

from __future__ import annotations

from collections.abc import Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import TypeAdapter, ValidationError

from contracts.errors import ErrorCode
from contracts.policy import PolicyBundle
from contracts.rest.policies import PolicyKey
from contracts.signing import public_key_from_text, verify_bundle

from .errors import BackendConfigError, BackendError

__all__ = ["POLICY_KEYS_VARIABLE", "keys_from_environment", "keys_from_list", "verify_policy_bundle"]

POLICY_KEYS_VARIABLE = "COWORK_POLICY_KEYS"

_KEY_LIST: TypeAdapter[list[PolicyKey]] = TypeAdapter(list[PolicyKey])


def keys_from_list(keys: list[PolicyKey]) -> dict[str, Ed25519PublicKey]:
    """``{keyId: key}``; ``ValueError`` naming the entry whose ``publicKey`` is not an Ed25519 key."""
    trusted: dict[str, Ed25519PublicKey] = {}
    for index, key in enumerate(keys):
        try:
            trusted[key.key_id] = public_key_from_text(key.public_key)
        except ValueError:
            problem = f"[{index}].publicKey is not an Ed25519 public key (unpadded base64url)"
            raise ValueError(problem) from None
    return trusted


def keys_from_environment(environ: Mapping[str, str]) -> dict[str, Ed25519PublicKey] | None:
    """The trusted keys from ``COWORK_POLICY_KEYS`` (JSON ``[{"keyId", "publicKey"}]``); ``None`` when
    the variable is absent or blank, so the caller fetches them from the backend instead.

    A variable that is set but malformed is an error, never "no keys": silently falling back to keys
    fetched over the network would defeat the point of pinning them.
    """
    raw = environ.get(POLICY_KEYS_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        entries = _KEY_LIST.validate_json(raw)
    except ValidationError:
        raise BackendConfigError(
            POLICY_KEYS_VARIABLE, 'must be a JSON array of {"keyId": …, "publicKey": …} objects'
        ) from None
    if not entries:
        raise BackendConfigError(POLICY_KEYS_VARIABLE, "must name at least one key")
    try:
        return keys_from_list(entries)
    except ValueError as exc:
        raise BackendConfigError(POLICY_KEYS_VARIABLE, f"entry {exc}") from None


def verify_policy_bundle(bundle: PolicyBundle, keys: Mapping[str, Ed25519PublicKey]) -> None:
    """Return only if ``bundle`` carries a valid signature by one of ``keys``.

    Otherwise :class:`BackendError` ``POLICY_BUNDLE_INVALID`` with ``details.reason``: ``unsigned``,
    ``unknown_key`` (signed by a key this runtime does not trust) or ``bad_signature`` (tampered with,
    or not a signature at all).
    """
    if bundle.signature is None:
        raise _invalid("unsigned", "The policy bundle is not signed")
    key_id = bundle.signature.split(".", 1)[0]
    if key_id not in keys:
        raise _invalid("unknown_key", "The policy bundle is signed by a key this runtime does not trust")
    if not verify_bundle(bundle, keys):
        raise _invalid("bad_signature", "The policy bundle's signature does not match its content")


def _invalid(reason: str, message: str) -> BackendError:
    return BackendError(ErrorCode.POLICY_BUNDLE_INVALID, message, details={"reason": reason})
