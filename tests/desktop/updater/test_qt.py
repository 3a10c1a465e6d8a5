"""The window's updater adapter: rounds off the GUI thread, stage/progress/result signals, scheduling."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop.updater.active import active_runtime
from desktop.updater.download import DownloadLimits
from desktop.updater.qt import RuntimeUpdater
from desktop.updater.service import UpdateProgress, UpdateResult, UpdateService, UpdateStage, UpdateStatus
from tests.support.release_server import Behaviour, ReleaseServer
from tests.updater.support import ReleaseSite, build_bundle, unpack_plainly


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[ReleaseSite, ReleaseServer]]:
    release_site = ReleaseSite(tmp_path / "site")
    with ReleaseServer(release_site.directory) as server:
        yield release_site, server


@pytest.fixture
def service(site: tuple[ReleaseSite, ReleaseServer], tmp_path: Path) -> UpdateService:
    release_site, server = site
    bundled = unpack_plainly(build_bundle(tmp_path, "1.0.0"), tmp_path / "app" / "runtime")
    return UpdateService(
        server.url + "manifest.json",
        root=tmp_path / "data",
        root_keys=release_site.roots,
        platform="linux-x86_64",
        desktop_version="1.0",
        bundled_dir=bundled,
        download_limits=DownloadLimits(stall_seconds=30.0),
    )


def test_a_round_reports_its_stages_and_progress_and_ends_with_the_result(
    qtbot: QtBot, site: tuple[ReleaseSite, ReleaseServer], service: UpdateService
) -> None:
    release_site, _ = site
    archive = build_bundle(release_site.directory, "1.1.0")
    release_site.publish([release_site.release("1.1.0", archive)])
    updater = RuntimeUpdater(service)
    stages: list[str] = []
    progress: list[tuple[int, int]] = []
    updater.stageChanged.connect(stages.append)
    updater.progressChanged.connect(lambda done, total: progress.append((done, total)))
    reports: list[UpdateProgress] = []
    updater.progressed.connect(reports.append)

    with qtbot.waitSignal(updater.finished, timeout=30_000) as finished:
        assert updater.check_now()
        assert not updater.check_now()  # one round at a time
        assert updater.running

    result = finished.args[0]
    assert isinstance(result, UpdateResult)
    assert result.status is UpdateStatus.INSTALLED, result.message
    assert stages[0] == "checking"
    assert stages[-3:] == ["health_check", "activating", "idle"]
    assert "downloading" in stages
    assert progress[-1] == (archive.stat().st_size, archive.stat().st_size)
    # The reports the window draws: every stage once, the download's bytes with the version.
    assert [r.stage for r in reports if r.stage is not UpdateStage.DOWNLOADING][-3:] == [
        UpdateStage.INSTALLING,
        UpdateStage.HEALTH_CHECK,
        UpdateStage.ACTIVATING,
    ]
    downloads = [r for r in reports if r.stage is UpdateStage.DOWNLOADING]
    assert downloads[-1] == UpdateProgress(UpdateStage.DOWNLOADING, *progress[-1], version="1.1.0")
    assert not updater.running
    assert updater.last_result is result
    assert active_runtime(service.layout.root, bundled=service.installer.bundled_dir).version == "1.1.0"


def test_the_first_round_runs_shortly_after_start(
    qtbot: QtBot, site: tuple[ReleaseSite, ReleaseServer], service: UpdateService
) -> None:
    release_site, _ = site
    release_site.publish([release_site.release("1.0.0", build_bundle(release_site.directory, "1.0.0"))])
    updater = RuntimeUpdater(service, first_delay_seconds=0.05, interval_hours=1.0)
    with qtbot.waitSignal(updater.finished, timeout=30_000) as finished:
        updater.start()
    assert finished.args[0].status is UpdateStatus.UP_TO_DATE
    updater.stop()


def test_stop_cancels_a_round_in_flight(
    qtbot: QtBot, site: tuple[ReleaseSite, ReleaseServer], service: UpdateService
) -> None:
    release_site, server = site
    archive = build_bundle(release_site.directory, "1.1.0")
    release_site.publish([release_site.release("1.1.0", archive)])
    server.behave(archive.name, Behaviour(stall_after=100))
    updater = RuntimeUpdater(service)
    with qtbot.waitSignal(updater.stageChanged, timeout=10_000, check_params_cb=lambda s: s == "downloading"):
        updater.check_now()
    with qtbot.waitSignal(updater.stageChanged, timeout=10_000, check_params_cb=lambda s: s == "idle"):
        updater.stop(timeout=5)
    assert updater.last_result is None
    assert not updater.running
    assert active_runtime(service.layout.root, bundled=service.installer.bundled_dir).source == "bundled"
