"""Side-by-side installation: unpack into staging, move into ``versions/{version}``, switch the pointer.

Seed 001 §11: "the new version is activated on the next session start — running sessions are not
interrupted". A running runtime keeps its own directory; a new session reads the pointer when it
starts. The steps, each safe to interrupt:

1. unpack and check in ``updater/staging/{version}-{random}`` — an interrupted unpack leaves only
   staging debris, removed by :meth:`Installer.cleanup_interrupted` before the next installation;
2. rename into ``versions/{version}`` (atomic) — a version that is there but not active is checked
   against its file list again before it is used;
3. health check (``desktop.updater.health``), then switch ``active.json`` atomically, remembering
   the version it replaces as ``previous``.

Until step 3 the previous runtime stays active. A failed health check or a crash loop marks the
version bad (:meth:`Installer.rollback`): the pointer goes back to the previous version and the bad
one is never started or installed again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from contracts.release import BUNDLE_TOP_DIR, Platform
from desktop.updater.active import ActiveRuntime, NoRuntimeAvailable, active_runtime, bundled_runtime
from desktop.updater.errors import BundleRejected, InstallFailed
from desktop.updater.extract import ExtractLimits, extract_bundle, verify_tree
from desktop.updater.layout import (
    InstallLayout,
    Pointer,
    RuntimeRef,
    file_lock,
    fsync_directory,
    read_pointer,
    safe_version,
    write_pointer,
)
from desktop.updater.state import UpdaterState, state_lock

__all__ = ["Installer", "Rollback"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Rollback:
    """A version taken out of service: ``to_version`` is what sessions start now (None: none left)."""

    from_version: str
    to_version: str | None
    reason: str


class Installer:
    def __init__(
        self,
        layout: InstallLayout,
        *,
        bundled_dir: Path | None = None,
        extract_limits: ExtractLimits | None = None,
    ) -> None:
        self.layout = layout
        self.state = UpdaterState(layout)
        self.bundled_dir = bundled_dir
        self.extract_limits = extract_limits

    # ------------------------------------------------------------------ what is there

    def active(self) -> ActiveRuntime | None:
        """The runtime a session starting now would use, or None if there is none at all."""
        try:
            return active_runtime(self.layout.root, bundled=self.bundled_dir)
        except NoRuntimeAvailable:
            return None

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """One installation at a time (two app windows, or the app and a tool): the other is refused."""
        self.layout.create()
        with file_lock(self.layout.install_lock, blocking=False) as held:
            if not held:
                raise InstallFailed("busy", "Another Cowork process is installing a runtime update")
            yield

    # ------------------------------------------------------------------ installing

    def cleanup_interrupted(self) -> list[str]:
        """Remove what an interrupted installation left: staging trees and half-written files.
        Call under :meth:`exclusive`. Returns the names removed."""
        removed = []
        for leftover in sorted(self.layout.staging.iterdir()):
            _remove(leftover)
            removed.append(f"staging/{leftover.name}")
        for directory in (self.layout.root, self.layout.updater, self.layout.versions):
            for leftover in directory.glob(".*.tmp"):
                _remove(leftover)
                removed.append(leftover.name)
        return removed

    def unpack(self, archive: Path, *, version: str, platform: Platform) -> RuntimeRef:
        """Unpack a verified bundle into ``versions/{version}`` (not yet active). Call under
        :meth:`exclusive`. Raises :class:`BundleRejected` or :class:`InstallFailed`."""
        version = _checked_version(version)
        target = self.layout.version_dir(version)
        if target.exists():
            # Left by an installation interrupted before its activation: used only if still intact.
            try:
                listing = verify_tree(target)
                if listing.runtime_version == version and listing.platform == platform:
                    return RuntimeRef(version, f"{BUNDLE_TOP_DIR}/{listing.executable}")
            except BundleRejected as exc:
                logger.warning("discarding the damaged installation of %s: %s", version, exc)
            _remove(target)
        staging = self.layout.staging / f"{version}-{secrets.token_hex(4)}"
        try:
            listing = extract_bundle(
                archive, staging, runtime_version=version, platform=platform, limits=self.extract_limits
            )
            os.rename(staging, target)
            fsync_directory(self.layout.versions)
        except OSError as exc:
            _remove(staging)
            raise InstallFailed("disk", f"Could not install runtime {version}: {exc}") from exc
        return RuntimeRef(version, f"{BUNDLE_TOP_DIR}/{listing.executable}")

    def activate(self, ref: RuntimeRef) -> Pointer:
        """Make ``ref`` the runtime of every session started from now on; what was active becomes
        ``previous`` (None when that was the bundled runtime)."""
        if not self.layout.executable(ref).is_file():
            raise InstallFailed("disk", f"Runtime {ref.version} is not installed")
        with state_lock(self.layout):
            current = self.active()
            previous: RuntimeRef | None = None
            if current is not None and current.source != "bundled" and current.version != ref.version:
                pointer = read_pointer(self.layout)
                if pointer is not None:
                    previous = pointer.active if current.source == "installed" else pointer.previous
            new = Pointer(ref, previous)
            write_pointer(self.layout, new)
        return new

    def rollback(self, version: str, reason: str) -> Rollback | None:
        """Take the active installed ``version`` out of service: mark it bad and fall back to the
        previous runtime (or the bundled one). Nothing changes if ``version`` is not the active
        installed version, or if there would be no runtime left to fall back to."""
        with state_lock(self.layout):
            pointer = read_pointer(self.layout)
            if pointer is None or pointer.active.version != version:
                return None
            bad = self.state.bad_versions()
            target = pointer.previous
            if target is not None and (target.version in bad or not self.layout.executable(target).is_file()):
                target = None
            bundled = bundled_runtime(self.bundled_dir)
            if target is None and bundled is None:
                logger.error("runtime %s fails (%s) but there is no runtime to fall back to", version, reason)
                return None
            self.state.mark_bad(version, reason)
            write_pointer(self.layout, None if target is None else Pointer(target, None))
        to_version = target.version if target is not None else bundled.version if bundled else None
        logger.warning(
            "runtime %s taken out of service (%s); sessions now start %s", version, reason, to_version
        )
        return Rollback(version, to_version, reason)

    def discard(self, version: str) -> None:
        """Delete an installed version that is not the active one (e.g. after a failed health check)."""
        pointer = read_pointer(self.layout)
        if pointer is not None and version in (
            pointer.active.version,
            getattr(pointer.previous, "version", None),
        ):
            return
        _remove(self.layout.version_dir(version))

    def collect_garbage(self, keep: Iterable[str] = ()) -> list[str]:
        """Delete installed versions other than the active, the previous and ``keep`` (versions a
        running session may still use). Call under :meth:`exclusive`."""
        kept = set(keep)
        pointer = read_pointer(self.layout)
        if pointer is not None:
            kept.add(pointer.active.version)
            if pointer.previous is not None:
                kept.add(pointer.previous.version)
        removed = []
        for directory in sorted(self.layout.versions.iterdir()):
            if directory.name not in kept and not directory.name.startswith("."):
                _remove(directory)
                removed.append(directory.name)
        return removed


def _checked_version(version: str) -> str:
    try:
        return safe_version(version)
    except ValueError as exc:
        raise InstallFailed("bad_version", f"Cannot install a runtime called {version[:70]!r}") from exc


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
