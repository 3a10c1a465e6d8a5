"""The runtime bundle names the dependency lock it was built from: ``cowork-build.json`` in the tree,
with the lock's SHA-256, packed and hashed in the bundle's file list like every other file."""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from contracts.release import BundleFileList
from cowork_release.buildinfo import BUILD_INFO_NAME, DEFAULT_LOCK, read_build_info, write_build_info
from cowork_release.bundle import file_sha256, package
from cowork_release.errors import ReleaseError
from cowork_release.freeze import freeze
from tests.build.support import fake_dist

REPO = Path(__file__).resolve().parents[2]


def test_the_bundle_records_the_release_locks_hash(tmp_path: Path) -> None:
    assert DEFAULT_LOCK == REPO / "requirements" / "release.lock"
    tree = fake_dist(tmp_path)
    write_build_info(tree)
    info = package(tree, runtime_version="1.4.0", platform="linux-x86_64", out_dir=tmp_path / "out")
    with tarfile.open(info.path, "r:gz") as tar:
        listing = tar.extractfile("cowork-files.json")
        member = tar.extractfile(f"agent-runtime/{BUILD_INFO_NAME}")
        assert listing is not None
        assert member is not None
        files = BundleFileList.model_validate_json(listing.read())
        recorded = member.read()
    build = json.loads(recorded)
    assert build["lockFile"] == "requirements/release.lock"
    assert build["lockSha256"] == hashlib.sha256(DEFAULT_LOCK.read_bytes()).hexdigest()
    # Covered by the file list's hashes, hence by the signed manifest's bundle hash.
    assert files.files[BUILD_INFO_NAME].sha256 == hashlib.sha256(recorded).hexdigest()
    assert read_build_info(tree) == build


def test_a_changed_lock_changes_the_recorded_hash(tmp_path: Path) -> None:
    lock = tmp_path / "release.lock"
    lock.write_text("pydantic==2.7.0 --hash=sha256:" + "a" * 64 + "\n")
    first = write_build_info(fake_dist(tmp_path / "one"), lock)
    lock.write_text("pydantic==2.7.1 --hash=sha256:" + "b" * 64 + "\n")
    second = write_build_info(fake_dist(tmp_path / "two"), lock)
    assert first["lockSha256"] != second["lockSha256"] == file_sha256(lock)
    assert first["lockFile"] == "release.lock"


def test_the_build_refuses_to_start_without_its_lock(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match=r"release\.lock is missing"):
        freeze(out=tmp_path / "out", lock=tmp_path / "release.lock")
    assert not (tmp_path / "out").exists()


def test_a_tree_built_before_the_record_existed_has_none(tmp_path: Path) -> None:
    assert read_build_info(fake_dist(tmp_path)) is None
