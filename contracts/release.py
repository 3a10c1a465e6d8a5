"""The signed release manifest of agent-runtime bundles, and the inner file list of a bundle.

Seed 001 §9 (Phase 4) and §11 "Agent-runtime download model": the desktop downloads the runtime as a
separately versioned component. What it downloads is decided by one published file, ``manifest.json``,
a :class:`ReleaseDocument` holding two signed parts:

* a :class:`SignedDelegation` — the release signing keys, certified by a *threshold* of root keys. The
  desktop pins the root public keys (:class:`RootKeySet`); release keys can be rotated, expire, or be
  revoked (``revokedKeyIds``) without shipping a new desktop app.
* a :class:`SignedManifest` — the channels and their releases, signed by a delegated release key.

Signatures are Ed25519 over the canonical JSON of ``signed`` (the model's wire form with sorted keys, no
whitespace, UTF-8; computed from the parsed *model*, never from received text, as in
``contracts.signing``). The two signed payloads are strict models with disjoint required fields, so a
delegation's bytes can never validate as a manifest or the other way round.

:func:`verify_release_document` is the one check a client runs. It raises only
:class:`ReleaseVerificationError`, whose ``code`` says which check failed. Rollback (a manifest version
lower than the last trusted one), revoked releases and "older than installed" are the updater's checks.

A bundle ``agent-runtime-{version}-{platform}.tar.gz`` holds the onedir tree under ``agent-runtime/``
and, at the archive root, ``cowork-files.json``: a :class:`BundleFileList` naming every file with its
SHA-256, size and mode, which the updater's extractor checks each member against.

This module is not on the runtime's start path; it imports pydantic, cryptography and packaging.
"""

from __future__ import annotations

import json
import platform as _platform
import re
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal, get_args
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.ipc.handshake import PROTOCOL as _HANDSHAKE_PROTOCOL
from contracts.signing import b64url_decode, b64url_encode, key_id, public_key_from_text
from contracts.validation import describe, field_path

__all__ = [
    "BUNDLE_TOP_DIR",
    "CHANNELS",
    "FILE_LIST_NAME",
    "MANIFEST_MAX_BYTES",
    "PLATFORMS",
    "PROTOCOL_VERSION",
    "BundleFileList",
    "BundleRef",
    "Channel",
    "FileEntry",
    "KeyDelegation",
    "Platform",
    "ReleaseDocument",
    "ReleaseManifest",
    "ReleaseVerificationError",
    "RootKeySet",
    "RuntimeRelease",
    "Signature",
    "SignedDelegation",
    "SignedManifest",
    "SigningKey",
    "VerificationCode",
    "bundle_file_name",
    "canonical_json",
    "current_platform",
    "sign_delegation",
    "sign_manifest",
    "verify_release_document",
]

#: The JSON-RPC protocol version of the desktop ⇄ runtime wire these contracts describe, as PEP 440:
#: the handshake's protocol (``cowork-ipc/1``) is version 1.0. A release's ``protocolVersions`` range
#: must admit the version the desktop speaks.
PROTOCOL_VERSION = f"{_HANDSHAKE_PROTOCOL.rsplit('/', 1)[1]}.0"

#: ``manifest.json`` larger than this is refused before it is parsed.
MANIFEST_MAX_BYTES = 4 * 1024 * 1024
#: The inner file list's name at the archive root, and the directory every other member lives under.
FILE_LIST_NAME = "cowork-files.json"
BUNDLE_TOP_DIR = "agent-runtime"

Platform = Literal["darwin-arm64", "darwin-x86_64", "windows-x64", "linux-x86_64"]
Channel = Literal["stable", "beta"]
VerificationCode = Literal[
    "malformed",
    "delegation_untrusted",
    "delegation_expired",
    "unknown_key",
    "revoked_key",
    "bad_signature",
    "manifest_expired",
]

PLATFORMS: tuple[Platform, ...] = get_args(Platform)
CHANNELS: tuple[Channel, ...] = get_args(Channel)

_SHA256 = r"^[0-9a-f]{64}$"
_KEY_ID = r"^[A-Za-z0-9_-]{16}$"  # key_id(): 12 bytes of SHA-256, base64url
_SIGNATURE = r"^[A-Za-z0-9_-]{86}$"  # 64 bytes, base64url without padding
_MODES = (0o755, 0o644)
_MACHINES: dict[tuple[str, str], Platform] = {
    ("darwin", "arm64"): "darwin-arm64",
    ("darwin", "x86_64"): "darwin-x86_64",
    ("win32", "amd64"): "windows-x64",
    ("win32", "x86_64"): "windows-x64",
    ("linux", "x86_64"): "linux-x86_64",
    ("linux", "amd64"): "linux-x86_64",
}
_UNSAFE_TEXT = re.compile(r"[\x00-\x20\x7f\\]")
# Member paths must mean the same on every platform: no control characters, backslashes or drive colons.
_UNSAFE_PATH = re.compile(r"[\x00-\x1f\x7f\\:]")


