"""Fetch the release manifest, decide whether to trust it, and choose the release for this install.

Trust (seed 001 §11, issue 8): ``contracts.release.verify_release_document`` checks the signatures
against the pinned root keys and the expiry (a replayed old manifest freezes clients); then
:func:`trusted_manifest` refuses a manifest version lower than the last one trusted here (a rollback
to an older, validly signed manifest that still lists a vulnerable release).

Choice (:func:`choose_release`), among the releases of the channel (``beta`` also sees ``stable``):
skip revoked releases and versions marked bad here; keep those with a bundle for this platform, whose
``protocolVersions`` admit the protocol this desktop speaks, whose ``minDesktopVersion`` this desktop
meets, and whose rollout includes this install; take the highest version. Never install one older
than the runtime in use.

Rollout: each install has a random id (created once); its bucket for a release is the first 8 bytes
of ``SHA-256(installId:runtimeVersion)``, big-endian, mod 100, and it is in the rollout iff
bucket < rolloutPercent.
Raising the percentage only ever adds installs, and each release samples a different set of installs,
so the same users are not always first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import httpx
from packaging.version import InvalidVersion, Version

from contracts.release import (
    MANIFEST_MAX_BYTES,
    PROTOCOL_VERSION,
    BundleRef,
    Channel,
    Platform,
    ReleaseManifest,
    ReleaseVerificationError,
    RootKeySet,
    RuntimeRelease,
    verify_release_document,
)
from desktop.updater.errors import ManifestRejected

__all__ = [
    "Choice",
    "Offer",
    "choose_release",
    "fetch_manifest",
    "rollout_bucket",
    "trusted_manifest",
]


@dataclass(frozen=True, slots=True)
class Offer:
    """The release to install, and where its bundle is (an absolute URL)."""

    release: RuntimeRelease
    bundle: BundleRef
    url: str
    channel: Channel

    @property
    def version(self) -> str:
        return self.release.runtime_version


@dataclass(frozen=True, slots=True)
class Choice:
    """The outcome of :func:`choose_release`: an offer, or why there is none (``code``:
    ``up_to_date``, ``not_offered``, ``installed_revoked``: the runtime in use was revoked and must be
    taken out of service before anything is chosen)."""

    offer: Offer | None
    code: str
    message: str


async def fetch_manifest(
    client: httpx.AsyncClient, url: str, *, timeout: float = 30.0, max_bytes: int = MANIFEST_MAX_BYTES
) -> bytes:
    """The bytes at ``url``, at most ``max_bytes``; :class:`ManifestRejected` on any failure."""
    try:
        async with client.stream("GET", url, timeout=timeout) as response:
            if response.status_code != 200:
                raise ManifestRejected(
                    "http_status", f"The release manifest at {url} answered HTTP {response.status_code}"
                )
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body.extend(chunk)
                if len(body) > max_bytes:
                    raise ManifestRejected(
                        "too_large", f"The release manifest at {url} is larger than {max_bytes:,} bytes"
                    )
    except httpx.HTTPError as exc:
        raise ManifestRejected(
            "unreachable", f"Could not fetch the release manifest at {url}: {exc}"
        ) from exc
    return bytes(body)


def trusted_manifest(
    raw: bytes, root: RootKeySet, *, now: datetime, last_trusted_version: int | None
) -> ReleaseManifest:
    """The verified manifest, or :class:`ManifestRejected` (signature codes, or ``rollback``)."""
    try:
        manifest = verify_release_document(raw, root, now=now)
    except ReleaseVerificationError as exc:
        raise ManifestRejected(exc.code, f"The release manifest is not trusted: {exc}") from exc
    if last_trusted_version is not None and manifest.manifest_version < last_trusted_version:
        raise ManifestRejected(
            "rollback",
            f"The release manifest is version {manifest.manifest_version}, older than version "
            f"{last_trusted_version} already trusted here (a rollback); ignored",
        )
    return manifest


def rollout_bucket(install_id: str, runtime_version: str) -> int:
    """This install's bucket (0–99) for one release; stable for the life of the install."""
    digest = hashlib.sha256(f"{install_id}:{runtime_version}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


def choose_release(
    manifest: ReleaseManifest,
    *,
    manifest_url: str,
    platform: Platform,
    channel: Channel,
    installed_version: str | None,
    desktop_version: str,
    install_id: str,
    bad_versions: frozenset[str] | set[str] = frozenset(),
    protocol_version: str = PROTOCOL_VERSION,
) -> Choice:
    installed = _version(installed_version) if installed_version else None
    desktop = _version(desktop_version) or Version("0")
    channels: tuple[Channel, ...] = ("beta", "stable") if channel == "beta" else ("stable",)
    releases = [release for name in channels for release in manifest.channels.get(name, [])]
    # Revoked on one channel is revoked on every channel (e.g. a beta pulled after its promotion).
    revoked = {r.version() for listed in manifest.channels.values() for r in listed if r.revoked}
    if installed is not None and installed in revoked:
        return Choice(None, "installed_revoked", f"Runtime {installed_version} in use has been revoked")

    skipped: list[tuple[Version, str]] = []
    eligible: list[RuntimeRelease] = []
    for release in releases:
        version, text = release.version(), release.runtime_version
        if release.revoked or version in revoked or text in bad_versions:
            continue
        if platform not in release.bundles:
            skipped.append((version, f"{text} has no {platform} bundle"))
        elif not release.speaks(protocol_version):
            skipped.append(
                (version, f"{text} speaks protocol {release.protocol_versions}, not {protocol_version}")
            )
        elif desktop < Version(release.min_desktop_version):
            skipped.append((version, f"{text} needs Cowork {release.min_desktop_version} or later"))
        elif rollout_bucket(install_id, text) >= release.rollout_percent:
            skipped.append(
                (
                    version,
                    f"{text} is rolling out to {release.rollout_percent}% of installs, not this one yet",
                )
            )
        else:
            eligible.append(release)

    best = max(eligible, key=RuntimeRelease.version, default=None)
    current = installed_version or "bundled"
    if best is None or (installed is not None and best.version() <= installed):
        newer = [why for version, why in skipped if installed is None or version > installed]
        if best is not None and installed is not None and best.version() < installed:
            raise ManifestRejected(
                "older_runtime",
                f"The newest runtime the manifest offers, {best.runtime_version}, is older than the "
                f"runtime in use, {installed_version}; not downgrading",
            )
        if newer:
            return Choice(None, "not_offered", "A newer runtime is not for this install: " + "; ".join(newer))
        return Choice(None, "up_to_date", f"Runtime {current} is the newest offered")
    bundle = best.bundles[platform]
    url = urljoin(manifest_url, bundle.url)
    if urlsplit(url).scheme not in ("http", "https"):
        raise ManifestRejected("malformed", f"The bundle URL {url} is not http(s)")
    message = f"Runtime {best.runtime_version} is available (in use: {current})"
    return Choice(Offer(best, bundle, url, channel), "update", message)


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None
