"""The extractor's rules one by one, each refusal asserted by its code and reason.

Expected behaviour comes from the platforms: what Windows reserves (device names with or without an
extension, in any letter case; ``< > : " | ? *``, control characters, trailing dots and spaces), what a
POSIX tree must not hold for an installation to be trusted (links, special files), and the limits
the updater promises to stop at — a limit is a maximum, so a bundle exactly at it is accepted.
"""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path

import pytest

from desktop.updater.errors import BundleRejected
from desktop.updater.extract import ExtractLimits, check_member_name, extract_bundle, verify_tree
from tests.updater.support import PROGRAM, bundle_members, file_list, member, tree_files, write_tar
from tests.updater.test_extract import VERSION, extract, good_members, refused


def unsafe(name: str, *, windows: bool = False) -> str:
    """Why ``name`` is refused: the reason in "The bundle contains NAME, with REASON; refused"."""
    with pytest.raises(BundleRejected) as caught:
        check_member_name(name, windows=windows)
    assert caught.value.code == "unsafe_member"
    return reason(caught.value)


def reason(error: BundleRejected) -> str:
    message = str(error)
    assert message.startswith("The bundle contains "), message
    assert message.endswith("; refused"), message
    return message.split(", with ", 1)[1].removesuffix("; refused")


DEVICE = "a Windows device name"
CHARACTER = "a backslash, colon, control or other character Windows forbids"
DOT_OR_SPACE = "a component ending in a dot or space"
EMPTY_OR_DOT = "an empty or '.' component"
ABSOLUTE = "an absolute path"


# ---------------------------------------------------------------- member names


@pytest.mark.parametrize(
    "name",
    [
        "agent-runtime/nul",
        "agent-runtime/NUL",
        "agent-runtime/nul.txt",
        "agent-runtime/Nul.tar.gz",
        "agent-runtime/prn",
        "agent-runtime/aux.py",
        "agent-runtime/con",
        "agent-runtime/conin$",
        "agent-runtime/CONOUT$",
        "agent-runtime/conout$.log",
        "agent-runtime/com0",
        "agent-runtime/com1",
        "agent-runtime/COM9.dll",
        "agent-runtime/com¹",
        "agent-runtime/lpt1",
        "agent-runtime/lpt9",
        "agent-runtime/lpt³.txt",
        "agent-runtime/nul/x.py",  # a directory named like a device is as unusable
        "agent-runtime/lib/lpt2/x.py",
    ],
)
def test_windows_device_names_are_refused_in_windows_bundles(name: str) -> None:
    assert unsafe(name, windows=True) == DEVICE
    # Elsewhere they are ordinary names.
    assert check_member_name(name) == tuple(name.split("/"))


@pytest.mark.parametrize(
    "name",
    [
        "agent-runtime/null",
        "agent-runtime/com10",
        "agent-runtime/lpt",
        "agent-runtime/console",
        "agent-runtime/xnul",
    ],
)
def test_names_that_only_resemble_devices_are_allowed_on_windows(name: str) -> None:
    assert check_member_name(name, windows=True) == tuple(name.split("/"))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "an empty name"),
        ("/agent-runtime/x", ABSOLUTE),
        ("c:agent-runtime", ABSOLUTE),
        ("Z:/x", ABSOLUTE),
        ("agent-runtime/..", "a '..' component that climbs out of the bundle"),
        ("agent-runtime/", EMPTY_OR_DOT),
        ("agent-runtime/.", EMPTY_OR_DOT),
        ("./agent-runtime", EMPTY_OR_DOT),
        ("agent-runtime/a\x00b", CHARACTER),
        ("agent-runtime/a\x1fb", CHARACTER),
        ("agent-runtime/a\x7fb", CHARACTER),
        ("agent-runtime/a\\b", CHARACTER),
        ("agent-runtime/a:b", CHARACTER),
        ("agent-runtime/a<b", CHARACTER),
        ("agent-runtime/a>b", CHARACTER),
        ('agent-runtime/a"b', CHARACTER),
        ("agent-runtime/a|b", CHARACTER),
        ("agent-runtime/a?b", CHARACTER),
        ("agent-runtime/a*b", CHARACTER),
        ("agent-runtime/x.", DOT_OR_SPACE),
        ("agent-runtime/x ", DOT_OR_SPACE),
        ("agent-runtime/x. .", DOT_OR_SPACE),
        ("agent-runtime/...", DOT_OR_SPACE),
        ("agent-runtime/dir./x", DOT_OR_SPACE),
    ],
)
def test_each_unsafe_name_is_refused_for_its_reason(name: str, why: str) -> None:
    assert unsafe(name) == why


