"""Release verification at its edges (seed 001 §11): expiry instants, thresholds of distinct root
keys, revoked and unknown keys, malformed documents — each refusal asserted by its code.

An expiry is the first instant something is no longer trusted: at ``expiresAt`` it is expired, a
moment before it is not. A threshold of N is met by N distinct pinned roots and not by N - 1.
"""

from __future__ import annotations

import platform as _platform
import sys
from datetime import datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import ValidationError

from contracts.release import (
    BUNDLE_TOP_DIR,
    FILE_LIST_NAME,
    MANIFEST_MAX_BYTES,
    BundleFileList,
    BundleRef,
    FileEntry,
    ReleaseDocument,
    ReleaseVerificationError,
    RootKeySet,
    Signature,
    SignedDelegation,
    SignedManifest,
    current_platform,
    sign_delegation,
    sign_manifest,
    verify_release_document,
)
from contracts.signing import key_id, public_key_to_text
from tests.contracts.test_release import (
    NOW,
    OTHER_KEY,
    RELEASE_KEY,
    ROOT_SET,
    ROOTS,
    _delegation,
    _document,
    _manifest,
    _rejected,
    _release,
    _signing_key,
)

TICK = timedelta(microseconds=1)


def raw(document: ReleaseDocument) -> bytes:
    return document.model_dump_json(by_alias=True).encode()


def verifies(document: ReleaseDocument, now: datetime = NOW, root: RootKeySet = ROOT_SET) -> bool:
    return verify_release_document(raw(document), root, now=now).manifest_version == 7


# ---------------------------------------------------------------- expiry instants


def test_a_delegation_is_trusted_until_the_instant_it_expires() -> None:
    document = _document(delegation=_delegation(expires=timedelta(days=1)))
    assert verifies(document, NOW + timedelta(days=1) - TICK)
    error = _rejected(raw(document), now=NOW + timedelta(days=1))
    assert error.code == "delegation_expired"
    assert "release key delegation expired at" in str(error)


def test_a_release_key_is_trusted_until_the_instant_it_expires() -> None:
    key = _signing_key(RELEASE_KEY, expires=timedelta(days=2))
    document = _document(delegation=_delegation([key]))
    assert verifies(document, NOW + timedelta(days=2) - TICK)
    error = _rejected(raw(document), now=NOW + timedelta(days=2))
    assert error.code == "delegation_expired"
    assert f"release key {key.key_id}, which expired" in str(error)


def test_a_manifest_is_trusted_until_the_instant_it_expires() -> None:
    document = _document(manifest=_manifest(expires=timedelta(days=3)))
    assert verifies(document, NOW + timedelta(days=3) - TICK)
    error = _rejected(raw(document), now=NOW + timedelta(days=3))
    assert error.code == "manifest_expired"
    assert "(version 7) expired at" in str(error)


def test_a_naive_clock_reading_is_utc() -> None:
    document = _document(manifest=_manifest(expires=timedelta(hours=1)))
    naive = (NOW + timedelta(hours=1)).replace(tzinfo=None)
    assert verifies(document, naive - TICK)
    assert _rejected(raw(document), now=naive).code == "manifest_expired"


# ---------------------------------------------------------------- thresholds of distinct roots


@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_exactly_the_threshold_of_distinct_roots_is_enough_and_one_fewer_is_not(threshold: int) -> None:
    root = RootKeySet(keys=ROOT_SET.keys, threshold=threshold)
    assert verifies(_document(roots=ROOTS[:threshold]), root=root)
    error = _rejected(raw(_document(roots=ROOTS[: threshold - 1])), root=root)
    assert error.code == "delegation_untrusted"
    assert f"certified by {threshold - 1} of the pinned root keys; {threshold} are required" in str(error)


def test_signatures_by_unpinned_keys_do_not_count_towards_the_threshold() -> None:
    strangers = [Ed25519PrivateKey.generate() for _ in range(3)]
    error = _rejected(raw(_document(roots=[ROOTS[0], *strangers])))
    assert error.code == "delegation_untrusted"
    assert "certified by 1 of" in str(error)


