"""``cowork-release app``: the desktop app for this platform, with its runtime bundle inside.

1. Everything that can be wrong is checked before the minutes of PyInstaller: the update URL, and
   the runtime bundle — read through and checked member by member (:func:`inspect_bundle`), and for
   this machine's platform, since PyInstaller does not cross-compile.
2. PyInstaller runs on ``installer/cowork.spec`` in a staging directory under ``--out``.
3. The runtime is unpacked beside the programs (``runtime/``; ``Contents/Resources/runtime`` in the
   ``.app``) with tarfile's ``data`` filter, and the unpacked tree is then checked against the
   bundle's file list — every file, size, mode and SHA-256, nothing more — so an archive changed
   after step 1 cannot slip anything in. This is the runtime the app starts until the updater
   installs another (``desktop.updater.active``).
4. ``update.json`` (``{"manifestUrl", "channel"}``) is written there when ``--manifest-url`` is given.
5. The finished app replaces ``OUT/Cowork`` (``OUT/Cowork.app``) — an interrupted build leaves the
   previous one and a staging directory, never half an app — and on Linux is packed into
   ``OUT/cowork-VERSION-linux-x86_64.tar.gz``, deterministically as runtime bundles are
   (``cowork_release.bundle``): sorted members, owner 0, one mtime (``SOURCE_DATE_EPOCH`` or 0),
   identical files stored once.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from contracts.addresses import is_loopback_host
from contracts.atomic import atomic_writer
from contracts.release import FILE_LIST_NAME, BundleFileList, Channel, Platform, current_platform
from cowork_release.appinfo import (
    APP_NAME,
    ICON_SOURCE,
    REPO_ROOT,
    RUNTIME_DIR_NAME,
    UPDATE_CONFIG_NAME,
    app_version,
    desktop_entry,
    linux_tarball_name,
    program_name,
    resources_dir,
)
from cowork_release.bundle import BundleInfo, file_sha256, inspect_bundle
from cowork_release.errors import ReleaseError
from cowork_release.freeze import run_pyinstaller

__all__ = [
    "DEFAULT_APP_SPEC",
    "BuiltApp",
    "build_app",
    "check_manifest_url",
    "pack_linux_app",
    "reseal_ad_hoc",
]

DEFAULT_APP_SPEC = REPO_ROOT / "installer" / "cowork.spec"
STAGING_NAME = ".cowork-app-build"


@dataclass(frozen=True)
class BuiltApp:
    app: Path
    """``OUT/Cowork`` or ``OUT/Cowork.app``."""
    version: str
    runtime: BundleInfo
    update_config: Path | None
    tarball: Path | None


def check_manifest_url(url: str) -> str:
    """The release manifest's URL as installed apps will fetch it: https, or http to this machine
    only (a test site). An installed app given anything else only logs an error and never updates,
    so the release tool refuses it before it ships.
    Returns it stripped; :class:`ReleaseError` says what is wrong."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        raise ReleaseError(f"--manifest-url {text[:200]!r} is not a URL ({exc})") from None
    if any(c.isspace() or ord(c) < 0x20 for c in text):
        raise ReleaseError("--manifest-url must not contain spaces or control characters")
    if not parts.hostname:
        raise ReleaseError(f"--manifest-url {text[:200]!r} names no host")
    if parts.username is not None or parts.password is not None:
        raise ReleaseError("--manifest-url must not carry credentials: every installation would hold them")
    if parts.scheme == "https":
        return text
    if parts.scheme == "http" and is_loopback_host(parts.hostname.removesuffix(".")):
        return text
    raise ReleaseError(
        f"--manifest-url must be https (http only for this machine, e.g. a test site), not {text[:200]!r}"
    )


def build_app(
    runtime_bundle: Path,
    out: Path,
    *,
    spec: Path = DEFAULT_APP_SPEC,
    manifest_url: str | None = None,
    channel: Channel = "stable",
    quiet: bool = False,
) -> BuiltApp:
    """The desktop app in ``out`` (see the module docstring for the steps)."""
    platform = current_platform()
    if platform is None:
        raise ReleaseError(
            "this machine builds no Cowork app (macOS arm64/x86_64, Windows x64, Linux x86-64)"
        )
    url = check_manifest_url(manifest_url) if manifest_url is not None else None
    runtime = inspect_bundle(runtime_bundle)
    if runtime.files.platform != platform:
        raise ReleaseError(
            f"{runtime_bundle.name} is a {runtime.files.platform} runtime; this machine builds the "
            f"{platform} app (PyInstaller does not cross-compile)"
        )
    version = app_version()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReleaseError(f"cannot create {out}: {exc.strerror or exc}") from None

    staging = out / STAGING_NAME
    shutil.rmtree(staging, ignore_errors=True)
    run_pyinstaller(spec, staging / "work", staging / "dist", quiet=quiet)
    app_name = f"{APP_NAME}.app" if platform.startswith("darwin") else APP_NAME
    built = staging / "dist" / app_name
    if not (built / _program_path(platform)).is_file():
        raise ReleaseError(f"PyInstaller finished but {built / _program_path(platform)} is missing")

    resources = resources_dir(built, platform)
    _unpack_runtime(runtime, resources / RUNTIME_DIR_NAME)
    update_config = None
    if url is not None:
        document = {"manifestUrl": url, "channel": channel}
        (resources / UPDATE_CONFIG_NAME).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        update_config = out / app_name / resources.relative_to(built) / UPDATE_CONFIG_NAME
    if platform.startswith("darwin"):
        reseal_ad_hoc(built)
    if platform == "linux-x86_64":
        (built / "cowork.desktop").write_text(desktop_entry(), encoding="utf-8")
        if ICON_SOURCE.is_file():
            shutil.copyfile(ICON_SOURCE, built / "cowork.png")

    target = out / app_name
    _replace(built, target)
    shutil.rmtree(staging, ignore_errors=True)
    tarball = (
        pack_linux_app(target, out / linux_tarball_name(version)) if platform == "linux-x86_64" else None
    )
    return BuiltApp(
        app=target, version=version, runtime=runtime, update_config=update_config, tarball=tarball
    )