def current_platform() -> Platform | None:
    """This interpreter's bundle platform, or None where no bundle is built (e.g. Linux on ARM)."""
    return _MACHINES.get((sys.platform, _platform.machine().lower()))


def bundle_file_name(runtime_version: str, platform: Platform) -> str:
    """``agent-runtime-{version}-{platform}.tar.gz``."""
    return f"agent-runtime-{runtime_version}-{platform}.tar.gz"


def _pep440(value: str, what: str) -> str:
    try:
        Version(value)
    except InvalidVersion:
        raise ValueError(f"{what} must be a PEP 440 version, not {value!r}") from None
    return value


# ---------------------------------------------------------------- the manifest


class BundleRef(WireModel):
    """Where one platform's bundle lives, and what it must hash to."""

    url: str = Field(min_length=1, max_length=2048)
    sha256: str = Field(pattern=_SHA256)
    size: int = Field(gt=0)

    @field_validator("url")
    @classmethod
    def _http_or_relative(cls, value: str) -> str:
        if _UNSAFE_TEXT.search(value):
            raise ValueError("url must not contain whitespace, control characters or backslashes")
        parts = urlsplit(value)
        if parts.scheme:
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError("url must be an http(s) URL or a path relative to the manifest")
        elif parts.netloc:
            raise ValueError("url must name its scheme (http or https)")
        return value


class RuntimeRelease(WireModel):
    """One runtime version offered on a channel."""

    runtime_version: str = Field(min_length=1, max_length=64)
    protocol_versions: str = Field(min_length=1, max_length=200)
    min_desktop_version: str = Field(min_length=1, max_length=64)
    bundles: dict[Platform, BundleRef] = Field(min_length=1)
    release_notes: str = Field(max_length=65536)
    rollout_percent: int = Field(ge=0, le=100)
    revoked: bool = False
    published_at: UtcDatetime

    @field_validator("runtime_version")
    @classmethod
    def _runtime_version(cls, value: str) -> str:
        return _pep440(value, "runtimeVersion")

    @field_validator("min_desktop_version")
    @classmethod
    def _min_desktop_version(cls, value: str) -> str:
        return _pep440(value, "minDesktopVersion")

    @field_validator("protocol_versions")
    @classmethod
    def _protocol_versions(cls, value: str) -> str:
        try:
            SpecifierSet(value)
        except InvalidSpecifier:
            raise ValueError(f"protocolVersions must be a PEP 440 specifier, not {value!r}") from None
        return value

    def version(self) -> Version:
        return Version(self.runtime_version)

    def speaks(self, protocol_version: str = PROTOCOL_VERSION) -> bool:
        """Whether this runtime's JSON-RPC protocol range admits ``protocol_version``."""
        return SpecifierSet(self.protocol_versions).contains(protocol_version, prereleases=True)


class ReleaseManifest(WireModel):
    """Every release on every channel; ``manifestVersion`` grows with each published change."""

    manifest_version: int = Field(ge=1)
    expires_at: UtcDatetime
    channels: dict[Channel, list[RuntimeRelease]]

    @model_validator(mode="after")
    def _one_entry_per_version(self) -> ReleaseManifest:
        for channel, releases in self.channels.items():
            seen: set[Version] = set()
            for release in releases:
                if release.version() in seen:
                    raise ValueError(f"channel {channel} lists runtime {release.runtime_version} twice")
                seen.add(release.version())
        return self


# ---------------------------------------------------------------- keys and signatures


class RootKeySet(WireModel):
    """The root public keys the desktop pins, and how many of them must sign a delegation."""

    keys: list[str] = Field(min_length=1)
    threshold: int = Field(ge=1)

    @model_validator(mode="after")
    def _valid_keys_and_threshold(self) -> RootKeySet:
        ids = {key_id(_public_key(text, "keys")) for text in self.keys}
        if len(ids) != len(self.keys):
            raise ValueError("keys lists the same root key twice")
        if self.threshold > len(self.keys):
            raise ValueError(f"threshold {self.threshold} is more than the {len(self.keys)} root keys")
        return self

    def public_keys(self) -> dict[str, Ed25519PublicKey]:
        return {key_id(key): key for key in (public_key_from_text(text) for text in self.keys)}


def _public_key(text: str, field: str) -> Ed25519PublicKey:
    try:
        return public_key_from_text(text)
    except ValueError:
        raise ValueError(f"{field} must hold base64url Ed25519 public keys") from None


