"""Changes to a release document, each checked before anything is written.

Every command follows the same path: read the published ``manifest.json``; verify it against the
pinned root keys (:func:`load_published`) — the tooling never signs on top of content it cannot
trust, such as a manifest someone edited on the server; apply one change to the models (the
functions below, pure and clock-free); sign; verify the *result* exactly as a desktop will
(:func:`seal`); only then write it. A change that would publish something clients reject — a
release key that is not delegated, too few root signatures — fails before the write.

The manifest version grows by one with every change, as does the delegation's version; each change
also renews the manifest's ``expiresAt``, so a stale manifest cannot be replayed forever.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from packaging.version import Version
from pydantic import ValidationError

from contracts.release import (
    BundleRef,
    Channel,
    KeyDelegation,
    Platform,
    ReleaseDocument,
    ReleaseManifest,
    ReleaseVerificationError,
    RootKeySet,
    RuntimeRelease,
    SignedDelegation,
    SigningKey,
    sign_delegation,
    sign_manifest,
    verify_release_document,
)
from contracts.signing import key_id, public_key_to_text
from contracts.validation import describe, field_path
from cowork_release.errors import ReleaseError
from cowork_release.sites import Stored

__all__ = [
    "Change",
    "ReleaseFields",
    "add_bundles",
    "check_signer",
    "delegate",
    "empty_manifest",
    "load_published",
    "promote",
    "renew",
    "revoke_release",
    "seal",
    "set_rollout",
]

_JUST_BEFORE = timedelta(microseconds=1)


@dataclass(frozen=True)
class Change:
    """A new manifest (or None: nothing to change) and the line that says what changed."""

    manifest: ReleaseManifest | None
    summary: str


# ---------------------------------------------------------------- reading and sealing


def _expiries(document: ReleaseDocument) -> Iterable[datetime]:
    yield document.delegation.signed.expires_at
    yield document.manifest.signed.expires_at
    yield from (key.expires_at for key in document.delegation.signed.keys)


def load_published(
    stored: Stored | None, roots: RootKeySet, *, now: datetime, where: str
) -> ReleaseDocument | None:
    """The published document, if its signatures hold against ``roots``.

    Expiry is not held against it: renewing an expired manifest or delegation is exactly what the
    release engineer is here to do. Signatures, the root threshold and revocations are checked as of
    just before the first expiry in the document, when all of them must already have held.
    """
    if stored is None:
        return None
    try:
        document = ReleaseDocument.model_validate_json(stored.data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        problem = (
            f"{field_path(first['loc'])} {describe(first)}" if first["type"] != "json_invalid" else "not JSON"
        )
        raise ReleaseError(
            f"the manifest at {where} is malformed ({problem}); refusing to build on it"
        ) from None
    moment = min(now, min(_expiries(document)) - _JUST_BEFORE)
    try:
        verify_release_document(stored.data, roots, now=moment)
    except ReleaseVerificationError as exc:
        raise ReleaseError(
            f"the manifest at {where} does not verify against the root keys ({exc.code}: {exc}); "
            "refusing to build on it"
        ) from None
    return document


def seal(
    delegation: SignedDelegation,
    manifest: ReleaseManifest,
    key: Ed25519PrivateKey,
    roots: RootKeySet,
    *,
    now: datetime,
) -> bytes:
    """The bytes of the new ``manifest.json``, signed by ``key`` and verified as a desktop would."""
    document = ReleaseDocument(delegation=delegation, manifest=sign_manifest(manifest, key))
    raw = (document.model_dump_json(by_alias=True, exclude_none=True, indent=2) + "\n").encode("utf-8")
    try:
        verify_release_document(raw, roots, now=now)
    except ReleaseVerificationError as exc:
        hint = {
            "unknown_key": " (delegate the release key first: cowork-release sign delegation --add-key …)",
            "revoked_key": " (sign with a release key that is not revoked)",
            "delegation_expired": " (renew the delegation: cowork-release sign delegation)",
        }.get(exc.code, "")
        raise ReleaseError(
            f"the result would be refused by desktops: {exc}{hint}; nothing was written"
        ) from None
    return raw


def check_signer(delegation: KeyDelegation, key: Ed25519PrivateKey, *, now: datetime) -> None:
    """Refuse a release key the delegation does not let sign now, even when nothing is to be signed."""
    kid = key_id(key.public_key())
    delegated = next((entry for entry in delegation.keys if entry.key_id == kid), None)
    if kid in delegation.revoked_key_ids:
        raise ReleaseError(f"release key {kid} is revoked")
    if delegated is None:
        raise ReleaseError(f"release key {kid} is not delegated (cowork-release sign delegation --add-key …)")
    if delegated.expires_at <= now:
        raise ReleaseError(f"release key {kid} expired at {delegated.expires_at.isoformat()}")


def empty_manifest(*, now: datetime, expires: timedelta) -> ReleaseManifest:
    return ReleaseManifest(manifest_version=1, expires_at=now + expires, channels={})


def renew(manifest: ReleaseManifest, *, now: datetime, expires: timedelta) -> ReleaseManifest:
    """The same content as the next manifest version, valid from ``now`` for ``expires``."""
    return manifest.model_copy(
        update={"manifest_version": manifest.manifest_version + 1, "expires_at": now + expires}, deep=True
    )


# ---------------------------------------------------------------- the delegation


def delegate(
    previous: KeyDelegation | None,
    roots: RootKeySet,
    root_keys: Sequence[Ed25519PrivateKey],
    *,
    add: Sequence[Ed25519PublicKey] = (),
    revoke: Sequence[str] = (),
    key_expires: timedelta,
    expires: timedelta,
    now: datetime,
) -> SignedDelegation:
    """The next delegation: ``add`` certified (or re-certified) until ``now + key_expires``, ``revoke``
    withdrawn for good, signed by ``root_keys`` — at least the threshold of the pinned set."""
    pinned = roots.public_keys()
    for key in root_keys:
        if key_id(key.public_key()) not in pinned:
            raise ReleaseError(f"root key {key_id(key.public_key())} is not one of the pinned root keys")
    distinct = {key_id(key.public_key()) for key in root_keys}
    if len(distinct) < roots.threshold:
        raise ReleaseError(
            f"{roots.threshold} distinct root keys must sign the delegation; {len(distinct)} given"
        )
    keys = {key.key_id: key for key in (previous.keys if previous else [])}
    revoked = list(previous.revoked_key_ids if previous else [])
    for kid in revoke:
        if kid in revoked:
            raise ReleaseError(f"release key {kid} is already revoked")
        if kid not in keys:
            raise ReleaseError(
                f"release key {kid} is not in the delegation (delegated: {', '.join(keys) or 'none'})"
            )
        del keys[kid]
        revoked.append(kid)
    for public in add:
        kid = key_id(public)
        if kid in revoked:
            raise ReleaseError(f"release key {kid} was revoked; a revoked key is never delegated again")
        keys[kid] = SigningKey(
            key_id=kid, public_key=public_key_to_text(public), expires_at=now + key_expires
        )
    if not keys:
        raise ReleaseError("the delegation would hold no release key: add one with --add-key")
    delegation = KeyDelegation(
        version=(previous.version + 1) if previous else 1,
        expires_at=now + expires,
        keys=sorted(keys.values(), key=lambda key: key.key_id),
        revoked_key_ids=revoked,
    )
    return sign_delegation(delegation, root_keys)


# ---------------------------------------------------------------- releases


@dataclass(frozen=True)
class ReleaseFields:
    """What ``publish`` says about a release besides its bundles; None = not given."""

    protocol_versions: str | None = None
    min_desktop_version: str | None = None
    release_notes: str | None = None
    rollout_percent: int | None = None


def _find(releases: Sequence[RuntimeRelease], version: str) -> int | None:
    wanted = Version(version)
    return next((i for i, release in enumerate(releases) if release.version() == wanted), None)


def _sorted(releases: Iterable[RuntimeRelease]) -> list[RuntimeRelease]:
    return sorted(releases, key=lambda release: release.version())


def _with_channel(
    manifest: ReleaseManifest,
    channel: Channel,
    releases: list[RuntimeRelease],
    *,
    now: datetime,
    expires: timedelta,
) -> ReleaseManifest:
    renewed = renew(manifest, now=now, expires=expires)
    renewed.channels[channel] = _sorted(releases)
    # Re-validate the whole manifest: the model's own checks (one entry per version…) hold afterwards.
    return ReleaseManifest.model_validate(renewed.model_dump())


def _new_release(
    version: str, bundles: Mapping[Platform, BundleRef], fields: ReleaseFields, now: datetime
) -> RuntimeRelease:
    missing = [
        flag
        for flag, value in (
            ("--protocol", fields.protocol_versions),
            ("--min-desktop", fields.min_desktop_version),
        )
        if value is None
    ]
    if missing:
        raise ReleaseError(f"a new release needs {' and '.join(missing)}")
    try:
        return RuntimeRelease(
            runtime_version=version,
            protocol_versions=fields.protocol_versions or "",
            min_desktop_version=fields.min_desktop_version or "",
            bundles=dict(bundles),
            release_notes=fields.release_notes or "",
            rollout_percent=100 if fields.rollout_percent is None else fields.rollout_percent,
            published_at=now,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        raise ReleaseError(f"{field_path(first['loc'])} {describe(first)}") from None


def add_bundles(
    manifest: ReleaseManifest,
    channel: Channel,
    version: str,
    bundles: Mapping[Platform, BundleRef],
    fields: ReleaseFields,
    *,
    now: datetime,
    expires: timedelta,
) -> Change:
    """Publish ``version``'s bundles on ``channel``: a new release, or more platforms of one already
    there (each platform is built on its own machine). A platform's bundle is never replaced, and
    what the release already says is never silently changed."""
    releases = list(manifest.channels.get(channel, []))
    index = _find(releases, version)
    platforms = ", ".join(sorted(bundles))
    if index is None:
        releases.append(_new_release(version, bundles, fields, now))
        changed = _with_channel(manifest, channel, releases, now=now, expires=expires)
        return Change(changed, f"published {version} ({platforms}) on {channel}")
    release = releases[index]
    if release.revoked:
        raise ReleaseError(f"{version} is revoked on {channel}; publish a new version instead")
    for name, given, present in (
        ("--protocol", fields.protocol_versions, release.protocol_versions),
        ("--min-desktop", fields.min_desktop_version, release.min_desktop_version),
        ("--notes", fields.release_notes, release.release_notes),
        ("--rollout", fields.rollout_percent, release.rollout_percent),
    ):
        if given is not None and given != present:
            raise ReleaseError(
                f"{version} on {channel} already has {name} {present!r}; it is not changed by publish"
            )
    merged = dict(release.bundles)
    for platform, ref in bundles.items():
        old = merged.get(platform)
        if old is not None and (old.sha256, old.size) != (ref.sha256, ref.size):
            raise ReleaseError(
                f"{version} on {channel} already has a different {platform} bundle; "
                "a published bundle is never replaced (publish a new version)"
            )
        merged[platform] = old or ref
    if merged == release.bundles:
        return Change(None, f"{version} ({platforms}) is already published on {channel}")
    releases[index] = release.model_copy(update={"bundles": merged})
    changed = _with_channel(manifest, channel, releases, now=now, expires=expires)
    return Change(changed, f"added {platforms} to {version} on {channel}")


def promote(
    manifest: ReleaseManifest, version: str, rollout: int | None, *, now: datetime, expires: timedelta
) -> Change:
    """Offer beta's ``version`` on stable too (beta keeps it)."""
    beta = list(manifest.channels.get("beta", []))
    index = _find(beta, version)
    if index is None:
        raise ReleaseError(f"{version} is not on beta")
    release = beta[index]
    if release.revoked:
        raise ReleaseError(f"{version} is revoked; it cannot be promoted")
    stable = list(manifest.channels.get("stable", []))
    if _find(stable, version) is not None:
        raise ReleaseError(f"{version} is already on stable")
    percent = release.rollout_percent if rollout is None else rollout
    stable.append(release.model_copy(update={"rollout_percent": percent, "published_at": now}))
    changed = _with_channel(manifest, "stable", stable, now=now, expires=expires)
    return Change(changed, f"promoted {version} to stable at {percent}%")


