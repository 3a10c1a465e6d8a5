"""The whole round on loopback: find, download, verify, unpack, health-check and activate."""

from __future__ import annotations

from pathlib import Path

from desktop.updater.active import active_runtime
from desktop.updater.service import UpdateProgress, UpdateStage, UpdateStatus
from tests.support.release_server import ReleaseServer
from tests.updater.conftest import ServiceFactory
from tests.updater.support import PLATFORM, ReleaseSite, build_bundle


async def test_a_newer_runtime_is_installed_and_used_by_the_next_session(
    site: ReleaseSite, server: ReleaseServer, make_service: ServiceFactory, root: Path, bundled: Path
) -> None:
    assert active_runtime(root, bundled=bundled).source == "bundled"
    archive = build_bundle(site.directory, "1.1.0")
    site.publish([site.release("1.1.0", archive)])
    progress: list[UpdateProgress] = []

    result = await make_service().update(progress.append)

    assert result.status is UpdateStatus.INSTALLED, result.message
    assert result.version == "1.1.0"
    active = active_runtime(root, bundled=bundled)
    assert (active.version, active.source) == ("1.1.0", "installed")
    assert active.executable == root / "versions" / "1.1.0" / "agent-runtime" / "cowork-agent-runtime"
    stages = [p.stage for p in progress]
    assert stages[0] is UpdateStage.CHECKING
    assert stages[-2:] == [UpdateStage.HEALTH_CHECK, UpdateStage.ACTIVATING]
    downloads = [p for p in progress if p.stage is UpdateStage.DOWNLOADING]
    assert downloads[-1].done == downloads[-1].total == archive.stat().st_size
    assert not list((root / "updater" / "downloads").iterdir())
    assert PLATFORM in archive.name