class SigningKey(WireModel):
    """A release signing key the roots certify, until ``expiresAt``."""

    key_id: str = Field(pattern=_KEY_ID)
    public_key: str
    expires_at: UtcDatetime

    @model_validator(mode="after")
    def _id_names_the_key(self) -> SigningKey:
        if key_id(_public_key(self.public_key, "publicKey")) != self.key_id:
            raise ValueError(f"keyId {self.key_id} is not the id of publicKey")
        return self


class KeyDelegation(WireModel):
    """The release keys in force; ``revokedKeyIds`` withdraws keys before they expire."""

    version: int = Field(ge=1)
    expires_at: UtcDatetime
    keys: list[SigningKey]
    revoked_key_ids: list[str]

    @model_validator(mode="after")
    def _distinct_keys(self) -> KeyDelegation:
        ids = [key.key_id for key in self.keys]
        if len(set(ids)) != len(ids):
            raise ValueError("keys lists the same release key twice")
        return self


class Signature(WireModel):
    key_id: str = Field(pattern=_KEY_ID)
    signature: str = Field(pattern=_SIGNATURE)


class SignedDelegation(WireModel):
    signed: KeyDelegation
    signatures: list[Signature] = Field(max_length=64)


class SignedManifest(WireModel):
    signed: ReleaseManifest
    signatures: list[Signature] = Field(max_length=64)


class ReleaseDocument(WireModel):
    """The published ``manifest.json``."""

    delegation: SignedDelegation
    manifest: SignedManifest