def set_rollout(
    manifest: ReleaseManifest,
    channel: Channel,
    version: str,
    percent: int,
    *,
    now: datetime,
    expires: timedelta,
) -> Change:
    releases = list(manifest.channels.get(channel, []))
    index = _find(releases, version)
    if index is None:
        raise ReleaseError(f"{version} is not on {channel}")
    release = releases[index]
    if release.revoked:
        raise ReleaseError(f"{version} is revoked on {channel}")
    if release.rollout_percent == percent:
        return Change(None, f"{version} on {channel} is already rolled out to {percent}%")
    releases[index] = release.model_copy(update={"rollout_percent": percent})
    changed = _with_channel(manifest, channel, releases, now=now, expires=expires)
    return Change(changed, f"{version} on {channel}: rollout {release.rollout_percent}% → {percent}%")


def revoke_release(
    manifest: ReleaseManifest, version: str, channel: Channel | None, *, now: datetime, expires: timedelta
) -> Change:
    """Mark ``version`` revoked on ``channel`` (or on every channel that has it): desktops stop
    installing it and move off it. The entry stays, so the revocation itself is published."""
    channels = [channel] if channel else [name for name in ("stable", "beta") if name in manifest.channels]
    changed = renew(manifest, now=now, expires=expires)
    touched, found = [], False
    for name in channels:
        releases = list(changed.channels.get(name, []))
        index = _find(releases, version)
        if index is None:
            continue
        found = True
        if not releases[index].revoked:
            releases[index] = releases[index].model_copy(update={"revoked": True})
            changed.channels[name] = releases
            touched.append(name)
    if not found:
        raise ReleaseError(f"{version} is not on {channel or 'any channel'}")
    if not touched:
        return Change(None, f"{version} is already revoked")
    return Change(
        ReleaseManifest.model_validate(changed.model_dump()), f"revoked {version} on {', '.join(touched)}"
    )
