"""A runtime the backend accepts, when its Session Service says the one in use is incompatible
(seed 001 §11: "If an incompatible agent-runtime version is detected at session start, the Desktop App
is prompted to download a compatible version"; seed 000 §3.2 step 4).

``CreateSession`` then fails with the verdicts in its error's details (``compatibilityStatus:
"incompatible"`` and ``compatibility.localAgentHostVersion.supported``, a PEP 440 specifier such as
``>=2.0,<3``): :func:`incompatibility_from` reads them. :func:`choose_compatible` picks from the signed
manifest the release to install — by the *backend's* range, not merely the newest: the highest
release within the range, even when it is older than the runtime in use (an organisation pinned to an
older backend needs an older runtime), and regardless of the staged rollout (a rollout paces upgrades;
it must not keep a user from the only runtime their backend accepts). Every other check of
:func:`~desktop.updater.manifest.choose_release` still applies: revoked releases and versions marked bad
here are skipped, and the release must have a bundle for this platform, speak this desktop's protocol
and accept this desktop's version. ``UpdateService.install_compatible`` downloads, verifies, unpacks,
health-checks and activates it like any update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from contracts.release import PROTOCOL_VERSION, Channel, Platform, ReleaseManifest, RuntimeRelease
from desktop.i18n import translate
from desktop.updater.errors import ManifestRejected
from desktop.updater.manifest import Choice, Offer

__all__ = ["Incompatibility", "choose_compatible", "incompatibility_from"]

_RUNTIME = "localAgentHostVersion"
_DESKTOP = "desktopAppVersion"


@dataclass(frozen=True, slots=True)
class Incompatibility:
    """What the Session Service said about this client's versions."""

    runtime_version: str
    supported: str
    """The runtime versions the backend accepts (PEP 440), e.g. ``>=2.0,<3``."""
    runtime_incompatible: bool
    desktop_version: str | None = None
    desktop_supported: str | None = None
    desktop_incompatible: bool = False

    @property
    def fixable(self) -> bool:
        """A downloaded runtime can fix it: the runtime is refused and the desktop app is not."""
        return self.runtime_incompatible and not self.desktop_incompatible

    @property
    def refusal(self) -> str:
        """What the backend refused, in one sentence without a full stop."""
        if self.desktop_incompatible:
            return translate(
                "Updates",
                "The backend does not support this version of Cowork ({version}; it accepts {supported})",
            ).format(version=self.desktop_version, supported=self.desktop_supported)
        return translate(
            "Updates",
            "The backend does not support agent runtime {version}; it accepts runtime versions {supported}",
        ).format(version=self.runtime_version, supported=self.supported)

    @property
    def message(self) -> str:
        """The refusal and what to do about it."""
        if self.desktop_incompatible:
            return translate("Updates", "{refusal}. Install a newer Cowork to start sessions.").format(
                refusal=self.refusal
            )
        return translate(
            "Updates", "{refusal}. Download a compatible runtime, and the session starts again with it."
        ).format(refusal=self.refusal)


def incompatibility_from(details: Mapping[str, Any]) -> Incompatibility | None:
    """The verdicts of an incompatible ``CreateSession`` (its error's ``details``); None for any
    other error."""
    if details.get("compatibilityStatus") != "incompatible":
        return None
    verdicts = details.get("compatibility")
    if not isinstance(verdicts, Mapping):
        return None
    runtime, desktop = verdicts.get(_RUNTIME), verdicts.get(_DESKTOP)
    if not isinstance(runtime, Mapping) or not isinstance(runtime.get("supported"), str):
        return None
    desktop = desktop if isinstance(desktop, Mapping) else {}
    return Incompatibility(
        runtime_version=str(runtime.get("version") or "unknown"),
        supported=str(runtime["supported"]),
        runtime_incompatible=runtime.get("status") == "incompatible",
        desktop_version=_text(desktop.get("version")),
        desktop_supported=_text(desktop.get("supported")),
        desktop_incompatible=desktop.get("status") == "incompatible",
    )


def choose_compatible(
    manifest: ReleaseManifest,
    *,
    supported: str,
    manifest_url: str,
    platform: Platform,
    channel: Channel,
    desktop_version: str,
    bad_versions: frozenset[str] | set[str] = frozenset(),
    protocol_version: str = PROTOCOL_VERSION,
) -> Choice:
    """The highest usable release within ``supported`` (code ``compatible``), or why there is none
    (``not_offered``, naming what was skipped). :class:`ManifestRejected` (``malformed``) for a range
    that is not PEP 440 or a bundle URL that is not http(s)."""
    try:
        wanted = SpecifierSet(supported)
    except InvalidSpecifier:
        raise ManifestRejected(
            "malformed", f"The backend's runtime range {supported!r} is not PEP 440"
        ) from None
    desktop = _version(desktop_version) or Version("0")
    channels: tuple[Channel, ...] = ("beta", "stable") if channel == "beta" else ("stable",)
    releases = [release for name in channels for release in manifest.channels.get(name, [])]
    revoked = {r.version() for listed in manifest.channels.values() for r in listed if r.revoked}
    skipped: list[str] = []
    eligible: list[RuntimeRelease] = []
    for release in releases:
        version, text = release.version(), release.runtime_version
        if not wanted.contains(version, prereleases=True):
            continue
        if release.revoked or version in revoked or text in bad_versions:
            skipped.append(f"{text} is withdrawn")
        elif platform not in release.bundles:
            skipped.append(f"{text} has no {platform} bundle")
        elif not release.speaks(protocol_version):
            skipped.append(f"{text} does not speak protocol {protocol_version}")
        elif desktop < Version(release.min_desktop_version):
            skipped.append(f"{text} needs Cowork {release.min_desktop_version} or later")
        else:
            eligible.append(release)
    best = max(eligible, key=RuntimeRelease.version, default=None)
    if best is None:
        why = f" ({'; '.join(skipped)})" if skipped else ""
        return Choice(None, "not_offered", f"No runtime the backend accepts ({supported}) is published{why}")
    bundle = best.bundles[platform]
    url = urljoin(manifest_url, bundle.url)
    if urlsplit(url).scheme not in ("http", "https"):
        raise ManifestRejected("malformed", f"The bundle URL {url} is not http(s)")
    return Choice(
        Offer(best, bundle, url, channel),
        "compatible",
        f"Runtime {best.runtime_version} is the newest the backend accepts ({supported})",
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None