@pytest.mark.parametrize(
    "name",
    [
        "agent-runtime/a b/c.py",
        "agent-runtime/.hidden",
        "agent-runtime/x.y.z",
        "agent-runtime/é/ü.py",
        "agent-runtime",
    ],
)
def test_plain_names_are_accepted(name: str) -> None:
    assert check_member_name(name) == tuple(name.split("/"))


def test_a_refusal_quotes_a_long_name_only_in_part() -> None:
    with pytest.raises(BundleRejected) as caught:
        check_member_name("agent-runtime/" + "x" * 500 + "/..")
    assert "x" * 186 in str(caught.value)
    assert "x" * 300 not in str(caught.value)


# ---------------------------------------------------------------- members in an archive


def test_windows_device_names_are_refused_in_an_archive_and_listed_paths(tmp_path: Path) -> None:
    files = tree_files(VERSION, extra={"lib/conout$": b"x"})
    error = refused(tmp_path, bundle_members(VERSION, files, "windows-x64"), platform="windows-x64")
    assert error.code == "unsafe_member"
    assert reason(error) == DEVICE


def test_a_file_list_naming_a_path_windows_cannot_hold_is_refused_by_that_reason(tmp_path: Path) -> None:
    # The archive leaves the file out; the list still names it: refused for the name, not as "missing".
    files = tree_files(VERSION, extra={"prn.txt": b"x"})
    members = [
        member("cowork-files.json", file_list(VERSION, files, "windows-x64")),
        *bundle_members(VERSION, tree_files(VERSION), "windows-x64")[1:],
    ]
    error = refused(tmp_path, members, platform="windows-x64")
    assert error.code == "unsafe_member"
    assert reason(error) == DEVICE


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (member("agent-runtime", b"x"), "a place outside agent-runtime/"),
        (member("cowork-files.json", kind=tarfile.DIRTYPE), "a place outside agent-runtime/"),
        (member("notes", kind=tarfile.DIRTYPE), "a place outside agent-runtime/"),
        (member("agent-runtime/x", kind=tarfile.CONTTYPE), "tar type"),
    ],
)
def test_only_the_file_list_and_the_tree_are_accepted(
    tmp_path: Path, extra: tuple[tarfile.TarInfo, bytes | None], why: str
) -> None:
    error = refused(tmp_path, [extra, *good_members()])
    assert error.code == "unsafe_member"
    assert why in str(error)


def test_a_file_where_the_archive_already_made_a_directory_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/_internal", b"x")])
    assert error.code == "unsafe_member"
    assert reason(error) == "a name used twice"


def test_a_directory_where_the_archive_wrote_a_file_is_refused(tmp_path: Path) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/_internal/VERSION/x", b"")])
    assert reason(error) == "a name used for both a file and a directory"
    assert str(error).startswith("The bundle contains 'agent-runtime/_internal/VERSION', with")


def test_names_differing_only_in_normalisation_are_one_name_on_windows(tmp_path: Path) -> None:
    files = tree_files(VERSION, extra={"caf\u00e9.py": b"a", "cafe\u0301.py": b"b"})
    error = refused(tmp_path, bundle_members(VERSION, files, "windows-x64"), platform="windows-x64")
    assert reason(error) == "a second copy of a member already unpacked"


