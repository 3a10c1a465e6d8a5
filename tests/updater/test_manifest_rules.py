"""The updater's manifest rules at their edges: fetching (status, size limit exactly at and one past),
rollback (equal is not older), and the choice of a release (rollout bucket against the percentage,
minimum desktop version met exactly, where the bundle URL may point)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from contracts.release import ReleaseManifest
from desktop.updater.errors import ManifestRejected
from desktop.updater.manifest import Choice, choose_release, fetch_manifest, rollout_bucket, trusted_manifest
from tests.support.release_server import Behaviour, ReleaseServer
from tests.updater.support import ReleaseSite
from tests.updater.test_manifest import MANIFEST_URL, archive, manifest, site  # noqa: F401 (fixtures)
from tests.updater.test_manifest import choose as _choose

INSTALL = "b" * 32


@pytest.fixture
def served(site: ReleaseSite) -> Iterator[ReleaseServer]:  # noqa: F811
    with ReleaseServer(site.directory) as server:
        yield server


async def fetch(url: str, **options: object) -> bytes:
    async with httpx.AsyncClient() as client:
        return await fetch_manifest(client, url, **options)  # type: ignore[arg-type]


async def fetch_refusal(url: str, **options: object) -> ManifestRejected:
    with pytest.raises(ManifestRejected) as caught:
        await fetch(url, **options)
    return caught.value


async def test_a_manifest_of_exactly_the_limit_is_fetched_and_one_byte_more_is_not(
    site: ReleaseSite,  # noqa: F811
    served: ReleaseServer,
) -> None:
    (site.directory / "manifest.json").write_bytes(b"x" * 1000)
    assert await fetch(served.url + "manifest.json", max_bytes=1000) == b"x" * 1000
    error = await fetch_refusal(served.url + "manifest.json", max_bytes=999)
    assert error.code == "too_large"
    assert "larger than 999 bytes" in str(error)


@pytest.mark.parametrize("status", [201, 204, 304, 404, 500])
async def test_any_answer_but_200_is_refused_with_its_status(
    site: ReleaseSite,  # noqa: F811
    served: ReleaseServer,
    status: int,
) -> None:
    (site.directory / "manifest.json").write_bytes(b"{}")
    served.behave("manifest.json", Behaviour(status=status))
    error = await fetch_refusal(served.url + "manifest.json")
    assert error.code == "http_status"
    assert f"answered HTTP {status}" in str(error)


async def test_an_unreachable_site_is_named(site: ReleaseSite) -> None:  # noqa: F811
    with ReleaseServer(site.directory) as server:
        url = server.url + "manifest.json"
    error = await fetch_refusal(url, timeout=5.0)
    assert error.code == "unreachable"
    assert url in str(error)


# ---------------------------------------------------------------- trust


def test_a_manifest_of_the_version_last_trusted_is_not_a_rollback_and_one_less_is(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    raw = site.document([site.release("1.1.0", archive)], manifest_version=5)
    now = datetime.now(UTC)
    assert trusted_manifest(raw, site.roots, now=now, last_trusted_version=None).manifest_version == 5
    assert trusted_manifest(raw, site.roots, now=now, last_trusted_version=5).manifest_version == 5
    with pytest.raises(ManifestRejected) as caught:
        trusted_manifest(raw, site.roots, now=now, last_trusted_version=6)
    assert caught.value.code == "rollback"
    assert "version 5, older than version 6" in str(caught.value)


def test_an_unsigned_manifest_keeps_the_contracts_code(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    raw = site.document([site.release("1.1.0", archive)], unsigned=True)
    with pytest.raises(ManifestRejected) as caught:
        trusted_manifest(raw, site.roots, now=datetime.now(UTC), last_trusted_version=None)
    assert caught.value.code == "bad_signature"


# ---------------------------------------------------------------- choosing


def choose(document: ReleaseManifest, **options: object) -> Choice:
    choice = _choose(document, **options)
    assert isinstance(choice, Choice)
    return choice


def offered(choice: Choice) -> str | None:
    return choice.offer.version if choice.offer else None


def test_the_rollout_admits_an_install_whose_bucket_is_below_the_percentage(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    bucket = rollout_bucket(INSTALL, "1.1.0")
    at = manifest([site.release("1.1.0", archive, rollout=bucket)])
    above = manifest([site.release("1.1.0", archive, rollout=bucket + 1)])
    assert offered(choose(at, install_id=INSTALL)) is None
    assert f"rolling out to {bucket}% of installs, not this one yet" in choose(at, install_id=INSTALL).message
    assert offered(choose(above, install_id=INSTALL)) == "1.1.0"


def test_the_bucket_is_a_percentage_from_the_install_and_the_version() -> None:
    buckets = {rollout_bucket(f"{i:032x}", "2.0.0") for i in range(2000)}
    assert buckets == set(range(100))
    assert rollout_bucket(INSTALL, "1.1.0") != rollout_bucket(INSTALL, "1.1.1") or rollout_bucket(
        "c" * 32, "1.1.0"
    ) != rollout_bucket("c" * 32, "1.1.1")


def test_a_desktop_of_exactly_the_minimum_version_is_offered_the_release(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    document = manifest([site.release("1.1.0", archive, min_desktop="2.0")])
    assert offered(choose(document, desktop_version="2.0")) == "1.1.0"
    assert offered(choose(document, desktop_version="2.0.0")) == "1.1.0"
    assert offered(choose(document, desktop_version="1.99")) is None
    # A desktop whose version cannot be read meets no minimum but the lowest.
    assert offered(choose(document, desktop_version="dev build")) is None
    assert (
        offered(choose(manifest([site.release("1.1.0", archive, min_desktop="0")]), desktop_version="dev"))
        == "1.1.0"
    )


def test_without_a_runtime_in_use_the_newest_release_is_offered(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    document = manifest([site.release("0.9.0", archive), site.release("0.8.0", archive)])
    for installed in (None, "", "not a version"):
        choice = choose(document, installed_version=installed)
        assert offered(choice) == "0.9.0"
    assert choose(document, installed_version=None).message == "Runtime 0.9.0 is available (in use: bundled)"


def test_the_newest_release_equal_to_the_installed_one_is_up_to_date_not_a_downgrade(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    choice = choose(manifest([site.release("1.0.0", archive), site.release("0.9.0", archive)]))
    assert (offered(choice), choice.code) == (None, "up_to_date")
    assert choice.message == "Runtime 1.0.0 is the newest offered"


def test_only_newer_releases_explain_why_nothing_is_offered(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    document = manifest(
        [
            site.release("1.0.0", archive),
            site.release("0.9.0", archive, rollout=0),
            site.release("1.2.0", archive, min_desktop="9"),
        ]
    )
    choice = choose(document)
    assert choice.code == "not_offered"
    assert "1.2.0 needs Cowork 9 or later" in choice.message
    assert "0.9.0" not in choice.message
    # With nothing newer held back, the same runtime is simply up to date.
    assert (
        choose(manifest([site.release("1.0.0", archive), site.release("0.9.0", archive, rollout=0)])).code
        == "up_to_date"
    )


def test_a_release_marked_bad_here_is_skipped_but_others_of_its_channel_are_not(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    document = manifest([site.release("1.2.0", archive), site.release("1.1.0", archive)])
    assert offered(choose(document, bad_versions=frozenset({"1.2.0"}))) == "1.1.0"
    assert offered(choose(document, bad_versions={"1.1.0"})) == "1.2.0"


def test_a_revoked_runtime_in_use_is_reported_even_on_the_stable_channel_when_revoked_on_beta(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
) -> None:
    document = manifest([site.release("1.1.0", archive)], beta=[site.release("1.0.0", archive, revoked=True)])
    choice = choose(document)
    assert (offered(choice), choice.code) == (None, "installed_revoked")
    assert choice.message == "Runtime 1.0.0 in use has been revoked"


@pytest.mark.parametrize(
    ("manifest_url", "bundle_url", "expected"),
    [
        (MANIFEST_URL, "b.tar.gz", "https://releases.example.test/agent-runtime/b.tar.gz"),
        (MANIFEST_URL, "/other/b.tar.gz", "https://releases.example.test/other/b.tar.gz"),
        (MANIFEST_URL, "http://mirror.test/b.tar.gz", "http://mirror.test/b.tar.gz"),
    ],
)
def test_the_bundle_url_is_resolved_against_the_manifest(
    site: ReleaseSite,  # noqa: F811
    archive: Path,  # noqa: F811
    manifest_url: str,
    bundle_url: str,
    expected: str,
) -> None:
    release = site.release("1.1.0", archive)
    bundle = release.bundles["linux-x86_64"].model_copy(update={"url": bundle_url})
    release = release.model_copy(update={"bundles": {"linux-x86_64": bundle}})
    choice = choose(manifest([release]), manifest_url=manifest_url)
    assert choice.offer is not None
    assert choice.offer.url == expected
    assert choice.offer.channel == "stable"
    assert choice.code == "update"
    assert choice.message == "Runtime 1.1.0 is available (in use: 1.0.0)"


def test_a_bundle_that_would_resolve_to_a_local_file_is_refused(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    with pytest.raises(ManifestRejected) as caught:
        choose(manifest([site.release("1.1.0", archive)]), manifest_url="file:///srv/releases/manifest.json")
    assert caught.value.code == "malformed"
    assert "is not http(s)" in str(caught.value)


def test_an_empty_channel_offers_nothing(site: ReleaseSite) -> None:  # noqa: F811
    empty = ReleaseManifest(manifest_version=1, expires_at=datetime.now(UTC), channels={})
    assert (
        choose_release(
            empty,
            manifest_url=MANIFEST_URL,
            platform="linux-x86_64",
            channel="beta",
            installed_version="1.0.0",
            desktop_version="1.0",
            install_id=INSTALL,
        ).code
        == "up_to_date"
    )


def test_the_bucket_is_the_first_eight_bytes_of_the_sha256_modulo_100() -> None:
    # Fixed vectors: a published rollout must sample the same installs on every desktop version.
    digest = hashlib.sha256(b"install-1:2.0.0").digest()
    assert rollout_bucket("install-1", "2.0.0") == int.from_bytes(digest[:8], "big") % 100
    assert [rollout_bucket(f"install-{i}", "2.0.0") for i in range(5)] == [
        int.from_bytes(hashlib.sha256(f"install-{i}:2.0.0".encode()).digest()[:8], "big") % 100
        for i in range(5)
    ]


def test_beta_is_offered_a_newer_stable_release(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    document = manifest([site.release("1.3.0", archive)], beta=[site.release("1.2.0b1", archive)])
    assert offered(choose(document, channel="beta")) == "1.3.0"


def test_a_held_back_release_of_the_installed_version_is_not_news(site: ReleaseSite, archive: Path) -> None:  # noqa: F811
    choice = choose(manifest([site.release("1.0.0", archive, rollout=0)]))
    assert choice.code == "up_to_date"
    two = manifest(
        [site.release("1.1.0", archive, min_desktop="9"), site.release("1.2.0", archive, rollout=0)]
    )
    assert choose(two).message == (
        "A newer runtime is not for this install: 1.1.0 needs Cowork 9 or later; "
        "1.2.0 is rolling out to 0% of installs, not this one yet"
    )
