"""The release manifest contract (contracts.release): documents that survive a trip over the wire, and a
verifier that refuses every kind of forgery, replay and junk with its own code — and never raises
anything else."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.ipc.handshake import PROTOCOL
from contracts.release import (
    MANIFEST_MAX_BYTES,
    PROTOCOL_VERSION,
    BundleFileList,
    BundleRef,
    KeyDelegation,
    ReleaseDocument,
    ReleaseManifest,
    ReleaseVerificationError,
    RootKeySet,
    RuntimeRelease,
    SigningKey,
    bundle_file_name,
    canonical_json,
    current_platform,
    sign_delegation,
    sign_manifest,
    verify_release_document,
)
from contracts.signing import key_id, public_key_to_text

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
ROOTS = [Ed25519PrivateKey.generate() for _ in range(3)]
RELEASE_KEY = Ed25519PrivateKey.generate()
OTHER_KEY = Ed25519PrivateKey.generate()
ROOT_SET = RootKeySet(keys=[public_key_to_text(k.public_key()) for k in ROOTS], threshold=2)
SHA = "ab" * 32


def _release(version: str = "1.4.0", **change: Any) -> RuntimeRelease:
    fields: dict[str, Any] = {
        "runtime_version": version,
        "protocol_versions": ">=1.0,<2",
        "min_desktop_version": "0.1.0",
        "bundles": {
            "linux-x86_64": BundleRef(url=bundle_file_name(version, "linux-x86_64"), sha256=SHA, size=9)
        },
        "release_notes": "Faster start.",
        "rollout_percent": 100,
        "published_at": NOW - timedelta(days=1),
    }
    return RuntimeRelease(**{**fields, **change})


def _manifest(version: int = 7, expires: timedelta = timedelta(days=30)) -> ReleaseManifest:
    return ReleaseManifest(
        manifest_version=version,
        expires_at=NOW + expires,
        channels={"stable": [_release("1.3.0")], "beta": [_release("1.4.0", rollout_percent=25)]},
    )


def _signing_key(key: Ed25519PrivateKey, expires: timedelta = timedelta(days=365)) -> SigningKey:
    public = key.public_key()
    return SigningKey(key_id=key_id(public), public_key=public_key_to_text(public), expires_at=NOW + expires)


def _delegation(
    keys: Sequence[SigningKey] | None = None,
    revoked: Sequence[str] = (),
    expires: timedelta = timedelta(days=365),
) -> KeyDelegation:
    return KeyDelegation(
        version=1,
        expires_at=NOW + expires,
        keys=list(keys if keys is not None else [_signing_key(RELEASE_KEY)]),
        revoked_key_ids=list(revoked),
    )


def _document(
    *,
    delegation: KeyDelegation | None = None,
    roots: Sequence[Ed25519PrivateKey] = ROOTS[:2],
    manifest: ReleaseManifest | None = None,
    signer: Ed25519PrivateKey = RELEASE_KEY,
) -> ReleaseDocument:
    return ReleaseDocument(
        delegation=sign_delegation(delegation or _delegation(), roots),
        manifest=sign_manifest(manifest or _manifest(), signer),
    )


def _wire(document: ReleaseDocument) -> dict[str, Any]:
    return document.to_wire()


def _bytes(wire: dict[str, Any]) -> bytes:
    return json.dumps(wire).encode()


def _rejected(raw: bytes, root: RootKeySet = ROOT_SET, now: datetime = NOW) -> ReleaseVerificationError:
    with pytest.raises(ReleaseVerificationError) as caught:
        verify_release_document(raw, root, now=now)
    error = caught.value
    assert "\n" not in str(error)
    assert str(error)
    return error


# ---------------------------------------------------------------- round trips


def test_a_signed_document_verifies_after_a_trip_over_the_wire() -> None:
    document = _document()
    raw = document.model_dump_json(by_alias=True, exclude_none=True).encode()
    manifest = verify_release_document(raw, ROOT_SET, now=NOW)
    assert manifest == document.manifest.signed
    assert [r.runtime_version for r in manifest.channels["beta"]] == ["1.4.0"]
    assert manifest.channels["beta"][0].rollout_percent == 25


@pytest.mark.parametrize(
    "respell",
    [
        lambda text: json.dumps(json.loads(text), indent=2),
        lambda text: json.dumps(json.loads(text), sort_keys=True),
        lambda text: text.replace(':00Z"', ':00+00:00"'),
        lambda text: text.replace('"revoked":false,', ""),
    ],
    ids=["indented", "reordered", "offset-spelling", "default-left-out"],
)
def test_the_signature_ignores_how_the_json_was_spelled(respell: Callable[[str], str]) -> None:
    text = _document().model_dump_json(by_alias=True, exclude_none=True)
    respelled = respell(text)
    assert respelled != text
    verify_release_document(respelled.encode(), ROOT_SET, now=NOW)


def test_the_wire_names_are_camel_case() -> None:
    wire = _wire(_document())
    release = wire["manifest"]["signed"]["channels"]["stable"][0]
    assert set(release) == {
        "runtimeVersion",
        "protocolVersions",
        "minDesktopVersion",
        "bundles",
        "releaseNotes",
        "rolloutPercent",
        "revoked",
        "publishedAt",
    }
    assert set(wire["delegation"]["signed"]) == {"version", "expiresAt", "keys", "revokedKeyIds"}
    assert set(wire["manifest"]["signed"]) == {"manifestVersion", "expiresAt", "channels"}
    assert set(wire["manifest"]["signatures"][0]) == {"keyId", "signature"}


def test_every_root_key_may_sign_and_a_repeated_key_signs_once() -> None:
    signed = sign_delegation(_delegation(), [ROOTS[0], ROOTS[0], ROOTS[1], ROOTS[2]])
    assert len(signed.signatures) == 3


def test_canonical_json_is_sorted_compact_utf8() -> None:
    text = canonical_json(_release(release_notes="Grüße")).decode()
    assert text.startswith('{"bundles":')
    assert " " not in text.replace("Grüße", "").replace("Faster start.", "")
    assert "Grüße" in text


def test_a_release_answers_whether_it_speaks_the_protocol() -> None:
    assert _release().speaks(PROTOCOL_VERSION)
    assert not _release(protocol_versions=">=2").speaks(PROTOCOL_VERSION)
    assert _release(protocol_versions="~=1.0").speaks("1.3")


def test_the_protocol_version_is_the_handshakes() -> None:
    assert PROTOCOL == "cowork-ipc/1"
    assert PROTOCOL_VERSION == "1.0"


def test_current_platform_names_this_machine_when_it_is_a_target() -> None:
    assert current_platform() in (None, "darwin-arm64", "darwin-x86_64", "windows-x64", "linux-x86_64")


# ---------------------------------------------------------------- attacks on the delegation


def test_a_tampered_manifest_is_a_bad_signature() -> None:
    wire = _wire(_document())
    wire["manifest"]["signed"]["channels"]["stable"][0]["bundles"]["linux-x86_64"]["sha256"] = "cd" * 32
    assert _rejected(_bytes(wire)).code == "bad_signature"


def test_a_manifest_with_a_raised_rollout_is_a_bad_signature() -> None:
    wire = _wire(_document())
    wire["manifest"]["signed"]["channels"]["beta"][0]["rolloutPercent"] = 100
    assert _rejected(_bytes(wire)).code == "bad_signature"


def test_a_tampered_delegation_is_untrusted() -> None:
    wire = _wire(_document())
    wire["delegation"]["signed"]["keys"].append(_signing_key(OTHER_KEY).to_wire())
    assert _rejected(_bytes(wire)).code == "delegation_untrusted"


def test_a_delegation_signed_by_strange_roots_is_untrusted() -> None:
    strangers = [Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()]
    error = _rejected(_bytes(_wire(_document(roots=strangers))))
    assert error.code == "delegation_untrusted"
    assert "0 of the pinned root keys" in str(error)


def test_an_unsigned_delegation_is_untrusted() -> None:
    wire = _wire(_document())
    wire["delegation"]["signatures"] = []
    assert _rejected(_bytes(wire)).code == "delegation_untrusted"


def test_one_root_signature_is_below_a_threshold_of_two() -> None:
    error = _rejected(_bytes(_wire(_document(roots=ROOTS[:1]))))
    assert error.code == "delegation_untrusted"
    assert "1 of the pinned root keys; 2 are required" in str(error)


def test_a_root_signature_repeated_counts_once() -> None:
    wire = _wire(_document(roots=ROOTS[:1]))
    wire["delegation"]["signatures"] *= 3
    assert _rejected(_bytes(wire)).code == "delegation_untrusted"


def test_a_root_signature_copied_under_another_roots_id_does_not_count() -> None:
    wire = _wire(_document(roots=ROOTS[:1]))
    forged = dict(wire["delegation"]["signatures"][0], keyId=key_id(ROOTS[1].public_key()))
    wire["delegation"]["signatures"].append(forged)
    assert _rejected(_bytes(wire)).code == "delegation_untrusted"


def test_all_three_roots_satisfy_a_threshold_of_three() -> None:
    three = RootKeySet(keys=ROOT_SET.keys, threshold=3)
    verify_release_document(_bytes(_wire(_document(roots=ROOTS))), three, now=NOW)
    assert _rejected(_bytes(_wire(_document(roots=ROOTS[1:]))), three).code == "delegation_untrusted"


def test_an_expired_delegation_is_refused() -> None:
    raw = _bytes(_wire(_document(delegation=_delegation(expires=timedelta(days=-1)))))
    error = _rejected(raw)
    assert error.code == "delegation_expired"
    assert "expired at 2026-10-31" in str(error)


# ---------------------------------------------------------------- attacks on the manifest signature


def test_a_manifest_signed_by_an_undelegated_key_is_unknown() -> None:
    error = _rejected(_bytes(_wire(_document(signer=OTHER_KEY))))
    assert error.code == "unknown_key"


def test_a_manifest_signed_by_a_root_key_alone_is_unknown() -> None:
    assert _rejected(_bytes(_wire(_document(signer=ROOTS[0])))).code == "unknown_key"


def test_a_manifest_signed_by_a_revoked_key_is_refused() -> None:
    delegation = _delegation(revoked=[key_id(RELEASE_KEY.public_key())])
    error = _rejected(_bytes(_wire(_document(delegation=delegation))))
    assert error.code == "revoked_key"
    assert key_id(RELEASE_KEY.public_key()) in str(error)


def test_a_revoked_key_dropped_from_the_keys_is_still_revoked() -> None:
    delegation = _delegation(keys=[_signing_key(OTHER_KEY)], revoked=[key_id(RELEASE_KEY.public_key())])
    assert _rejected(_bytes(_wire(_document(delegation=delegation)))).code == "revoked_key"


def test_a_manifest_signed_by_an_expired_release_key_is_refused() -> None:
    delegation = _delegation(keys=[_signing_key(RELEASE_KEY, expires=timedelta(seconds=-1))])
    error = _rejected(_bytes(_wire(_document(delegation=delegation))))
    assert error.code == "delegation_expired"
    assert "release key" in str(error)


def test_an_unsigned_manifest_is_refused() -> None:
    wire = _wire(_document())
    wire["manifest"]["signatures"] = []
    error = _rejected(_bytes(wire))
    assert error.code == "bad_signature"
    assert "not signed" in str(error)


def test_a_signature_over_other_bytes_is_bad() -> None:
    wire = _wire(_document())
    other = sign_manifest(_manifest(version=8), RELEASE_KEY)
    wire["manifest"]["signatures"] = [other.signatures[0].to_wire()]
    assert _rejected(_bytes(wire)).code == "bad_signature"


def test_one_good_signature_among_bad_ones_is_enough() -> None:
    wire = _wire(_document())
    junk = sign_manifest(_manifest(), OTHER_KEY).signatures[0].to_wire()
    wire["manifest"]["signatures"].insert(0, junk)
    assert verify_release_document(_bytes(wire), ROOT_SET, now=NOW).manifest_version == 7


def test_a_rotated_key_verifies_once_delegated() -> None:
    delegation = _delegation(keys=[_signing_key(RELEASE_KEY), _signing_key(OTHER_KEY)], revoked=[])
    raw = _bytes(_wire(_document(delegation=delegation, signer=OTHER_KEY)))
    assert verify_release_document(raw, ROOT_SET, now=NOW).manifest_version == 7


# ---------------------------------------------------------------- freeze and junk


def test_an_expired_manifest_is_a_freeze_attack() -> None:
    error = _rejected(_bytes(_wire(_document(manifest=_manifest(expires=timedelta(seconds=0))))))
    assert error.code == "manifest_expired"
    assert "version 7" in str(error)


def test_a_manifest_is_checked_against_the_clock_it_is_given() -> None:
    raw = _bytes(_wire(_document()))
    assert _rejected(raw, now=NOW + timedelta(days=31)).code == "manifest_expired"
    naive = (NOW + timedelta(days=1)).replace(tzinfo=None)
    assert verify_release_document(raw, ROOT_SET, now=naive).manifest_version == 7


def test_an_oversize_document_is_refused_before_parsing() -> None:
    raw = _bytes(_wire(_document()))
    error = _rejected(raw + b" " * (MANIFEST_MAX_BYTES + 1 - len(raw)))
    assert error.code == "malformed"
    assert "limit" in str(error)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe{", "not valid JSON"),
        (b"[1,2]", "(root)"),
        (b"{" * 100_000, "not valid JSON"),
        (b'{"delegation": {}, "manifest": {}}', "delegation.signed is required"),
        (b"null", "(root)"),
    ],
    ids=["empty", "not-utf8", "array", "deep", "empty-objects", "null"],
)
def test_junk_is_malformed(raw: bytes, words: str) -> None:
    error = _rejected(raw)
    assert error.code == "malformed"
    assert words in str(error)


def _mutated(change: Callable[[dict[str, Any]], None]) -> bytes:
    wire = copy.deepcopy(_wire(_document()))
    change(wire)
    return _bytes(wire)


def _stable(wire: dict[str, Any]) -> dict[str, Any]:
    release: dict[str, Any] = wire["manifest"]["signed"]["channels"]["stable"][0]
    return release


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda w: w["manifest"].update(extra=1), "manifest.extra is not a known field"),
        (lambda w: _stable(w).update(rolloutPercent=101), "rolloutPercent must be at most 100"),
        (lambda w: _stable(w).update(rolloutPercent="50"), "rolloutPercent must be an integer"),
        (lambda w: _stable(w).update(runtimeVersion="one"), "runtimeVersion must be a PEP 440 version"),
        (lambda w: _stable(w).update(protocolVersions="1.0"), "protocolVersions must be a PEP 440 specifier"),
        (
            lambda w: _stable(w)["bundles"].update({"linux-arm64": _stable(w)["bundles"]["linux-x86_64"]}),
            "bundles",
        ),
        (lambda w: _stable(w)["bundles"]["linux-x86_64"].update(size=0), "size must be greater than 0"),
        (
            lambda w: _stable(w)["bundles"]["linux-x86_64"].update(sha256="AB" * 32),
            "sha256 has the wrong format",
        ),
        (lambda w: _stable(w)["bundles"]["linux-x86_64"].update(url="file:///etc/passwd"), "http(s) URL"),
        (lambda w: _stable(w)["bundles"]["linux-x86_64"].update(url="//evil.example/x"), "scheme"),
        (
            lambda w: _stable(w).update(publishedAt="2026-01-01T00:00:00"),
            "publishedAt must include a time zone",
        ),
        (lambda w: w["manifest"]["signed"]["channels"].update(nightly=[]), "channels.nightly"),
        (lambda w: w["manifest"]["signed"].update(manifestVersion=0), "manifestVersion must be at least 1"),
        (
            lambda w: w["manifest"]["signed"]["channels"]["stable"].append(_stable(w)),
            "lists runtime 1.3.0 twice",
        ),
        (lambda w: w["manifest"]["signatures"][0].update(signature="x"), "signature has the wrong format"),
        (
            lambda w: w["delegation"]["signed"]["keys"][0].update(keyId="A" * 16),
            "is not the id of publicKey",
        ),
        (
            lambda w: w["delegation"]["signed"]["keys"].append(w["delegation"]["signed"]["keys"][0]),
            "same release key twice",
        ),
    ],
    ids=[
        "unknown-field",
        "rollout-over-100",
        "rollout-as-string",
        "version-not-pep440",
        "range-not-a-specifier",
        "unknown-platform",
        "empty-bundle",
        "uppercase-hash",
        "file-url",
        "scheme-relative-url",
        "naive-date",
        "unknown-channel",
        "manifest-version-zero",
        "duplicate-release",
        "short-signature",
        "key-id-mismatch",
        "duplicate-key",
    ],
)
def test_a_document_that_breaks_the_schema_is_malformed(
    change: Callable[[dict[str, Any]], None], field: str
) -> None:
    error = _rejected(_mutated(change))
    assert error.code == "malformed"
    assert field in str(error)


def test_a_naive_delegation_date_is_malformed_not_a_type_error() -> None:
    def naive(wire: dict[str, Any]) -> None:
        wire["delegation"]["signed"]["expiresAt"] = "2030-01-01T00:00:00"

    assert _rejected(_mutated(naive)).code == "malformed"


# ---------------------------------------------------------------- the pinned root set


def test_a_root_set_refuses_a_threshold_above_its_keys() -> None:
    with pytest.raises(ValueError, match="threshold 4 is more than the 3 root keys"):
        RootKeySet(keys=ROOT_SET.keys, threshold=4)


def test_a_root_set_refuses_a_key_listed_twice() -> None:
    with pytest.raises(ValueError, match="same root key twice"):
        RootKeySet(keys=[ROOT_SET.keys[0], ROOT_SET.keys[0]], threshold=1)


def test_a_root_set_refuses_junk_keys() -> None:
    with pytest.raises(ValueError, match="base64url Ed25519 public keys"):
        RootKeySet.model_validate_json('{"keys": ["not-a-key"], "threshold": 1}')


def test_a_root_set_needs_a_positive_threshold() -> None:
    with pytest.raises(ValueError, match="threshold"):
        RootKeySet(keys=ROOT_SET.keys, threshold=0)


# ---------------------------------------------------------------- the inner file list


def _files(**change: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "runtimeVersion": "1.4.0",
        "platform": "linux-x86_64",
        "executable": "agent-runtime",
        "files": {
            "agent-runtime": {"sha256": SHA, "size": 10, "mode": 0o755},
            "_internal/base_library.zip": {"sha256": SHA, "size": 0, "mode": 0o644},
            "_internal/certifi/cacert.pem": {"sha256": SHA, "size": 3, "mode": 0o644},
        },
    }
    wire.update(change)
    return wire


def test_a_file_list_round_trips_and_names_its_directories() -> None:
    files = BundleFileList.model_validate_json(json.dumps(_files()))
    assert BundleFileList.model_validate_json(json.dumps(files.to_wire())) == files
    assert files.directories() == {"_internal", "_internal/certifi"}


@pytest.mark.parametrize(
    "path",
    ["../evil", "/etc/passwd", "a/../../b", "a//b", "./a", "a/.", "C:/x", "a\\b", "a\nb", ""],
)
def test_a_file_list_refuses_paths_that_leave_the_tree(path: str) -> None:
    wire = _files()
    wire["files"][path] = {"sha256": SHA, "size": 1, "mode": 0o644}
    with pytest.raises(ValueError, match="unsafe path"):
        BundleFileList.model_validate_json(json.dumps(wire))


@pytest.mark.parametrize("mode", [0o4755, 0o777, 0o600, 0o2644])
def test_a_file_list_refuses_modes_other_than_755_and_644(mode: int) -> None:
    wire = _files()
    wire["files"]["_internal/base_library.zip"]["mode"] = mode
    with pytest.raises(ValueError, match="mode must be 0o755"):
        BundleFileList.model_validate_json(json.dumps(wire))


def test_a_file_list_refuses_a_path_that_is_both_file_and_directory() -> None:
    wire = _files()
    wire["files"]["_internal/certifi"] = {"sha256": SHA, "size": 1, "mode": 0o644}
    with pytest.raises(ValueError, match="both as a file and as a directory"):
        BundleFileList.model_validate_json(json.dumps(wire))


@pytest.mark.parametrize("executable", ["missing", "_internal/base_library.zip"])
def test_a_file_list_names_an_executable_file_it_lists(executable: str) -> None:
    with pytest.raises(ValueError, match="must be one of files, with mode 0o755"):
        BundleFileList.model_validate_json(json.dumps(_files(executable=executable)))


def test_bundle_file_names_follow_the_issue() -> None:
    assert bundle_file_name("1.4.0", "darwin-arm64") == "agent-runtime-1.4.0-darwin-arm64.tar.gz"