def test_the_unpacked_tree_gets_plain_permissions(tmp_path: Path) -> None:
    staging = extract(tmp_path, good_members())
    assert stat.S_IMODE((staging / "agent-runtime").stat().st_mode) == 0o755
    assert stat.S_IMODE((staging / "agent-runtime/_internal/lib").stat().st_mode) == 0o755
    assert stat.S_IMODE((staging / "cowork-files.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((staging / "agent-runtime/_internal/lib/module.py").stat().st_mode) == 0o644


def test_a_staging_directory_that_exists_is_not_reused(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "bundle.tar.gz", good_members())
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "keep").write_text("mine")
    with pytest.raises(FileExistsError):
        extract_bundle(archive, staging, runtime_version=VERSION, platform="linux-x86_64")
    assert (staging / "keep").read_text() == "mine"


# ---------------------------------------------------------------- limits, exactly at and one past


def _sizes() -> tuple[int, int, int]:
    members = good_members()
    total = sum(info.size for info, _ in members if info.isfile())
    listing = next(info.size for info, _ in members if info.name == "cowork-files.json")
    return len(members), total, listing


def test_a_bundle_with_exactly_the_maximum_number_of_members_is_accepted(tmp_path: Path) -> None:
    count, _, _ = _sizes()
    staging = extract(tmp_path, good_members(), limits=ExtractLimits(max_members=count))
    assert (staging / "agent-runtime" / PROGRAM).is_file()


def test_one_member_past_the_maximum_is_refused(tmp_path: Path) -> None:
    count, _, _ = _sizes()
    error = refused(tmp_path, good_members(), limits=ExtractLimits(max_members=count - 1))
    assert error.code == "unsafe_member"
    assert f"more than {count - 1} members" in str(error)


def test_a_bundle_of_exactly_the_maximum_size_is_accepted_and_one_byte_more_is_not(tmp_path: Path) -> None:
    _, total, _ = _sizes()
    (tmp_path / "at").mkdir()
    extract(tmp_path / "at", good_members(), limits=ExtractLimits(max_total_bytes=total))
    error = refused(tmp_path, good_members(), limits=ExtractLimits(max_total_bytes=total - 1))
    assert error.code == "unsafe_member"
    assert f"more than {total - 1} bytes" in str(error)


def test_a_file_list_of_exactly_its_maximum_size_is_accepted_and_one_byte_more_is_not(tmp_path: Path) -> None:
    _, _, listing = _sizes()
    (tmp_path / "at").mkdir()
    extract(tmp_path / "at", good_members(), limits=ExtractLimits(max_file_list_bytes=listing))
    error = refused(tmp_path, good_members(), limits=ExtractLimits(max_file_list_bytes=listing - 1))
    assert error.code == "unsafe_member"
    assert f"more than {listing - 1} bytes" in str(error)


def test_a_truncated_archive_is_not_a_bundle(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "whole.tar.gz", good_members())
    cut = tmp_path / "bundle.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(BundleRejected) as caught:
        extract_bundle(cut, tmp_path / "staging", runtime_version=VERSION, platform="linux-x86_64")
    assert caught.value.code == "not_a_bundle"
    assert "not a readable .tar.gz" in str(caught.value)
    assert not (tmp_path / "staging").exists()


# ---------------------------------------------------------------- verify_tree: an installation found on disk


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    return extract(tmp_path, good_members())


def _verify_refusal(directory: Path) -> BundleRejected:
    with pytest.raises(BundleRejected) as caught:
        verify_tree(directory)
    return caught.value


def test_a_listed_file_replaced_by_a_link_to_the_same_bytes_is_refused(
    installed: Path, tmp_path: Path
) -> None:
    listed = installed / "agent-runtime/_internal/VERSION"
    copy = tmp_path / "elsewhere"
    copy.write_bytes(listed.read_bytes())
    listed.chmod(0o644)
    listed.unlink()
    listed.symlink_to(copy)
    error = _verify_refusal(installed)
    assert error.code == "unsafe_member"
    assert "is not a plain file or directory" in str(error)
    assert "VERSION" in str(error)


def test_a_directory_replaced_by_a_link_is_refused(installed: Path, tmp_path: Path) -> None:
    lib = installed / "agent-runtime/_internal/lib"
    moved = tmp_path / "moved-lib"
    lib.rename(moved)
    lib.symlink_to(moved, target_is_directory=True)
    error = _verify_refusal(installed)
    assert error.code == "unsafe_member"
    assert "lib is not a plain file or directory" in str(error)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_a_fifo_in_the_tree_is_refused(installed: Path) -> None:
    os.mkfifo(installed / "agent-runtime/pipe")
    error = _verify_refusal(installed)
    assert error.code == "unsafe_member"


def test_a_missing_file_or_file_list_is_refused(installed: Path) -> None:
    module = installed / "agent-runtime/_internal/lib/module.py"
    module.chmod(0o644)
    module.unlink()
    error = _verify_refusal(installed)
    assert error.code == "file_list"
    assert "does not hold exactly the files of its list" in str(error)
    (installed / "cowork-files.json").unlink()
    error = _verify_refusal(installed)
    assert error.code == "file_list"
    assert "has no valid cowork-files.json" in str(error)


def test_a_changed_file_is_named(installed: Path) -> None:
    version = installed / "agent-runtime/_internal/VERSION"
    version.chmod(0o644)
    version.write_bytes(b"1.2.1")  # same size, other bytes
    error = _verify_refusal(installed)
    assert error.code == "file_list"
    assert str(installed / "agent-runtime/_internal/VERSION") in str(error)


def test_an_intact_installation_verifies(installed: Path) -> None:
    listing = verify_tree(installed)
    assert listing.executable == PROGRAM
    assert set(listing.files) == set(tree_files(VERSION))


def test_the_default_limits_are_the_documented_ones() -> None:
    limits = ExtractLimits()
    assert (limits.max_members, limits.max_total_bytes, limits.max_file_list_bytes) == (
        50_000,
        4 << 30,
        16 << 20,
    )


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        (tarfile.SYMTYPE, "a symbolic link"),
        (tarfile.LNKTYPE, "a hard link"),
        (tarfile.CHRTYPE, "a device file"),
        (tarfile.BLKTYPE, "a device file"),
        (tarfile.FIFOTYPE, "a FIFO"),
    ],
)
def test_a_special_member_is_named_by_its_kind(tmp_path: Path, kind: bytes, what: str) -> None:
    error = refused(tmp_path, [*good_members(), member("agent-runtime/odd", kind=kind, link="x")])
    assert reason(error) == f"{what} (a runtime bundle holds only files and directories)"


def test_an_empty_directory_of_the_archive_is_created(tmp_path: Path) -> None:
    staging = extract(tmp_path, [*good_members(), member("agent-runtime/plugins", kind=tarfile.DIRTYPE)])
    assert (staging / "agent-runtime/plugins").is_dir()
    assert stat.S_IMODE((staging / "agent-runtime/plugins").stat().st_mode) == 0o755


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (b"[]", "the document"),
        (b'{"runtimeVersion": "x y", "platform": "amiga", "executable": 1, "files": {}}', "runtimeVersion"),
    ],
)
def test_an_invalid_file_list_names_the_first_place_it_is_wrong(
    tmp_path: Path, document: bytes, where: str
) -> None:
    error = refused(tmp_path, [member("cowork-files.json", document), *good_members()[1:]])
    assert error.code == "file_list"
    assert str(error).startswith(f"The bundle's cowork-files.json is invalid at {where}: ")
