"""Safe extraction: hostile archives are refused before anything lands outside staging, and the tree
must match its inner file list exactly."""

from __future__ import annotations

import json
import os
import stat
import tarfile
from pathlib import Path

import pytest

from desktop.updater.errors import BundleRejected
from desktop.updater.extract import ExtractLimits, check_member_name, extract_bundle, verify_tree
from tests.updater.support import PROGRAM, bundle_members, file_list, member, tree_files, write_tar

VERSION = "1.2.0"


def extract(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], **options: object) -> Path:
    archive = write_tar(tmp_path / "bundle.tar.gz", members)
    staging = tmp_path / "staging"
    settings: dict[str, object] = {"runtime_version": VERSION, "platform": "linux-x86_64"}
    settings.update(options)
    extract_bundle(archive, staging, **settings)  # type: ignore[arg-type]
    return staging


def refused(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], **options: object
) -> BundleRejected:
    with pytest.raises(BundleRejected) as caught:
        extract(tmp_path, members, **options)
    assert not (tmp_path / "staging").exists(), "a refused bundle leaves no staging behind"
    return caught.value


def good_members() -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return bundle_members(VERSION, tree_files(VERSION))


def test_a_good_bundle_is_unpacked_with_the_modes_of_its_file_list(tmp_path: Path) -> None:
    staging = extract(tmp_path, good_members())
    program = staging / "agent-runtime" / PROGRAM
    assert stat.S_IMODE(program.stat().st_mode) == 0o755
    assert stat.S_IMODE((staging / "agent-runtime/_internal/VERSION").stat().st_mode) == 0o644
    assert (staging / "agent-runtime/_internal/VERSION").read_text() == VERSION
    assert json.loads((staging / "cowork-files.json").read_bytes())["runtimeVersion"] == VERSION
    assert verify_tree(staging).runtime_version == VERSION


def test_the_file_list_may_come_last(tmp_path: Path) -> None:
    members = good_members()
    staging = extract(tmp_path, [*members[1:], members[0]])
    assert (staging / "agent-runtime" / PROGRAM).is_file()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("agent-runtime/../../evil.sh", "'..'"),
        ("../evil.sh", "'..'"),
        ("/etc/evil.sh", "absolute path"),
        ("C:/Windows/evil.exe", "absolute path"),
        ("agent-runtime/a\\..\\..\\evil", "backslash"),
        ("agent-runtime/./x", "'.' component"),
        ("agent-runtime//x", "empty"),
        ("agent-runtime/x ", "dot or space"),
        ("agent-runtime/ads:stream", "colon"),
        ("evil.sh", "outside agent-runtime/"),
        ("other/evil.sh", "outside agent-runtime/"),
    ],
)
def test_unsafe_member_names_are_refused(tmp_path: Path, name: str, why: str) -> None:
    error = refused(tmp_path, [*good_members(), member(name, b"#!/bin/sh\n")])
    assert error.code == "unsafe_member"
    assert why in str(error)
    assert not (tmp_path.parent / "evil.sh").exists()


@pytest.mark.parametrize(
    ("kind", "link", "what"),
    [
        (tarfile.SYMTYPE, "../../../../etc/passwd", "symbolic link"),
        (tarfile.SYMTYPE, "/etc/passwd", "symbolic link"),
        (tarfile.SYMTYPE, "_internal/VERSION", "symbolic link"),  # even one inside the tree
        (tarfile.LNKTYPE, "/etc/passwd", "hard link"),
        (tarfile.LNKTYPE, "agent-runtime/_internal/VERSION", "hard link"),
        (tarfile.CHRTYPE, "", "device file"),
        (tarfile.BLKTYPE, "", "device file"),
        (tarfile.FIFOTYPE, "", "FIFO"),
    ],
)
def test_links_devices_and_fifos_are_refused(tmp_path: Path, kind: bytes, link: str, what: str) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/odd", kind=kind, link=link)])
    assert error.code == "unsafe_member"
    assert what in str(error)


def test_a_link_followed_by_a_file_written_through_it_never_escapes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    members = [
        member("agent-runtime/lib", kind=tarfile.SYMTYPE, link=str(outside)),
        member("agent-runtime/lib/payload", b"owned"),
    ]
    refused(tmp_path, [*good_members(), *members])
    assert list(outside.iterdir()) == []


def test_a_member_given_twice_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/_internal/VERSION", b"9.9.9")])
    assert "second copy" in str(error)


