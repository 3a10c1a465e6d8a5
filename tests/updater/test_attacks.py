"""Attacks on the update path, through the whole service on loopback. Each is refused with a clear
message, and the runtime installed before (1.1.0) stays active and still starts and answers."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.release import bundle_file_name
from contracts.signing import key_id
from desktop.updater.active import active_runtime
from desktop.updater.health import check_health
from desktop.updater.service import UpdateResult, UpdateStatus
from tests.support.release_server import Behaviour, ReleaseServer
from tests.updater.conftest import ServiceFactory
from tests.updater.support import (
    CRASHING_LAUNCHER,
    HANGING_LAUNCHER,
    PLATFORM,
    ReleaseSite,
    build_bundle,
    bundle_members,
    member,
    tree_files,
    write_tar,
)

NEW = "1.2.0"


@pytest.fixture
async def installed(site: ReleaseSite, make_service: ServiceFactory, root: Path, bundled: Path) -> Path:
    """Runtime 1.1.0 installed and active, from manifest version 5."""
    archive = build_bundle(site.directory, "1.1.0")
    site.publish([site.release("1.1.0", archive)], manifest_version=5)
    result = await make_service().update()
    assert result.status is UpdateStatus.INSTALLED, result.message
    return root


async def assert_previous_runtime_active(root: Path, bundled: Path) -> None:
    active = active_runtime(root, bundled=bundled)
    assert (active.version, active.source) == ("1.1.0", "installed")
    await check_health(active.executable, timeout=15)


def refused(
    result: UpdateResult, code: str, *words: str, status: UpdateStatus = UpdateStatus.REJECTED
) -> None:
    assert (result.status, result.code) == (status, code), result
    for word in words:
        assert word in result.message, result.message


# ---------------------------------------------------------------- the manifest


async def test_a_tampered_bundle_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    release = site.release(NEW, archive)
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    site.publish([release], manifest_version=6)

    refused(await make_service().update(), "hash_mismatch", "does not match the signed manifest")
    await assert_previous_runtime_active(installed, bundled)
    assert not list((installed / "updater" / "downloads").iterdir())


async def test_a_bundle_of_the_wrong_size_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive, size=archive.stat().st_size + 100)], manifest_version=6)
    refused(await make_service().update(), "wrong_size", "signed manifest")
    await assert_previous_runtime_active(installed, bundled)


async def test_an_unsigned_manifest_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=6, unsigned=True)
    refused(await make_service().update(), "bad_signature", "not signed")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_manifest_changed_after_signing_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    honest = build_bundle(site.directory, NEW)
    raw = site.document([site.release(NEW, honest)], manifest_version=6)
    (site.directory / "evil").mkdir()
    evil = build_bundle(site.directory / "evil", NEW, launcher=CRASHING_LAUNCHER)
    document = json.loads(raw)
    bundle = document["manifest"]["signed"]["channels"]["stable"][0]["bundles"][PLATFORM]
    bundle["url"] = "evil/" + evil.name
    bundle["sha256"] = hashlib.sha256(evil.read_bytes()).hexdigest()
    bundle["size"] = evil.stat().st_size
    (site.directory / "manifest.json").write_text(json.dumps(document))

    refused(await make_service().update(), "bad_signature", "does not match")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_manifest_signed_by_a_key_the_roots_never_delegated_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish(
        [site.release(NEW, archive)], manifest_version=6, manifest_signer=Ed25519PrivateKey.generate()
    )
    refused(await make_service().update(), "unknown_key", "not a delegated release key")
    await assert_previous_runtime_active(installed, bundled)


@pytest.mark.parametrize("signers", ["one root", "foreign roots"])
async def test_a_delegation_without_a_threshold_of_pinned_roots_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path, signers: str
) -> None:
    archive = build_bundle(site.directory, NEW)
    keys = (
        site.root_private[:1] if signers == "one root" else [Ed25519PrivateKey.generate() for _ in range(3)]
    )
    site.publish([site.release(NEW, archive)], manifest_version=6, root_signers=keys)
    refused(await make_service().update(), "delegation_untrusted", "2 are required")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_manifest_signed_by_a_revoked_key_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.revoked_keys = [key_id(site.release_key.public_key())]
    site.publish([site.release(NEW, archive)], manifest_version=6)
    refused(await make_service().update(), "revoked_key", "revoked")
    await assert_previous_runtime_active(installed, bundled)


async def test_an_expired_manifest_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=6, expires_in=timedelta(seconds=-1))
    refused(await make_service().update(), "manifest_expired", "expired")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_rollback_to_an_older_manifest_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=4)
    refused(await make_service().update(), "rollback", "older than version 5")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_rollback_to_an_older_runtime_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, "1.0.5")
    site.publish([site.release("1.0.5", archive)], manifest_version=6)
    refused(await make_service().update(), "older_runtime", "not downgrading")
    await assert_previous_runtime_active(installed, bundled)


async def test_an_oversized_or_unreadable_manifest_is_refused(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    (site.directory / "manifest.json").write_bytes(b"{" * (5 << 20))
    refused(await make_service().update(), "too_large", "larger than")
    (site.directory / "manifest.json").write_bytes(b"<html>not json</html>")
    refused(await make_service().update(), "malformed", "not valid JSON")
    (site.directory / "manifest.json").unlink()
    refused(await make_service().update(), "http_status", "HTTP 404", status=UpdateStatus.FAILED)
    await assert_previous_runtime_active(installed, bundled)


# ---------------------------------------------------------------- the download


async def test_an_endless_body_is_refused(
    installed: Path, site: ReleaseSite, server: ReleaseServer, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=6)
    server.behave(archive.name, Behaviour(endless=True))
    refused(await make_service().update(), "wrong_size", "more than")
    await assert_previous_runtime_active(installed, bundled)


async def test_a_stalled_server_times_out(
    installed: Path, site: ReleaseSite, server: ReleaseServer, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=6)
    server.behave(archive.name, Behaviour(stall_after=100))
    refused(await make_service().update(), "stalled", "sent nothing for 1 s", status=UpdateStatus.FAILED)
    await assert_previous_runtime_active(installed, bundled)


async def test_an_interrupted_download_resumes_at_the_next_check(
    installed: Path, site: ReleaseSite, server: ReleaseServer, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW, extra={"_internal/data.bin": os.urandom(300_000)})
    site.publish([site.release(NEW, archive)], manifest_version=6)
    server.behave(archive.name, Behaviour(drop_after=100_000, drop_times=1))

    refused(await make_service().update(), "interrupted", "resume", status=UpdateStatus.FAILED)
    await assert_previous_runtime_active(installed, bundled)

    result = await make_service().update()
    assert result.status is UpdateStatus.INSTALLED, result.message
    assert server.requests[-1] == (archive.name, "bytes=100000-")
    assert active_runtime(installed, bundled=bundled).version == NEW


# ---------------------------------------------------------------- the archive (validly signed)


def publish_archive(site: ReleaseSite, extra: list[tuple[tarfile.TarInfo, bytes | None]]) -> None:
    members = [*bundle_members(NEW, tree_files(NEW)), *extra]
    archive = write_tar(site.directory / bundle_file_name(NEW, PLATFORM), members)
    site.publish([site.release(NEW, archive)], manifest_version=6)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (member("agent-runtime/../../../escaped.sh", b"#!/bin/sh\n"), "'..'"),
        (member("/tmp/cowork-escaped.sh", b"#!/bin/sh\n"), "absolute path"),
        (member("agent-runtime/lib", kind=tarfile.SYMTYPE, link="../../../../../../etc"), "symbolic link"),
        (member("agent-runtime/tty", kind=tarfile.CHRTYPE), "device file"),
    ],
    ids=["dot-dot", "absolute", "escaping-symlink", "device"],
)
async def test_an_archive_that_would_escape_or_plant_specials_is_refused_and_never_retried(
    installed: Path,
    site: ReleaseSite,
    server: ReleaseServer,
    make_service: ServiceFactory,
    bundled: Path,
    tmp_path: Path,
    extra: tuple[tarfile.TarInfo, bytes | None],
    words: str,
) -> None:
    publish_archive(site, [extra])
    refused(await make_service().update(), "unsafe_member", words)
    await assert_previous_runtime_active(installed, bundled)
    assert not Path("/tmp/cowork-escaped.sh").exists()
    assert not list(tmp_path.rglob("escaped.sh"))
    assert not (installed / "versions" / NEW).exists()
    assert list((installed / "updater" / "staging").iterdir()) == []
    # Its hash is the publisher's: the release is broken, and is not downloaded again.
    requests = len(server.requests)
    again = await make_service().update()
    assert again.status is UpdateStatus.UP_TO_DATE, again
    assert [name for name, _ in server.requests[requests:]] == ["manifest.json"]


# ---------------------------------------------------------------- the new runtime


@pytest.mark.parametrize(
    ("launcher", "code", "words"),
    [
        (CRASHING_LAUNCHER, "bad_answer", "cannot load its modules"),
        (HANGING_LAUNCHER, "timeout", "within 1 s"),
    ],
    ids=["crashes", "hangs"],
)
async def test_a_runtime_that_fails_its_health_check_is_marked_bad_and_never_retried(
    installed: Path,
    site: ReleaseSite,
    server: ReleaseServer,
    make_service: ServiceFactory,
    bundled: Path,
    launcher: str,
    code: str,
    words: str,
) -> None:
    archive = build_bundle(site.directory, NEW, launcher=launcher)
    site.publish([site.release(NEW, archive)], manifest_version=6)

    result = await make_service(health_timeout=1.0).update()
    refused(result, code, words)
    assert result.version == NEW

    await assert_previous_runtime_active(installed, bundled)
    assert not (installed / "versions" / NEW).exists()
    requests = len(server.requests)
    again = await make_service().update()
    assert again.status is UpdateStatus.UP_TO_DATE, again
    assert len(server.requests) == requests + 1  # the manifest only


# ---------------------------------------------------------------- revocation


async def test_a_revoked_runtime_in_use_is_taken_out_of_service(
    installed: Path, site: ReleaseSite, make_service: ServiceFactory, bundled: Path
) -> None:
    archive = build_bundle(site.directory, NEW)
    site.publish([site.release(NEW, archive)], manifest_version=6)
    assert (await make_service().update()).status is UpdateStatus.INSTALLED
    site.publish(
        [
            site.release("1.1.0", site.directory / "agent-runtime-1.1.0-linux-x86_64.tar.gz"),
            site.release(NEW, archive, revoked=True),
        ],
        manifest_version=7,
    )

    result = await make_service().update()

    assert (result.status, result.code, result.version) == (UpdateStatus.ROLLED_BACK, "revoked", NEW)
    assert "new sessions use 1.1.0" in result.message
    await assert_previous_runtime_active(installed, bundled)


async def test_a_revoked_bundled_runtime_is_replaced_even_by_an_older_release(
    site: ReleaseSite, make_service: ServiceFactory, root: Path, bundled: Path
) -> None:
    older = build_bundle(site.directory, "0.9.0")
    site.publish(
        [site.release("1.0.0", older, revoked=True), site.release("0.9.0", older)], manifest_version=1
    )
    result = await make_service().update()
    assert result.status is UpdateStatus.INSTALLED, result.message
    assert active_runtime(root, bundled=bundled).version == "0.9.0"