def test_a_root_key_set_that_no_longer_holds_keys_is_untrusted_not_a_crash() -> None:
    root = RootKeySet(keys=list(ROOT_SET.keys), threshold=2)
    root.keys.append("not a key")
    error = _rejected(raw(_document()), root=root)
    assert error.code == "delegation_untrusted"
    assert "pinned root keys are invalid" in str(error)


# ---------------------------------------------------------------- which manifest signature counts


def _signed_by(
    *signers: Ed25519PrivateKey, revoked: tuple[str, ...] = (), expired: tuple[Ed25519PrivateKey, ...] = ()
) -> bytes:
    keys = [_signing_key(RELEASE_KEY), _signing_key(OTHER_KEY)]
    keys += [_signing_key(key, expires=-timedelta(days=1)) for key in expired]
    document = _document(delegation=_delegation(keys, revoked=revoked))
    manifest = document.manifest.signed
    signatures = [sign_manifest(manifest, key).signatures[0] for key in signers]
    return raw(
        document.model_copy(
            update={"manifest": document.manifest.model_copy(update={"signatures": signatures})}
        )
    )


def test_a_revoked_key_is_refused_even_when_its_signature_is_good() -> None:
    error = _rejected(_signed_by(RELEASE_KEY, revoked=(key_id(RELEASE_KEY.public_key()),)))
    assert error.code == "revoked_key"
    assert key_id(RELEASE_KEY.public_key()) in str(error)


def test_a_good_signature_by_another_delegated_key_outweighs_a_revoked_one() -> None:
    revoked = (key_id(RELEASE_KEY.public_key()),)
    assert verify_release_document(_signed_by(RELEASE_KEY, OTHER_KEY, revoked=revoked), ROOT_SET, now=NOW)


def test_the_most_telling_reason_is_reported() -> None:
    stranger = Ed25519PrivateKey.generate()
    stale = Ed25519PrivateKey.generate()
    revoked = (key_id(OTHER_KEY.public_key()),)
    assert _rejected(_signed_by(stranger)).code == "unknown_key"
    assert _rejected(_signed_by(stranger, stale, expired=(stale,))).code == "delegation_expired"
    assert (
        _rejected(_signed_by(stranger, stale, OTHER_KEY, expired=(stale,), revoked=revoked)).code
        == "revoked_key"
    )
    # A wrong signature by a good key is tampering: named before anything else.
    document = _document()
    forged = Signature(
        key_id=key_id(RELEASE_KEY.public_key()),
        signature=sign_manifest(document.manifest.signed, stranger).signatures[0].signature,
    )
    tampered = document.model_copy(
        update={
            "manifest": document.manifest.model_copy(
                update={
                    "signatures": [sign_manifest(document.manifest.signed, stranger).signatures[0], forged]
                }
            )
        }
    )
    error = _rejected(raw(tampered))
    assert error.code == "bad_signature"
    assert "does not match" in str(error)


def test_no_signature_at_all_is_named_as_such() -> None:
    error = _rejected(_signed_by())
    assert error.code == "bad_signature"
    assert "is not signed" in str(error)


def test_a_delegation_signed_for_another_payload_is_untrusted() -> None:
    document = _document()
    other = sign_delegation(_delegation(expires=timedelta(days=9)), ROOTS[:2])
    swapped = document.model_copy(
        update={"delegation": document.delegation.model_copy(update={"signatures": other.signatures})}
    )
    assert _rejected(raw(swapped)).code == "delegation_untrusted"


# ---------------------------------------------------------------- malformed documents


def test_a_document_of_exactly_the_size_limit_is_parsed_and_one_byte_more_is_not() -> None:
    body = raw(_document())
    at_limit = body + b" " * (MANIFEST_MAX_BYTES - len(body))
    assert len(at_limit) == MANIFEST_MAX_BYTES
    assert verify_release_document(at_limit, ROOT_SET, now=NOW).manifest_version == 7
    error = _rejected(at_limit + b" ")
    assert error.code == "malformed"
    assert f"{MANIFEST_MAX_BYTES + 1:,} bytes, over the {MANIFEST_MAX_BYTES:,} limit" in str(error)


@pytest.mark.parametrize(
    ("document", "words"),
    [
        (b"", "is not valid JSON"),
        (b"[" * 100_000, "is not valid JSON"),
        (b"\xff\xfe{}", "is not valid JSON"),
        (b"null", "the release manifest"),
        (b"{}", "delegation"),
    ],
)
def test_a_malformed_document_is_refused_as_malformed(document: bytes, words: str) -> None:
    error = _rejected(document)
    assert error.code == "malformed"
    assert words in str(error)