def test_names_differing_only_in_case_are_one_name_on_macos(tmp_path: Path) -> None:
    files = tree_files(VERSION, extra={"Lib.py": b"a", "lib.py": b"b"})
    members = bundle_members(VERSION, files, "darwin-arm64")
    assert "second copy" in str(refused(tmp_path, members, platform="darwin-arm64"))
    # ...but two files on Linux, where they are.
    (tmp_path / "linux").mkdir()
    staging = extract(tmp_path / "linux", bundle_members(VERSION, files))
    assert (staging / "agent-runtime/Lib.py").read_text() == "a"


def test_windows_device_names_are_refused_in_a_windows_bundle(tmp_path: Path) -> None:
    files = tree_files(VERSION, extra={"aux.py": b"x"})
    error = refused(tmp_path, bundle_members(VERSION, files, "windows-x64"), platform="windows-x64")
    assert "Windows device name" in str(error)


def test_a_file_missing_from_the_archive_is_refused(tmp_path: Path) -> None:
    members = [m for m in good_members() if not m[0].name.endswith("module.py")]
    error = refused(tmp_path, members)
    assert error.code == "file_list"
    assert "lacks 1 listed file" in str(error)


def test_a_file_missing_from_the_list_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/extra.so", b"\x7fELF")])
    assert error.code == "file_list"
    assert "unlisted" in str(error)
    assert "extra.so" in str(error)


def test_a_file_whose_content_differs_from_the_list_is_refused(tmp_path: Path) -> None:
    members = [
        member(info.name, b"tampered") if info.name.endswith("VERSION") else (info, data)
        for info, data in good_members()
    ]
    error = refused(tmp_path, members)
    assert error.code == "file_list"
    assert "VERSION does not match" in str(error)


def test_a_bundle_of_another_version_or_platform_is_refused(tmp_path: Path) -> None:
    assert "promised" in str(refused(tmp_path, good_members(), runtime_version="1.3.0"))
    (tmp_path / "bundle.tar.gz").unlink()
    assert "darwin-arm64" in str(refused(tmp_path, good_members(), platform="darwin-arm64"))


def test_a_bundle_without_a_file_list_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, good_members()[1:])
    assert error.code == "not_a_bundle"


def test_an_invalid_file_list_is_refused_naming_the_field(tmp_path: Path) -> None:
    document = json.loads(file_list(VERSION, tree_files(VERSION)))
    document["files"][PROGRAM]["mode"] = 0o4755
    members = [member("cowork-files.json", json.dumps(document).encode()), *good_members()[1:]]
    error = refused(tmp_path, members)
    assert error.code == "file_list"
    assert "mode" in str(error)


def test_garbage_is_not_a_bundle(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar.gz"
    archive.write_bytes(os.urandom(4096))
    with pytest.raises(BundleRejected) as caught:
        extract_bundle(archive, tmp_path / "staging", runtime_version=VERSION, platform="linux-x86_64")
    assert caught.value.code == "not_a_bundle"
    assert not (tmp_path / "staging").exists()


def test_member_count_and_unpacked_size_are_bounded(tmp_path: Path) -> None:
    error = refused(tmp_path, good_members(), limits=ExtractLimits(max_members=3))
    assert "more than 3 members" in str(error)
    (tmp_path / "bundle.tar.gz").unlink()
    error = refused(tmp_path, good_members(), limits=ExtractLimits(max_total_bytes=100))
    assert "more than 100 bytes" in str(error)


def test_a_name_used_for_a_file_and_a_directory_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/_internal/VERSION/x", b"")])
    assert error.code == "unsafe_member"


def test_member_names_are_checked_alone_too() -> None:
    assert check_member_name("agent-runtime/a/b.py") == ("agent-runtime", "a", "b.py")
    with pytest.raises(BundleRejected):
        check_member_name("agent-runtime/CON.txt", windows=True)
    assert check_member_name("agent-runtime/CON.txt") == ("agent-runtime", "CON.txt")


def test_verify_tree_finds_a_changed_an_added_or_a_linked_file(tmp_path: Path) -> None:
    staging = extract(tmp_path, good_members())
    extra = staging / "agent-runtime" / "added"
    extra.write_text("x")
    with pytest.raises(BundleRejected):
        verify_tree(staging)
    extra.unlink()
    extra.symlink_to("/etc/passwd")
    with pytest.raises(BundleRejected):
        verify_tree(staging)
    extra.unlink()
    (staging / "agent-runtime/_internal/VERSION").chmod(0o644)
    (staging / "agent-runtime/_internal/VERSION").write_text("9.9.9")
    with pytest.raises(BundleRejected):
        verify_tree(staging)
