"""What a release document must be before any signature is checked (seed 001 §11), and the bytes a
signature covers — each refusal asserted by what it tells a release engineer."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, ValidationError

from contracts.release import KeyDelegation, RootKeySet, SigningKey, canonical_json
from contracts.signing import key_id, public_key_to_text
from tests.contracts.test_release import NOW, RELEASE_KEY, ROOT_SET, ROOTS, _document, _rejected, _signing_key


def _public(key: Ed25519PrivateKey) -> str:
    return public_key_to_text(key.public_key())


def _refusal(model: type[BaseModel], **fields: object) -> str:
    """Every problem pydantic found, one message a line."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate_json(json.dumps(fields))
    return "\n".join(str(error["msg"]) for error in caught.value.errors())


def test_a_root_set_needs_at_least_one_key() -> None:
    assert (
        _refusal(RootKeySet, keys=[], threshold=1)
        == "List should have at least 1 item after validation, not 0"
    )


def test_a_root_key_listed_twice_is_named_as_such() -> None:
    text = _public(ROOTS[0])
    assert _refusal(RootKeySet, keys=[text, text], threshold=1) == (
        "Value error, keys lists the same root key twice"
    )


def test_a_signing_key_that_is_no_public_key_names_the_field() -> None:
    problem = _refusal(SigningKey, keyId="k" * 16, publicKey="not a key", expiresAt=NOW.isoformat())
    assert problem == "Value error, publicKey must hold base64url Ed25519 public keys"


def test_a_delegation_version_starts_at_one() -> None:
    key = _signing_key(RELEASE_KEY).model_dump(mode="json", by_alias=True)
    fields = {"expiresAt": NOW.isoformat(), "keys": [key], "revokedKeyIds": []}
    assert _refusal(KeyDelegation, version=0, **fields) == "Input should be greater than or equal to 1"
    assert KeyDelegation.model_validate_json(json.dumps({"version": 1, **fields})).version == 1


def test_a_release_key_listed_twice_is_named_as_such() -> None:
    key = _signing_key(RELEASE_KEY).model_dump(mode="json", by_alias=True)
    problem = _refusal(KeyDelegation, version=1, expiresAt=NOW.isoformat(), keys=[key, key], revokedKeyIds=[])
    assert problem == "Value error, keys lists the same release key twice"


def test_the_signed_bytes_are_compact_sorted_camel_case_json() -> None:
    # What every signature covers: published manifests verify only if these bytes never change.
    public = RELEASE_KEY.public_key()
    key = SigningKey(key_id=key_id(public), public_key=public_key_to_text(public), expires_at=NOW)
    delegation = KeyDelegation(version=1, expires_at=NOW, keys=[key], revoked_key_ids=[])
    when = json.dumps(key.model_dump(mode="json")["expires_at"])
    assert (
        canonical_json(delegation)
        == (
            f'{{"expiresAt":{when},"keys":[{{"expiresAt":{when},"keyId":"{key.key_id}",'
            f'"publicKey":"{key.public_key}"}}],"revokedKeyIds":[],"version":1}}'
        ).encode()
    )


def test_a_manifest_that_is_not_json_says_so() -> None:
    assert str(_rejected(b"{not json")) == "the release manifest is not valid JSON"


def test_invalid_pinned_root_keys_distrust_every_delegation() -> None:
    # A root set is checked when made; one changed afterwards must not be half-trusted.
    broken = ROOT_SET.model_copy(update={"keys": ["not a key"]})
    raw = _document().model_dump_json(by_alias=True).encode()
    error = _rejected(raw, root=broken)
    assert error.code == "delegation_untrusted"
    assert str(error) == "the pinned root keys are invalid"