def reseal_ad_hoc(app: Path) -> None:
    """Seal the ``.app`` again, ad hoc, after the runtime and ``update.json`` were added to it.

    PyInstaller signs the bundle ad hoc before they are there, so its seal no longer matches, and
    macOS calls such a build "damaged" with no way to open it. Sealed again it is a test build macOS
    opens after a warning; ``installer/macos/sign`` gives a release its Developer ID signature.
    """
    command = ["codesign", "--force", "--sign", "-", str(app)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise ReleaseError(f"cannot run codesign: {exc.strerror or exc}") from None
    if result.returncode != 0:
        raise ReleaseError(f"codesign could not seal {app.name} again: {result.stderr.strip()[-500:]}")


def _program_path(platform: Platform) -> Path:
    if platform.startswith("darwin"):
        return Path("Contents", "MacOS", APP_NAME)
    return Path(program_name(platform))


def _replace(built: Path, target: Path) -> None:
    """``built`` becomes ``target``; an older ``target`` is moved aside first and removed after."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    built.rename(target)
    shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------- the bundled runtime


def _unpack_runtime(runtime: BundleInfo, into: Path) -> None:
    """Extract the checked bundle into ``into`` and prove the tree is exactly its file list."""
    into.mkdir(parents=True)
    try:
        with tarfile.open(runtime.path, "r:gz") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ReleaseError(f"cannot unpack {runtime.path.name}: {exc}") from None
    try:
        listed = BundleFileList.model_validate_json((into / FILE_LIST_NAME).read_bytes())
    except (OSError, ValueError):
        listed = None
    if listed != runtime.files:
        raise ReleaseError(f"{runtime.path.name} changed while it was being unpacked; run app again")
    tree = into / "agent-runtime"
    found = {relative for relative, _ in _walk(tree)}
    extra = sorted(found - runtime.files.files.keys())
    if extra:
        raise ReleaseError(f"{runtime.path.name} unpacked a file its list does not name: {extra[0]}")
    for relative, entry in runtime.files.files.items():
        path = tree / relative
        if not path.is_file() or path.is_symlink():
            raise ReleaseError(f"{runtime.path.name} unpacked without {relative}; run app again")
        info = path.stat()
        executable = bool(info.st_mode & 0o111)
        if (
            info.st_size != entry.size
            or executable != (entry.mode == 0o755)
            or file_sha256(path) != entry.sha256
        ):
            raise ReleaseError(f"{runtime.path.name}: the unpacked {relative} does not match its file list")


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    """``(relative POSIX path, path)`` of every non-directory under ``root``, links not followed."""
    for directory, directories, files in os.walk(root):
        base = Path(directory)
        for name in sorted(files) + [d for d in directories if (base / d).is_symlink()]:
            path = base / name
            yield path.relative_to(root).as_posix(), path


# ---------------------------------------------------------------- the Linux tarball


def _epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", "0")
    if not value.isdigit():
        raise ReleaseError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, not {value!r}")
    return int(value)


def _member(name: str, path: Path, root: Path, mtime: int) -> tuple[tarfile.TarInfo, Path | None]:
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    status = path.lstat()
    if stat.S_ISLNK(status.st_mode):
        link = os.readlink(path)
        resolved = (path.parent / link).resolve()
        if Path(link).is_absolute() or not resolved.is_relative_to(root.resolve()) or not resolved.exists():
            raise ReleaseError(f"{path} links outside the app or to nothing ({link})")
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, link, 0o777
        return info, None
    if stat.S_ISDIR(status.st_mode):
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        return info, None
    if not stat.S_ISREG(status.st_mode):
        raise ReleaseError(f"{path} is neither a file, a directory nor a link")
    info.type, info.size = tarfile.REGTYPE, status.st_size
    info.mode = 0o755 if status.st_mode & 0o111 else 0o644
    return info, path


def _entries(app: Path) -> Iterator[tuple[str, Path]]:
    """Every directory, file and link under ``app``, in sorted order, named ``Cowork/…``."""
    yield APP_NAME, app
    for directory, directories, files in os.walk(app):
        base = Path(directory)
        directories.sort()
        for name in sorted([*directories, *files]):
            path = base / name
            yield f"{APP_NAME}/{path.relative_to(app).as_posix()}", path


def pack_linux_app(app: Path, target: Path) -> Path:
    """``target`` (``cowork-VERSION-linux-x86_64.tar.gz``): the tree ``app`` under ``Cowork/``.

    Links PyInstaller made inside the tree stay links (relative, resolving inside it); anything
    pointing out of it is refused. A file identical to one packed before it (on Linux the two
    programs are byte for byte the same) is stored as a hard link to it. Written to a temporary file
    and renamed into place.
    """
    mtime = _epoch()
    with (
        atomic_writer(target, mode=0o644) as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out.stream, mtime=mtime, compresslevel=6) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        first_copy: dict[tuple[int, int, str], str] = {}
        for name, path in _entries(app):
            info, content = _member(name, path, app, mtime)
            if content is None:
                tar.addfile(info)
                continue
            key = (info.size, info.mode, file_sha256(content))
            if key in first_copy:  # Cowork and cowork-cli: the same bootloader and archive
                info.type, info.linkname, info.size = tarfile.LNKTYPE, first_copy[key], 0
                tar.addfile(info)
                continue
            first_copy[key] = name
            with content.open("rb") as stream:
                tar.addfile(info, stream)
    return target