def canonical_json(model: BaseModel) -> bytes:
    """The bytes that are signed: the model's wire form with sorted keys, no whitespace, UTF-8."""
    wire = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(wire, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _signature(payload: bytes, key: Ed25519PrivateKey) -> Signature:
    return Signature(key_id=key_id(key.public_key()), signature=b64url_encode(key.sign(payload)))


def sign_delegation(delegation: KeyDelegation, root_keys: Sequence[Ed25519PrivateKey]) -> SignedDelegation:
    """``delegation`` signed by each of ``root_keys`` (a key given twice signs once)."""
    payload = canonical_json(delegation)
    by_id = {key_id(key.public_key()): key for key in root_keys}
    return SignedDelegation(
        signed=delegation, signatures=[_signature(payload, key) for key in by_id.values()]
    )


def sign_manifest(manifest: ReleaseManifest, key: Ed25519PrivateKey) -> SignedManifest:
    return SignedManifest(signed=manifest, signatures=[_signature(canonical_json(manifest), key)])


# ---------------------------------------------------------------- verification


class ReleaseVerificationError(Exception):
    """Why a release document is not trusted: ``code`` for programs, ``str(error)`` for people."""

    def __init__(self, code: VerificationCode, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.code: VerificationCode = code


def _verifies(public_key: Ed25519PublicKey, signature: Signature, payload: bytes) -> bool:
    try:
        public_key.verify(b64url_decode(signature.signature), payload)
    except (InvalidSignature, ValueError):
        return False
    return True


def _parse(raw: bytes) -> ReleaseDocument:
    if len(raw) > MANIFEST_MAX_BYTES:
        raise ReleaseVerificationError(
            "malformed", f"the release manifest is {len(raw):,} bytes, over the {MANIFEST_MAX_BYTES:,} limit"
        )
    try:
        return ReleaseDocument.model_validate_json(raw)
    except ValidationError as exc:
        # pydantic reports every failure here, bad JSON and runaway nesting included, with at least
        # one error; validators' own ValueErrors arrive wrapped in it.
        first = exc.errors(include_url=False, include_input=False)[0]
        if first["type"] == "json_invalid":
            problem = "is not valid JSON"
        else:
            problem = f"{field_path(first['loc'])} {describe(first)}"
        raise ReleaseVerificationError("malformed", f"the release manifest {problem}") from None


def _check_delegation(signed: SignedDelegation, root: RootKeySet, now: datetime) -> None:
    try:
        roots = root.public_keys()
    except ValueError:
        raise ReleaseVerificationError("delegation_untrusted", "the pinned root keys are invalid") from None
    payload = canonical_json(signed.signed)
    # Distinct keys only: one root key's signature repeated never counts twice towards the threshold.
    valid = {
        signature.key_id
        for signature in signed.signatures
        if signature.key_id in roots and _verifies(roots[signature.key_id], signature, payload)
    }
    if len(valid) < root.threshold:
        raise ReleaseVerificationError(
            "delegation_untrusted",
            f"the release keys are certified by {len(valid)} of the pinned root keys; "
            f"{root.threshold} are required",
        )
    if signed.signed.expires_at <= now:
        raise ReleaseVerificationError(
            "delegation_expired",
            f"the release key delegation expired at {signed.signed.expires_at.isoformat()}",
        )


def _check_manifest(signed: SignedManifest, delegation: KeyDelegation, now: datetime) -> None:
    keys = {key.key_id: key for key in delegation.keys}
    revoked = set(delegation.revoked_key_ids)
    payload = canonical_json(signed.signed)
    failures: dict[VerificationCode, str] = {}
    for signature in signed.signatures:
        kid = signature.key_id
        key = keys.get(kid)
        if kid in revoked:
            failures.setdefault(
                "revoked_key", f"the manifest is signed by release key {kid}, which is revoked"
            )
        elif key is None:
            failures.setdefault(
                "unknown_key", f"the manifest is signed by {kid}, which is not a delegated release key"
            )
        elif key.expires_at <= now:
            failures.setdefault(
                "delegation_expired",
                f"the manifest is signed by release key {kid}, which expired at {key.expires_at.isoformat()}",
            )
        elif _verifies(public_key_from_text(key.public_key), signature, payload):
            return
        else:
            failures.setdefault(
                "bad_signature", f"the manifest's signature by release key {kid} does not match"
            )
    if not failures:
        raise ReleaseVerificationError("bad_signature", "the manifest is not signed")
    # The most telling reason first: a wrong signature by a good key means tampering.
    for code in ("bad_signature", "revoked_key", "delegation_expired", "unknown_key"):
        if code in failures:
            raise ReleaseVerificationError(code, failures[code])


def verify_release_document(raw: bytes, root: RootKeySet, *, now: datetime) -> ReleaseManifest:
    """The manifest in ``raw`` if it is trusted at ``now``; :class:`ReleaseVerificationError` if not.

    Checks, in order: size and shape (``malformed``); a threshold of distinct pinned root keys signed the
    delegation (``delegation_untrusted``) and it has not expired (``delegation_expired``); some signature
    on the manifest verifies with a delegated key that is neither revoked nor expired (``bad_signature``
    when no signature is present or a delegated key's does not match, ``revoked_key``, ``unknown_key``;
    a key past its own ``expiresAt`` answers ``delegation_expired``); the manifest has not expired
    (``manifest_expired`` — an old manifest replayed to freeze clients). A naive ``now`` is taken as UTC.
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    document = _parse(bytes(raw))
    _check_delegation(document.delegation, root, now)
    _check_manifest(document.manifest, document.delegation.signed, now)
    manifest = document.manifest.signed
    if manifest.expires_at <= now:
        raise ReleaseVerificationError(
            "manifest_expired",
            f"the release manifest (version {manifest.manifest_version}) expired at "
            f"{manifest.expires_at.isoformat()}",
        )
    return manifest


# ---------------------------------------------------------------- the inner file list of a bundle


class FileEntry(WireModel):
    sha256: str = Field(pattern=_SHA256)
    size: int = Field(ge=0)
    mode: int

    @field_validator("mode")
    @classmethod
    def _plain_mode(cls, value: int) -> int:
        if value not in _MODES:
            raise ValueError("mode must be 0o755 (493) or 0o644 (420)")
        return value


def _check_member_path(path: str) -> None:
    parts = path.split("/")
    if (
        not path
        or len(path) > 1024
        or path.startswith("/")
        or _UNSAFE_PATH.search(path)
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise ValueError(f"files has an unsafe path {path!r}: relative POSIX paths only, no '..'")


class BundleFileList(WireModel):
    """``cowork-files.json``: every file of the tree under ``agent-runtime/`` with its hash and mode."""

    runtime_version: str = Field(min_length=1, max_length=64)
    platform: Platform
    executable: str
    files: dict[str, FileEntry] = Field(min_length=1)

    @field_validator("runtime_version")
    @classmethod
    def _runtime_version(cls, value: str) -> str:
        return _pep440(value, "runtimeVersion")

    @model_validator(mode="after")
    def _safe_tree(self) -> BundleFileList:
        for path in self.files:
            _check_member_path(path)
        directories = _parents(self.files)
        clash = next((path for path in self.files if path in directories), None)
        if clash is not None:
            raise ValueError(f"files lists {clash!r} both as a file and as a directory")
        entry = self.files.get(self.executable)
        if entry is None or entry.mode != 0o755:
            raise ValueError(f"executable {self.executable!r} must be one of files, with mode 0o755")
        return self

    def directories(self) -> set[str]:
        """Every directory the files need, as relative POSIX paths."""
        return _parents(self.files)


def _parents(paths: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")
        found.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return found