def test_root_keys_compare_by_key_not_by_spelling() -> None:
    assert public_key_to_text(ROOTS[0].public_key()) in ROOT_SET.keys
    assert set(ROOT_SET.public_keys()) == {key_id(key.public_key()) for key in ROOTS}


# ---------------------------------------------------------------- the documents' published shape


def test_the_published_limits_and_names() -> None:
    # Seed 001 §11 layout: cowork-files.json at the archive root, the tree under agent-runtime/.
    assert (FILE_LIST_NAME, BUNDLE_TOP_DIR) == ("cowork-files.json", "agent-runtime")
    assert MANIFEST_MAX_BYTES == 4 * 1024 * 1024


def test_a_refusal_reads_as_one_sentence() -> None:
    error = ReleaseVerificationError("malformed", "the release\n   manifest  is\tbroken")
    assert str(error) == "the release manifest is broken"
    assert error.code == "malformed"
    assert str(_rejected(_signed_by())) == "the manifest is not signed"


@pytest.mark.parametrize(
    ("url", "valid"),
    [
        ("b.tar.gz", True),
        ("https://cdn.test/b.tar.gz", True),
        ("x" * 2048, True),
        ("x" * 2049, False),
        ("", False),
        ("a b.tar.gz", False),
        ("a\\b.tar.gz", False),
        ("ftp://cdn.test/b.tar.gz", False),
        ("https:///b.tar.gz", False),
        ("//cdn.test/b.tar.gz", False),
    ],
)
def test_a_bundle_url_is_http_or_relative(url: str, valid: bool) -> None:
    if valid:
        assert BundleRef(url=url, sha256="ab" * 32, size=1).url == url
    else:
        with pytest.raises(ValidationError):
            BundleRef(url=url, sha256="ab" * 32, size=1)


def test_signature_lists_are_bounded_at_sixty_four() -> None:
    document = _document()
    many = [document.manifest.signatures[0]] * 64
    assert len(SignedManifest(signed=document.manifest.signed, signatures=many).signatures) == 64
    with pytest.raises(ValidationError):
        SignedManifest(signed=document.manifest.signed, signatures=[*many, many[0]])
    roots = document.delegation.signatures
    assert len(SignedDelegation(signed=document.delegation.signed, signatures=roots * 32).signatures) == 64
    with pytest.raises(ValidationError):
        SignedDelegation(signed=document.delegation.signed, signatures=roots * 32 + roots[:1])


def test_a_junk_root_key_is_named_by_its_field() -> None:
    with pytest.raises(ValidationError, match="keys must hold base64url Ed25519 public keys"):
        RootKeySet(keys=["junk"], threshold=1)


@pytest.mark.parametrize(
    ("system", "machine", "platform"),
    [
        ("darwin", "arm64", "darwin-arm64"),
        ("darwin", "x86_64", "darwin-x86_64"),
        ("win32", "AMD64", "windows-x64"),
        ("linux", "x86_64", "linux-x86_64"),
        ("linux", "aarch64", None),
    ],
)
def test_the_platform_is_named_from_the_system_and_machine(
    monkeypatch: pytest.MonkeyPatch, system: str, machine: str, platform: str | None
) -> None:
    monkeypatch.setattr(sys, "platform", system)
    monkeypatch.setattr(_platform, "machine", lambda: machine)
    assert current_platform() == platform


def test_a_protocol_range_of_two_hundred_characters_is_the_longest() -> None:
    spec = ">=1.0," + ",".join(["!=9.9"] * 30) + ",<2"
    spec = spec + " " * (200 - len(spec))
    assert _release(protocol_versions=spec).protocol_versions == spec
    with pytest.raises(ValidationError):
        _release(protocol_versions=spec + " ")


def test_a_file_list_of_the_runtime_program_alone_is_complete() -> None:
    listing = BundleFileList(
        runtime_version="1.0.0",
        platform="linux-x86_64",
        executable="run",
        files={"run": FileEntry(sha256="ab" * 32, size=1, mode=0o755)},
    )
    assert list(listing.files) == ["run"]
