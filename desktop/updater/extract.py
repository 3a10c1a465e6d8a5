"""Unpack a verified bundle into a private staging directory, trusting nothing in the archive.

The archive's SHA-256 was checked against the signed manifest, so its bytes are the publisher's; the
checks below still assume a hostile archive, because a compromised build machine or a packaging bug
must not be able to write outside the staging directory or smuggle in a file nobody listed.

Every member passes our own rules before a byte of it is written — stricter than tarfile's PEP 706
``data`` filter, which so has nothing left to refuse and is not run: a relative POSIX name with no
empty, ``.`` or ``..`` component, no backslash, colon, control character or trailing dot/space (what
Windows would silently rewrite), no Windows device name in a Windows bundle; only
``cowork-files.json`` and the ``agent-runtime/`` tree; only regular files and directories, so **no
links at all** — the inner file list (``contracts.release.FileEntry``) describes files by content and
cannot vouch for a link, and a tree without links cannot be walked out of; no member twice (compared
case- and normalisation-insensitively for macOS and Windows bundles, whose file systems would merge
the two); bounded member count and total size.

Files are then written by us, not by tarfile: created exclusively (``O_EXCL``, ``O_NOFOLLOW``) inside
directories we created, hashed while they are written, fsynced. At the end the tree must match the
inner file list exactly — every file present, no extra one, each size and SHA-256 equal — and each
file gets the list's permission bits (never group- or world-writable).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tarfile
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from contracts.release import BUNDLE_TOP_DIR as TREE_NAME
from contracts.release import FILE_LIST_NAME, BundleFileList, Platform
from desktop.updater.errors import BundleRejected

__all__ = ["ExtractLimits", "check_member_name", "extract_bundle", "verify_tree"]

_COPY_CHUNK = 1 << 20
_FORBIDDEN_CHARACTERS = re.compile(r'[\x00-\x1f\x7f\\:<>"|?*]')
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"com{i}" for i in "0123456789¹²³"}
    | {f"lpt{i}" for i in "0123456789¹²³"}
)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    max_members: int = 50_000
    max_total_bytes: int = 4 << 30
    """Uncompressed: a gzip bomb stops here even before the inner file list is read."""
    max_file_list_bytes: int = 16 << 20


def check_member_name(name: str, *, windows: bool = False) -> tuple[str, ...]:
    """The components of a member name, or :class:`BundleRejected` saying why it is unsafe."""
    if not name:
        _unsafe(name, "an empty name")
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        _unsafe(name, "an absolute path")
    parts = tuple(name.split("/"))
    for part in parts:
        if part == "..":
            _unsafe(name, "a '..' component that climbs out of the bundle")
        if part in ("", "."):
            _unsafe(name, "an empty or '.' component")
        if _FORBIDDEN_CHARACTERS.search(part):
            _unsafe(name, "a backslash, colon, control or other character Windows forbids")
        if part != part.rstrip(". "):
            _unsafe(name, "a component ending in a dot or space")
        if windows and part.split(".", 1)[0].lower() in _WINDOWS_DEVICES:
            _unsafe(name, "a Windows device name")
    return parts


def _unsafe(name: str, why: str) -> None:
    raise BundleRejected("unsafe_member", f"The bundle contains {name[:200]!r}, with {why}; refused")


def extract_bundle(
    archive: Path,
    staging: Path,
    *,
    runtime_version: str,
    platform: Platform,
    limits: ExtractLimits | None = None,
) -> BundleFileList:
    """Unpack ``archive`` into ``staging`` (created here, must not exist) and check it against its
    inner file list, which must name ``runtime_version`` and ``platform``. On any refusal
    ``staging`` is removed and :class:`BundleRejected` raised."""
    staging.mkdir(mode=0o700)
    try:
        return _Extraction(staging, platform, limits or ExtractLimits()).run(archive, runtime_version)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


class _Extraction:
    def __init__(self, staging: Path, platform: Platform, limits: ExtractLimits) -> None:
        self.staging = staging
        self.platform = platform
        self.limits = limits
        self.windows = platform.startswith("windows")
        # macOS and Windows file systems merge names differing in case or Unicode normalisation.
        self.fold = platform.startswith(("windows", "darwin"))
        self.seen: set[str] = set()
        self.directories: set[tuple[str, ...]] = {()}
        self.files: dict[str, tuple[str, int]] = {}  # path under agent-runtime/ -> (sha256, size)
        self.file_list: bytes | None = None
        self.total = 0

    def run(self, archive: Path, runtime_version: str) -> BundleFileList:
        try:
            with tarfile.open(archive, mode="r|gz") as tar:
                for count, member in enumerate(tar, start=1):
                    if count > self.limits.max_members:
                        raise BundleRejected(
                            "unsafe_member", f"The bundle has more than {self.limits.max_members} members"
                        )
                    self._member(tar, member)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise BundleRejected("not_a_bundle", f"The bundle is not a readable .tar.gz: {exc}") from exc
        return self._check_against_list(runtime_version)

    # ------------------------------------------------------------------ members

    def _member(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        parts = check_member_name(member.name, windows=self.windows)
        if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
            kind = _kind(member)
            _unsafe(member.name, f"a {kind} (a runtime bundle holds only files and directories)")
        is_file = member.type != tarfile.DIRTYPE
        if parts == (FILE_LIST_NAME,) and is_file:
            pass
        elif parts[0] != TREE_NAME or (len(parts) == 1 and is_file):
            _unsafe(member.name, f"a place outside {TREE_NAME}/")
        key = unicodedata.normalize("NFC", member.name).casefold() if self.fold else member.name
        if key in self.seen:
            _unsafe(member.name, "a second copy of a member already unpacked")
        self.seen.add(key)
        if not is_file:
            self._directory(parts)
            return
        self.total += member.size
        if self.total > self.limits.max_total_bytes:
            raise BundleRejected(
                "unsafe_member", f"The bundle unpacks to more than {self.limits.max_total_bytes} bytes"
            )
        source = tar.extractfile(member)
        assert source is not None  # a regular file always has content
        if parts == (FILE_LIST_NAME,):
            if member.size > self.limits.max_file_list_bytes:
                _unsafe(member.name, f"more than {self.limits.max_file_list_bytes} bytes")
            self.file_list = source.read()
            self._write(io.BytesIO(self.file_list), self.staging / FILE_LIST_NAME)
            return
        self._directory(parts[:-1])
        self.files["/".join(parts[1:])] = self._write(source, self.staging.joinpath(*parts))

    def _directory(self, parts: tuple[str, ...]) -> None:
        for depth in range(1, len(parts) + 1):
            prefix = parts[:depth]
            if prefix in self.directories:
                continue
            try:
                os.mkdir(self.staging.joinpath(*prefix), 0o700)
            except FileExistsError:
                # Only a file of ours can be in the way (we never create links): a file and a
                # directory of one name.
                _unsafe("/".join(prefix), "a name used for both a file and a directory")
            self.directories.add(prefix)

    def _write(self, source: IO[bytes], path: Path) -> tuple[str, int]:
        hasher = hashlib.sha256()
        size = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_BINARY
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            _unsafe(str(path.relative_to(self.staging).as_posix()), "a name used twice")
        with open(fd, "wb", closefd=True) as target:
            while chunk := source.read(_COPY_CHUNK):
                hasher.update(chunk)
                size += len(chunk)
                target.write(chunk)
            target.flush()
            os.fsync(target.fileno())
        return hasher.hexdigest(), size

    # ------------------------------------------------------------------ the inner file list

    def _check_against_list(self, runtime_version: str) -> BundleFileList:
        if self.file_list is None:
            raise BundleRejected("not_a_bundle", f"The bundle has no {FILE_LIST_NAME} (its inner file list)")
        try:
            listing = BundleFileList.model_validate_json(self.file_list)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the document"
            raise BundleRejected(
                "file_list", f"The bundle's {FILE_LIST_NAME} is invalid at {where}: {first['msg']}"
            ) from None
        if listing.runtime_version != runtime_version:
            raise BundleRejected(
                "file_list",
                f"The bundle holds runtime {listing.runtime_version}, the signed manifest promised "
                f"{runtime_version}",
            )
        if listing.platform != self.platform:
            raise BundleRejected(
                "file_list", f"The bundle is for {listing.platform}, this installation needs {self.platform}"
            )
        for name in listing.files:
            check_member_name(f"{TREE_NAME}/{name}", windows=self.windows)
        listed, present = set(listing.files), set(self.files)
        if missing := sorted(listed - present):
            raise BundleRejected(
                "file_list", f"The bundle lacks {len(missing)} listed file(s), e.g. {TREE_NAME}/{missing[0]}"
            )
        if extra := sorted(present - listed):
            raise BundleRejected(
                "file_list", f"The bundle holds {len(extra)} unlisted file(s), e.g. {TREE_NAME}/{extra[0]}"
            )
        for name, entry in listing.files.items():
            if self.files[name] != (entry.sha256, entry.size):
                raise BundleRejected(
                    "file_list",
                    f"{TREE_NAME}/{name} does not match the bundle's file list (size or SHA-256 differs)",
                )
        # Modes (0o755 or 0o644 only) and a listed executable of mode 0o755 are the file list's own
        # validation (contracts.release.BundleFileList), already passed above.
        self._apply_modes(listing)
        return listing

    def _apply_modes(self, listing: BundleFileList) -> None:
        tree = self.staging / TREE_NAME
        for name, entry in listing.files.items():
            # 0o755 or 0o644 (the file list admits no other): never group- or world-writable.
            os.chmod(tree.joinpath(*name.split("/")), entry.mode)
        for parts in self.directories:
            if parts:
                os.chmod(self.staging.joinpath(*parts), 0o755)
        os.chmod(self.staging / FILE_LIST_NAME, 0o644)


def verify_tree(directory: Path) -> BundleFileList:
    """Check an unpacked bundle on disk against its own file list (an installation found after a
    crash, before it is trusted again): no link, no extra or missing file, every hash equal."""
    try:
        listing = BundleFileList.model_validate_json((directory / FILE_LIST_NAME).read_bytes())
    except (OSError, ValidationError) as exc:
        raise BundleRejected("file_list", f"{directory} has no valid {FILE_LIST_NAME}") from exc
    tree = directory / TREE_NAME
    found: dict[str, tuple[str, int]] = {}
    for folder, subfolders, names in os.walk(tree):
        for name in [*subfolders, *names]:
            path = Path(folder, name)
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                raise BundleRejected("unsafe_member", f"{path} is not a plain file or directory")
        for name in names:
            path = Path(folder, name)
            found[path.relative_to(tree).as_posix()] = _hash_file(path)
    if set(found) != set(listing.files):
        raise BundleRejected("file_list", f"{directory} does not hold exactly the files of its list")
    for name, entry in listing.files.items():
        if found[name] != (entry.sha256, entry.size):
            raise BundleRejected("file_list", f"{tree / name} differs from the bundle's file list")
    return listing


def _hash_file(path: Path) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while chunk := stream.read(_COPY_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "symbolic link"
    if member.islnk():
        return "hard link"
    if member.ischr() or member.isblk():
        return "device file"
    if member.isfifo():
        return "FIFO"
    return f"member of tar type {member.type!r}"
