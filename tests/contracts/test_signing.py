"""Policy bundle signatures (contracts.signing): canonical JSON that survives any JSON round trip, and
a verifier that says no to every kind of tampering — and never raises."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.policy import PolicyBundle
from contracts.signing import (
    b64url_decode,
    b64url_encode,
    canonical_json,
    key_id,
    public_key_from_text,
    public_key_to_text,
    sign_bundle,
    verify_bundle,
)
from contracts.validation import validate_json_value
from tests.contracts.test_documents import POLICY

KEY = Ed25519PrivateKey.generate()


def _bundle(**change: Any) -> PolicyBundle:
    return validate_json_value(PolicyBundle, {**copy.deepcopy(POLICY), **change})


def _signed() -> PolicyBundle:
    return sign_bundle(_bundle(tenantId="acme", userId="alice"), KEY)


def test_a_signed_bundle_verifies_after_a_trip_over_the_wire() -> None:
    signed = _signed()
    wire = signed.model_dump_json(by_alias=True, exclude_none=True)
    received = PolicyBundle.model_validate_json(wire)
    assert verify_bundle(received, [KEY.public_key()])
    assert verify_bundle(received, {key_id(KEY.public_key()): KEY.public_key()})


@pytest.mark.parametrize(
    "respell",
    [
        lambda text: json.dumps(json.loads(text), indent=4),
        lambda text: json.dumps(dict(reversed(list(json.loads(text).items())))),
        lambda text: text.replace('"2026-02-21T23:00:00Z"', '"2026-02-21T23:00:00+00:00"'),
        lambda text: text.replace('"2026-02-21T23:00:00Z"', '"2026-02-21T23:00:00.000000Z"'),
        lambda text: text.replace('"/Users', '"\\/Users'),
    ],
    ids=["indented", "reordered", "offset-spelling", "fraction-spelling", "escaped-slash"],
)
def test_the_canonical_form_ignores_how_the_json_was_spelled(respell: Any) -> None:
    signed = _signed()
    text = signed.model_dump_json(by_alias=True, exclude_none=True)
    received = PolicyBundle.model_validate_json(respell(text))
    assert canonical_json(received) == canonical_json(signed)
    assert verify_bundle(received, [KEY.public_key()])


def test_the_canonical_form_is_sorted_compact_utf8_and_leaves_the_signature_out() -> None:
    bundle = _bundle(version="münchen-1")
    canonical = canonical_json(sign_bundle(bundle, KEY))
    assert canonical == canonical_json(bundle)
    assert b"signature" not in canonical
    assert "münchen".encode() in canonical
    decoded = json.loads(canonical)
    assert list(decoded) == sorted(decoded)
    assert b" " not in canonical.replace(b"Local command execution", b"")


@pytest.mark.parametrize(
    "tamper",
    [
        lambda p: p["capabilities"][0]["allowedPaths"].append("/"),
        lambda p: p["capabilities"][1].update(requiresApproval=False),
        lambda p: p["capabilities"].append({"name": "Network.Http"}),
        lambda p: p["llmPolicy"].update(maxSessionTokens=10**9),
        lambda p: p.update(expiresAt="2099-01-01T00:00:00Z"),
        lambda p: p.update(sessionId="sess_other"),
        lambda p: p.update(tenantId="globex"),
        lambda p: p.update(version="2026-02-21.2"),
    ],
)
def test_any_change_to_a_signed_bundle_fails_verification(tamper: Any) -> None:
    wire = _signed().to_wire()
    tamper(wire)
    assert not verify_bundle(validate_json_value(PolicyBundle, wire), [KEY.public_key()])


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "no-dot",
        "a.b.c",
        "unknownkid.AAAA",
        "{kid}.",
        "{kid}.not*base64",
        "{kid}.AAAA",
        "{kid}." + "A" * 86,
        "{kid}=.{sig}",
    ],
)
def test_a_missing_or_malformed_signature_fails_without_raising(signature: str | None) -> None:
    signed = _signed()
    assert signed.signature is not None
    kid, sig = signed.signature.split(".")
    forged = None if signature is None else signature.format(kid=kid, sig=sig)
    assert not verify_bundle(signed.model_copy(update={"signature": forged}), [KEY.public_key()])


def test_a_signature_by_another_key_fails_even_under_the_right_key_id() -> None:
    other = Ed25519PrivateKey.generate()
    by_other = sign_bundle(_bundle(), other)
    assert not verify_bundle(by_other, [KEY.public_key()])
    assert by_other.signature is not None
    relabelled = f"{key_id(KEY.public_key())}.{by_other.signature.split('.')[1]}"
    assert not verify_bundle(by_other.model_copy(update={"signature": relabelled}), [KEY.public_key()])


def test_rotated_keys_verify_the_bundles_each_one_signed() -> None:
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    published = [new.public_key(), old.public_key()]
    assert verify_bundle(sign_bundle(_bundle(), old), published)
    assert verify_bundle(sign_bundle(_bundle(), new), published)
    assert not verify_bundle(sign_bundle(_bundle(), old), [new.public_key()])


def test_keys_travel_as_text_and_come_back_equal() -> None:
    text = public_key_to_text(KEY.public_key())
    assert key_id(public_key_from_text(text)) == key_id(KEY.public_key())
    for bad in ("", "AAAA", text + "A", "not base64!"):
        with pytest.raises(ValueError, match=r"Ed25519|base64url"):
            public_key_from_text(bad)


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xfe", bytes(range(256))])
def test_base64url_round_trips_without_padding(data: bytes) -> None:
    encoded = b64url_encode(data)
    assert "=" not in encoded
    assert b64url_decode(encoded) == data


def test_base64url_refuses_padding_and_the_standard_alphabet() -> None:
    for bad in ("AA==", "a+b/", "A"):
        with pytest.raises(ValueError, match="base64url"):
            b64url_decode(bad)
