"""The updater as one call: check → download → verify → unpack → install → health check → activate.

``await UpdateService(manifest_url).update(on_progress=…)`` does one whole round and returns an
:class:`UpdateResult`; it never raises for anything the network, the publisher or the disk did.
Seed 001 §11 "Update flow": checked on each launch and on a schedule, downloaded in the background,
activated at the next session start — running sessions keep their runtime.

Every refusal leaves the active runtime as it was: the pointer is switched only after the new
version was unpacked, matched against its file list and answered its health check.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx

from contracts.release import (
    PROTOCOL_VERSION,
    Channel,
    Platform,
    ReleaseManifest,
    RootKeySet,
    bundle_file_name,
    current_platform,
)
from desktop.updater.compatible import choose_compatible
from desktop.updater.crashloop import CrashLoopGuard
from desktop.updater.download import DownloadLimits, download_verified
from desktop.updater.errors import (
    BundleRejected,
    DownloadFailed,
    HealthCheckFailed,
    InstallFailed,
    ManifestRejected,
    UpdateError,
)
from desktop.updater.health import DEFAULT_HEALTH_TIMEOUT, check_health
from desktop.updater.install import Installer
from desktop.updater.keys import PINNED_ROOT_KEYS
from desktop.updater.layout import InstallLayout, default_root
from desktop.updater.manifest import Choice, Offer, choose_release, fetch_manifest, trusted_manifest
from desktop.updater.outcome import UpdateProgress, UpdateResult, UpdateStage, UpdateStatus

__all__ = [
    "UpdateProgress",
    "UpdateResult",
    "UpdateService",
    "UpdateStage",
    "UpdateStatus",
    "running_desktop_version",
]

logger = logging.getLogger(__name__)


ProgressHandler = Callable[[UpdateProgress], None]


def running_desktop_version() -> str:
    """This desktop's version, for ``minDesktopVersion``; "0" when unknown (then no release that sets
    a minimum is installed — safer than starting a runtime this desktop may not be able to drive)."""
    try:
        return importlib.metadata.version("cowork")
    except importlib.metadata.PackageNotFoundError:
        return "0"


class UpdateService:
    """One installation's updater, reading ``manifest_url`` (seed 001 §11's "version manifest
    endpoint": where the release team publishes ``manifest.json``). Everything is injectable for
    tests; nothing comes from the environment (whoever can set a variable must not be able to choose
    the trusted keys)."""

    def __init__(
        self,
        manifest_url: str,
        *,
        root: Path | None = None,
        root_keys: RootKeySet = PINNED_ROOT_KEYS,
        channel: Channel = "stable",
        platform: Platform | None = None,
        desktop_version: str | None = None,
        bundled_dir: Path | None = None,
        download_limits: DownloadLimits | None = None,
        health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
        manifest_timeout: float = 30.0,
        protocol_version: str = PROTOCOL_VERSION,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.manifest_url = manifest_url
        self.layout = InstallLayout(default_root() if root is None else root)
        self.root_keys = root_keys
        self.channel: Channel = channel
        self.platform = platform or current_platform()
        self.desktop_version = desktop_version or running_desktop_version()
        self.installer = Installer(self.layout, bundled_dir=bundled_dir)
        self.crashes = CrashLoopGuard(self.layout.root, bundled_dir=bundled_dir)
        self.download_limits = download_limits or DownloadLimits()
        self.health_timeout = health_timeout
        self.manifest_timeout = manifest_timeout
        self.protocol_version = protocol_version
        self.transport = transport
        self.clock = clock

    # ------------------------------------------------------------------ one round

    async def update(self, on_progress: ProgressHandler | None = None) -> UpdateResult:
        """Check for a newer runtime and, if one is offered, install and activate it."""
        report = on_progress or (lambda progress: None)
        if self.platform is None:
            return UpdateResult(UpdateStatus.NOT_OFFERED, "No runtime bundles are built for this platform")
        try:
            with self.installer.exclusive():
                await asyncio.to_thread(self._cleanup)
                async with self._client() as client:
                    return await self._round(client, report)
        except UpdateError as exc:
            return self._result_of(exc)

    async def install_compatible(
        self, supported: str, on_progress: ProgressHandler | None = None
    ) -> UpdateResult:
        """Install the runtime the backend accepts (``supported``, a PEP 440 range from the Session
        Service's ``incompatible`` verdict: :mod:`desktop.updater.compatible`) — the highest release
        within it, older than the runtime in use if need be — and make it the runtime of new sessions.
        ``INSTALLED``; ``UP_TO_DATE`` when that release is in use already; ``NOT_OFFERED`` when the
        manifest has none. Never raises for what the network, the publisher or the disk did."""
        report = on_progress or (lambda progress: None)
        if self.platform is None:
            return UpdateResult(UpdateStatus.NOT_OFFERED, "No runtime bundles are built for this platform")
        platform = self.platform
        try:
            with self.installer.exclusive():
                await asyncio.to_thread(self._cleanup)
                async with self._client() as client:
                    report(UpdateProgress(UpdateStage.CHECKING))
                    manifest = await self._trusted(client)
                    choice = choose_compatible(
                        manifest,
                        supported=supported,
                        manifest_url=self.manifest_url,
                        platform=platform,
                        channel=self.channel,
                        desktop_version=self.desktop_version,
                        bad_versions=set(self.installer.state.bad_versions()),
                        protocol_version=self.protocol_version,
                    )
                    offer = choice.offer
                    if offer is None:
                        return UpdateResult(UpdateStatus.NOT_OFFERED, choice.message, code="not_offered")
                    active = self.installer.active()
                    if active is not None and active.version == offer.version:
                        return UpdateResult(
                            UpdateStatus.UP_TO_DATE,
                            f"Runtime {offer.version} is in use",
                            version=offer.version,
                        )
                    try:
                        return await self._install(client, offer, report, [])
                    except UpdateError as exc:
                        return self._result_of(exc, offer.version)
        except UpdateError as exc:
            return self._result_of(exc)

    async def check(self) -> Choice:
        """Only the check: fetch and verify the manifest and choose; nothing is downloaded.
        Raises :class:`ManifestRejected`."""
        async with self._client() as client:
            return self._choose(await self._trusted(client))

    async def _round(self, client: httpx.AsyncClient, report: ProgressHandler) -> UpdateResult:
        report(UpdateProgress(UpdateStage.CHECKING))
        manifest = await self._trusted(client)
        choice = self._choose(manifest)
        rolled_back: list[str] = []
        while choice.code == "installed_revoked":
            # The publisher withdrew the runtime in use: back to the previous one, which is checked
            # the same way; where there is nothing to go back to (the bundled runtime), any good
            # release may replace it, even an older one.
            revoked = self.installer.active()
            rollback = None
            if revoked is not None and revoked.source != "bundled":
                rollback = self.installer.rollback(revoked.version, "revoked by the publisher")
            if rollback is None:
                choice = self._choose(manifest, replacing_revoked=True)
                break
            rolled_back.append(rollback.from_version)
            choice = self._choose(manifest)
        offer = choice.offer
        if offer is None:
            if rolled_back:
                active = self.installer.active()
                return UpdateResult(
                    UpdateStatus.ROLLED_BACK,
                    f"Runtime {', '.join(rolled_back)} was revoked by its publisher; new sessions use "
                    f"{active.version if active else 'no runtime'}",
                    version=rolled_back[0],
                    code="revoked",
                )
            status = UpdateStatus.NOT_OFFERED if choice.code == "not_offered" else UpdateStatus.UP_TO_DATE
            return UpdateResult(status, choice.message)

        try:
            return await self._install(client, offer, report, rolled_back)
        except UpdateError as exc:
            return self._result_of(exc, offer.version)

    async def _install(
        self, client: httpx.AsyncClient, offer: Offer, report: ProgressHandler, rolled_back: list[str]
    ) -> UpdateResult:
        assert self.platform is not None
        version = offer.version
        archive = self.layout.downloads / bundle_file_name(version, self.platform)
        self._forget_other_downloads(archive)

        def downloaded(done: int, total: int) -> None:
            report(UpdateProgress(UpdateStage.DOWNLOADING, done, total, version))

        report(UpdateProgress(UpdateStage.DOWNLOADING, 0, offer.bundle.size, version))
        await download_verified(
            client,
            offer.url,
            archive,
            size=offer.bundle.size,
            sha256=offer.bundle.sha256,
            limits=self.download_limits,
            on_progress=downloaded,
        )

        report(UpdateProgress(UpdateStage.INSTALLING, version=version))
        try:
            ref = await asyncio.to_thread(
                self.installer.unpack, archive, version=version, platform=self.platform
            )
        except BundleRejected as exc:
            # The bytes are the publisher's (their hash is signed), so the release itself is broken:
            # never fetch it again.
            self.installer.state.mark_bad(version, str(exc))
            archive.unlink(missing_ok=True)
            raise

        report(UpdateProgress(UpdateStage.HEALTH_CHECK, version=version))
        try:
            await check_health(self.layout.executable(ref), timeout=self.health_timeout)
        except HealthCheckFailed as exc:
            self.installer.state.mark_bad(version, str(exc))
            self.installer.discard(version)
            archive.unlink(missing_ok=True)
            raise

        report(UpdateProgress(UpdateStage.ACTIVATING, version=version))
        self.crashes.record_activation(version)
        self.installer.activate(ref)
        archive.unlink(missing_ok=True)
        await asyncio.to_thread(self.installer.collect_garbage, self.crashes.possibly_running())
        message = f"Runtime {version} is installed; new sessions use it"
        if rolled_back:
            message += f" (runtime {', '.join(rolled_back)} was revoked)"
        return UpdateResult(UpdateStatus.INSTALLED, message, version=version)

    # ------------------------------------------------------------------ steps

    async def _trusted(self, client: httpx.AsyncClient) -> ReleaseManifest:
        """The verified manifest, remembered as the last trusted one."""
        raw = await fetch_manifest(client, self.manifest_url, timeout=self.manifest_timeout)
        state = self.installer.state
        manifest = trusted_manifest(
            raw, self.root_keys, now=self.clock(), last_trusted_version=state.last_manifest_version()
        )
        state.trust_manifest(manifest.manifest_version, raw)
        return manifest

    def _choose(self, manifest: ReleaseManifest, *, replacing_revoked: bool = False) -> Choice:
        active = self.installer.active()
        state = self.installer.state
        assert self.platform is not None
        return choose_release(
            manifest,
            manifest_url=self.manifest_url,
            platform=self.platform,
            channel=self.channel,
            installed_version=None if active is None or replacing_revoked else active.version,
            desktop_version=self.desktop_version,
            install_id=state.install_id(),
            bad_versions=set(state.bad_versions()),
            protocol_version=self.protocol_version,
        )

    def _cleanup(self) -> None:
        self.layout.create()
        removed = self.installer.cleanup_interrupted()
        if removed:
            logger.info("removed what an interrupted update left: %s", ", ".join(removed))

    def _forget_other_downloads(self, keep: Path) -> None:
        for path in self.layout.downloads.iterdir():
            if path.name not in (keep.name, keep.name + ".part"):
                path.unlink(missing_ok=True)

    def _client(self) -> httpx.AsyncClient:
        # Redirects are fine (a CDN, S3): what is trusted is the signed hash, not the address.
        return httpx.AsyncClient(follow_redirects=True, max_redirects=5, transport=self.transport)

    def _result_of(self, error: UpdateError, version: str | None = None) -> UpdateResult:
        # Network and disk trouble is retried at the next check; everything else is a refusal.
        trouble = isinstance(error, DownloadFailed | InstallFailed) or (
            isinstance(error, ManifestRejected) and error.code in ("unreachable", "http_status")
        )
        status = UpdateStatus.FAILED if trouble else UpdateStatus.REJECTED
        (logger.warning if trouble else logger.error)("runtime update %s: %s", status.value, error)
        return UpdateResult(status, str(error), version=version, code=error.code)
