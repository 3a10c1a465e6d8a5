"""Choosing a release: channel, platform, compatibility, rollout, revocation, never a downgrade; and the
manifest's own trust (signatures, expiry, rollback)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contracts.release import Channel, ReleaseManifest, RuntimeRelease
from desktop.updater.errors import ManifestRejected
from desktop.updater.manifest import choose_release, rollout_bucket, trusted_manifest
from tests.updater.support import ReleaseSite, build_bundle

MANIFEST_URL = "https://releases.example.test/agent-runtime/manifest.json"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("bundle"), "1.0.0")


@pytest.fixture
def site(tmp_path: Path) -> ReleaseSite:
    return ReleaseSite(tmp_path / "site")


def manifest(stable: list[RuntimeRelease], beta: list[RuntimeRelease] | None = None) -> ReleaseManifest:
    channels: dict[Channel, list[RuntimeRelease]] = {"stable": stable}
    if beta is not None:
        channels["beta"] = beta
    return ReleaseManifest(
        manifest_version=1, expires_at=datetime.now(UTC) + timedelta(days=1), channels=channels
    )


def choose(document: ReleaseManifest, **options: object) -> object:
    settings: dict[str, object] = {
        "manifest_url": MANIFEST_URL,
        "platform": "linux-x86_64",
        "channel": "stable",
        "installed_version": "1.0.0",
        "desktop_version": "1.0",
        "install_id": "a" * 32,
    }
    settings.update(options)
    return choose_release(document, **settings)  # type: ignore[arg-type]


def test_the_highest_eligible_release_is_offered_with_its_url_resolved(
    site: ReleaseSite, archive: Path
) -> None:
    document = manifest(
        [site.release("1.1.0", archive), site.release("1.3.0", archive), site.release("1.2.0", archive)]
    )
    choice = choose(document)
    assert choice.offer is not None
    assert choice.offer.version == "1.3.0"
    assert choice.offer.url == "https://releases.example.test/agent-runtime/" + archive.name  # type: ignore[attr-defined]


def test_the_installed_version_is_up_to_date(site: ReleaseSite, archive: Path) -> None:
    choice = choose(manifest([site.release("1.0.0", archive)]))
    assert (choice.offer, choice.code) == (None, "up_to_date")  # type: ignore[attr-defined]


def test_an_older_runtime_than_the_installed_one_is_refused(site: ReleaseSite, archive: Path) -> None:
    with pytest.raises(ManifestRejected) as caught:
        choose(manifest([site.release("0.9.0", archive)]))
    assert caught.value.code == "older_runtime"
    assert "not downgrading" in str(caught.value)


def test_revoked_releases_and_versions_marked_bad_are_skipped(site: ReleaseSite, archive: Path) -> None:
    document = manifest(
        [
            site.release("1.3.0", archive, revoked=True),
            site.release("1.2.0", archive),
            site.release("1.1.0", archive),
        ]
    )
    choice = choose(document, bad_versions={"1.2.0"})
    assert choice.offer.version == "1.1.0"  # type: ignore[attr-defined]


def test_a_release_revoked_on_any_channel_is_revoked_on_all(site: ReleaseSite, archive: Path) -> None:
    document = manifest([site.release("1.2.0", archive)], beta=[site.release("1.2.0", archive, revoked=True)])
    assert choose(document).offer is None  # type: ignore[attr-defined]


def test_the_runtime_in_use_being_revoked_is_reported_first(site: ReleaseSite, archive: Path) -> None:
    document = manifest([site.release("1.0.0", archive, revoked=True), site.release("1.1.0", archive)])
    assert choose(document).code == "installed_revoked"  # type: ignore[attr-defined]


def test_beta_sees_beta_and_stable_and_stable_sees_only_stable(site: ReleaseSite, archive: Path) -> None:
    document = manifest([site.release("1.1.0", archive)], beta=[site.release("1.2.0b1", archive)])
    assert choose(document).offer.version == "1.1.0"  # type: ignore[attr-defined]
    assert choose(document, channel="beta").offer.version == "1.2.0b1"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("release_options", "desktop", "reason"),
    [
        ({"protocols": ">=2.0,<3"}, "1.0", "speaks protocol >=2.0,<3, not 1.0"),
        ({"min_desktop": "2.0"}, "1.9.9", "needs Cowork 2.0 or later"),
        ({"rollout": 0}, "1.0", "rolling out to 0%"),
    ],
)
def test_incompatible_or_not_yet_rolled_out_releases_are_not_offered(
    site: ReleaseSite, archive: Path, release_options: dict[str, object], desktop: str, reason: str
) -> None:
    document = manifest([site.release("1.1.0", archive, **release_options)])  # type: ignore[arg-type]
    choice = choose(document, desktop_version=desktop)
    assert (choice.offer, choice.code) == (None, "not_offered")  # type: ignore[attr-defined]
    assert reason in choice.message  # type: ignore[attr-defined]


def test_a_release_without_a_bundle_for_this_platform_is_not_offered(
    site: ReleaseSite, archive: Path
) -> None:
    choice = choose(manifest([site.release("1.1.0", archive)]), platform="darwin-arm64")
    assert "no darwin-arm64 bundle" in choice.message  # type: ignore[attr-defined]


def test_the_rollout_bucket_is_stable_and_spreads_installs_evenly() -> None:
    assert rollout_bucket("a" * 32, "1.1.0") == rollout_bucket("a" * 32, "1.1.0")
    buckets = [rollout_bucket(f"{i:032x}", "1.1.0") for i in range(10_000)]
    share = sum(bucket < 25 for bucket in buckets) / len(buckets)
    assert 0.23 < share < 0.27
    # Each release samples a different set of installs.
    assert [rollout_bucket(f"{i:032x}", "1.2.0") for i in range(100)] != buckets[:100]


def test_raising_the_rollout_only_adds_installs(site: ReleaseSite, archive: Path) -> None:
    offered = {
        percent: {
            i
            for i in range(400)
            if choose(
                manifest([site.release("1.1.0", archive, rollout=percent)]), install_id=f"{i:032x}"
            ).offer
        }  # type: ignore[attr-defined]
        for percent in (10, 50, 100)
    }
    assert offered[10] < offered[50] < offered[100] == set(range(400))


def test_a_manifest_older_than_the_last_trusted_one_is_a_rollback(site: ReleaseSite, archive: Path) -> None:
    raw = site.document([site.release("1.1.0", archive)], manifest_version=4)
    assert (
        trusted_manifest(raw, site.roots, now=datetime.now(UTC), last_trusted_version=4).manifest_version == 4
    )
    with pytest.raises(ManifestRejected) as caught:
        trusted_manifest(raw, site.roots, now=datetime.now(UTC), last_trusted_version=5)
    assert caught.value.code == "rollback"
    assert "older than version 5" in str(caught.value)


def test_verification_failures_keep_their_contract_code(site: ReleaseSite, archive: Path) -> None:
    raw = site.document([site.release("1.1.0", archive)], expires_in=timedelta(days=1))
    with pytest.raises(ManifestRejected) as caught:
        trusted_manifest(
            raw, site.roots, now=datetime.now(UTC) + timedelta(days=2), last_trusted_version=None
        )
    assert caught.value.code == "manifest_expired"
    assert str(caught.value).startswith("The release manifest is not trusted:")
