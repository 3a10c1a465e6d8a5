"""A compatible runtime when the backend refuses the one in use (seed 001 §11; issue 22 "Runtime
compatibility"): chosen by the backend's supported range — not the manifest's newest — and installed
from a signed manifest on a loopback server like any update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.release import ReleaseDocument, ReleaseManifest, RuntimeRelease
from desktop.updater.compatible import choose_compatible, incompatibility_from
from desktop.updater.errors import ManifestRejected
from desktop.updater.outcome import UpdateStatus
from desktop.updater.service import UpdateService
from tests.updater.conftest import ServiceFactory
from tests.updater.support import ReleaseSite, build_bundle

URL = "https://releases.example.com/agent-runtime/manifest.json"

# The details of an incompatible CreateSession, as the runtime reports them (seed 000 §3.2 step 4).
REFUSED = {
    "compatibilityStatus": "incompatible",
    "compatibility": {
        "localAgentHostVersion": {"version": "3.0.0", "supported": ">=1.1,<2", "status": "incompatible"},
        "desktopAppVersion": {"version": "1.0", "supported": ">=0.1", "status": "compatible"},
    },
}


def releases(site: ReleaseSite, tmp_path: Path, *specs: tuple[str, dict[str, Any]]) -> list[RuntimeRelease]:
    return [site.release(version, build_bundle(tmp_path, version), **options) for version, options in specs]


def manifest_of(site: ReleaseSite, stable: list[RuntimeRelease]) -> ReleaseManifest:
    return ReleaseDocument.model_validate_json(site.document(stable)).manifest.signed


def test_the_refusal_is_read_from_the_error_details() -> None:
    found = incompatibility_from(REFUSED)
    assert found is not None
    assert (found.runtime_version, found.supported) == ("3.0.0", ">=1.1,<2")
    assert found.fixable
    assert "accepts runtime versions >=1.1,<2" in found.message
    assert incompatibility_from({"compatibilityStatus": "deprecated"}) is None
    assert incompatibility_from({"reason": "revoked"}) is None
    # The desktop app itself refused: no runtime download can help.
    desktop = {
        "compatibilityStatus": "incompatible",
        "compatibility": {
            "localAgentHostVersion": {"version": "1.5", "supported": ">=1", "status": "compatible"},
            "desktopAppVersion": {"version": "0.1", "supported": ">=2", "status": "incompatible"},
        },
    }
    refused_desktop = incompatibility_from(desktop)
    assert refused_desktop is not None
    assert not refused_desktop.fixable
    assert "Install a newer Cowork" in refused_desktop.message


def test_the_highest_release_in_the_backends_range_is_chosen_not_the_newest(
    site: ReleaseSite, tmp_path: Path
) -> None:
    stable = releases(
        site,
        tmp_path,
        ("1.0.5", {}),
        ("1.4.0", {"rollout": 0}),  # a staged rollout does not keep a user from the only runtime that works
        ("1.6.0", {"revoked": True}),
        ("1.7.0", {"min_desktop": "9.0"}),
        ("2.0.0", {}),
        ("3.0.0", {}),
    )
    choice = choose_compatible(
        manifest_of(site, stable),
        supported=">=1.1,<2",
        manifest_url=URL,
        platform="linux-x86_64",
        channel="stable",
        desktop_version="1.0",
    )
    assert choice.offer is not None
    assert choice.offer.version == "1.4.0"
    assert (
        choice.offer.url
        == "https://releases.example.com/agent-runtime/agent-runtime-1.4.0-linux-x86_64.tar.gz"
    )


def test_nothing_in_range_says_what_was_skipped_and_a_bad_range_is_refused(
    site: ReleaseSite, tmp_path: Path
) -> None:
    manifest = manifest_of(site, releases(site, tmp_path, ("1.6.0", {"revoked": True}), ("3.0.0", {})))
    options: dict[str, Any] = {
        "manifest_url": URL,
        "platform": "linux-x86_64",
        "channel": "stable",
        "desktop_version": "1.0",
    }
    none = choose_compatible(manifest, supported=">=1.1,<2", **options)
    marked_bad = choose_compatible(manifest, supported=">=3", bad_versions={"3.0.0"}, **options)
    assert none.offer is None
    assert none.code == "not_offered"
    assert "1.6.0 is withdrawn" in none.message
    assert marked_bad.offer is None
    with pytest.raises(ManifestRejected) as refused:
        choose_compatible(manifest, supported="not a range", **options)
    assert refused.value.code == "malformed"


async def test_installing_a_compatible_runtime_downgrades_from_a_newer_one_in_use(
    site: ReleaseSite, make_service: ServiceFactory, tmp_path: Path
) -> None:
    stable = releases(site, tmp_path, ("1.5.0", {}), ("3.0.0", {}))
    site.publish(stable)
    service: UpdateService = make_service()
    newest = await service.update()
    assert (newest.status, newest.version) == (UpdateStatus.INSTALLED, "3.0.0")

    stages: list[str] = []
    result = await service.install_compatible(
        ">=1.1,<2", lambda progress: stages.append(progress.stage.value)
    )
    active = service.installer.active()
    again = await service.install_compatible(">=1.1,<2")
    nothing = await service.install_compatible(">=5")

    assert (result.status, result.version) == (UpdateStatus.INSTALLED, "1.5.0")
    assert active is not None
    assert active.version == "1.5.0"
    assert stages[0] == "checking"
    assert {"downloading", "installing", "health_check", "activating"} <= set(stages)
    assert again.status is UpdateStatus.UP_TO_DATE
    assert nothing.status is UpdateStatus.NOT_OFFERED
    assert "(>=5)" in nothing.message
