"""Crash-loop detection: a newly activated runtime that keeps crashing right after start is rolled back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.updater.active import active_runtime
from desktop.updater.crashloop import CrashLoopGuard, CrashLoopWatch
from desktop.updater.install import Installer, Rollback
from desktop.updater.layout import InstallLayout
from desktop.updater.service import UpdateStatus
from tests.updater.conftest import ServiceFactory
from tests.updater.support import PLATFORM, PROGRAM, ReleaseSite, build_bundle


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def two_versions(root: Path, bundled: Path, site: ReleaseSite) -> Installer:
    """1.1.0 installed, then 1.2.0 activated over it."""
    installer = Installer(InstallLayout(root), bundled_dir=bundled)
    installer.layout.create()
    for version in ("1.1.0", "1.2.0"):
        archive = build_bundle(site.directory, version)
        installer.activate(installer.unpack(archive, version=version, platform=PLATFORM))
    return installer


def guard(root: Path, bundled: Path, clock: Clock) -> CrashLoopGuard:
    return CrashLoopGuard(root, bundled_dir=bundled, max_quick_crashes=3, quick_seconds=30, clock=clock)


def crash_quickly(crashes: CrashLoopGuard, clock: Clock, version: str = "1.2.0") -> object:
    run = crashes.record_start(version)
    clock.now += 2
    return crashes.record_exit(run, crashed=True)


async def test_three_quick_crashes_roll_back_and_the_version_is_never_installed_again(
    two_versions: Installer,
    root: Path,
    bundled: Path,
    clock: Clock,
    site: ReleaseSite,
    make_service: ServiceFactory,
) -> None:
    crashes = guard(root, bundled, clock)
    assert crash_quickly(crashes, clock) is None
    assert crash_quickly(crashes, clock) is None
    rollback = crash_quickly(crashes, clock)

    assert rollback is not None
    assert (rollback.from_version, rollback.to_version) == ("1.2.0", "1.1.0")  # type: ignore[attr-defined]
    assert "crashed 3 times within 30 s" in rollback.reason  # type: ignore[attr-defined]
    assert active_runtime(root, bundled=bundled).version == "1.1.0"
    assert "1.2.0" in two_versions.state.bad_versions()

    site.publish([site.release("1.2.0", site.directory / "agent-runtime-1.2.0-linux-x86_64.tar.gz")])
    result = await make_service().update()
    assert result.status is UpdateStatus.UP_TO_DATE, result
    assert active_runtime(root, bundled=bundled).version == "1.1.0"


def test_the_count_survives_an_app_restart(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    crash_quickly(guard(root, bundled, clock), clock)
    crash_quickly(guard(root, bundled, clock), clock)
    assert crash_quickly(guard(root, bundled, clock), clock) is not None


def test_a_clean_exit_proves_the_version_and_later_crashes_do_not_roll_it_back(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    crashes = guard(root, bundled, clock)
    crash_quickly(crashes, clock)
    crashes.record_exit(crashes.record_start("1.2.0"), crashed=False)
    for _ in range(5):
        assert crash_quickly(crashes, clock) is None
    assert active_runtime(root, bundled=bundled).version == "1.2.0"


def test_a_crash_after_a_long_run_is_not_a_crash_loop(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    crashes = guard(root, bundled, clock)
    run = crashes.record_start("1.2.0")
    clock.now += 600
    crashes.record_exit(run, crashed=True)
    for _ in range(4):
        assert crash_quickly(crashes, clock) is None


def test_crashes_of_a_version_that_is_not_active_roll_nothing_back(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    crashes = guard(root, bundled, clock)
    for _ in range(4):
        assert crash_quickly(crashes, clock, "1.1.0") is None
    assert active_runtime(root, bundled=bundled).version == "1.2.0"
    assert two_versions.state.bad_versions() == {}


def test_a_rollback_from_the_first_update_returns_to_the_bundled_runtime(
    root: Path, bundled: Path, clock: Clock, site: ReleaseSite
) -> None:
    installer = Installer(InstallLayout(root), bundled_dir=bundled)
    installer.layout.create()
    installer.activate(
        installer.unpack(build_bundle(site.directory, "1.1.0"), version="1.1.0", platform=PLATFORM)
    )
    crashes = guard(root, bundled, clock)
    for _ in range(3):
        rollback = crash_quickly(crashes, clock, "1.1.0")
    assert rollback is not None
    assert rollback.to_version == "1.0.0"
    assert active_runtime(root, bundled=bundled).source == "bundled"


def test_starts_without_an_exit_keep_their_version_from_garbage_collection(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    crashes = guard(root, bundled, clock)
    run = crashes.record_start("1.0.5")
    assert crashes.possibly_running() == {"1.0.5"}
    crashes.record_exit(run, crashed=False)
    assert crashes.possibly_running() == set()
    crashes.record_start("1.0.5")
    clock.now += 8 * 86400
    assert crashes.possibly_running() == set()


async def test_the_watch_reports_only_runs_of_the_active_installed_version_and_passes_on_the_rollback(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    rollbacks: list[Rollback] = []
    watch = CrashLoopWatch(guard(root, bundled, clock), on_rollback=rollbacks.append)
    active = active_runtime(root, bundled=bundled)
    assert active.source == "installed"

    # Not the installed version's program: a runtime from source, COWORK_RUNTIME_EXECUTABLE, the
    # previous version, the bundled runtime.
    previous = root / "versions/1.1.0/agent-runtime" / PROGRAM
    bundled_program = bundled / "agent-runtime" / PROGRAM
    for command in (
        [sys.executable, "-m", "agent_runtime"],
        ["/opt/rt"],
        [str(previous)],
        [str(bundled_program)],
    ):
        assert await watch.started(command) is None
    assert CrashLoopGuard(root, bundled_dir=bundled).possibly_running() == set()

    for _ in range(3):
        ended = await watch.started(active.command())
        assert ended is not None
        assert watch.guard.possibly_running() == {"1.2.0"}
        clock.now += 1
        await ended(True)
    [rollback] = rollbacks
    assert (rollback.from_version, rollback.to_version) == ("1.2.0", "1.1.0")
    assert active_runtime(root, bundled=bundled).version == "1.1.0"
    assert watch.guard.possibly_running() == set()


async def test_a_watch_that_cannot_write_lets_the_runtime_start(
    two_versions: Installer, root: Path, bundled: Path, clock: Clock
) -> None:
    (root / "updater" / "runs.json").mkdir()  # not a file: every write fails
    watch = CrashLoopWatch(guard(root, bundled, clock))
    assert await watch.started(active_runtime(root, bundled=bundled).command()) is None
