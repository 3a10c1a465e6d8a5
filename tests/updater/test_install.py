"""Side-by-side installation, the pointer, rollback, and installations interrupted by a crash."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.updater.active import active_runtime
from desktop.updater.errors import InstallFailed
from desktop.updater.install import Installer
from desktop.updater.layout import InstallLayout, read_pointer
from desktop.updater.service import UpdateStatus
from tests.support.peers import REPO_ROOT
from tests.updater.conftest import ServiceFactory
from tests.updater.support import PLATFORM, ReleaseSite, build_bundle


@pytest.fixture
def installer(root: Path, bundled: Path) -> Installer:
    layout = InstallLayout(root)
    layout.create()
    return Installer(layout, bundled_dir=bundled)


def install(installer: Installer, tmp_path: Path, version: str) -> None:
    archive = build_bundle(tmp_path, version)
    installer.activate(installer.unpack(archive, version=version, platform=PLATFORM))


def test_versions_are_installed_side_by_side_and_the_previous_one_is_kept(
    installer: Installer, tmp_path: Path, root: Path, bundled: Path
) -> None:
    install(installer, tmp_path, "1.1.0")
    pointer = read_pointer(installer.layout)
    assert pointer is not None
    assert pointer.active.version == "1.1.0"
    assert pointer.previous is None  # the bundled runtime

    install(installer, tmp_path, "1.2.0")
    pointer = read_pointer(installer.layout)
    assert pointer is not None
    assert (pointer.active.version, getattr(pointer.previous, "version", None)) == ("1.2.0", "1.1.0")
    assert sorted(p.name for p in (root / "versions").iterdir()) == ["1.1.0", "1.2.0"]
    assert active_runtime(root, bundled=bundled).version == "1.2.0"


def test_garbage_collection_keeps_the_active_the_previous_and_running_versions(
    installer: Installer, tmp_path: Path, root: Path
) -> None:
    for version in ("1.1.0", "1.2.0", "1.3.0", "1.4.0"):
        install(installer, tmp_path, version)
    removed = installer.collect_garbage(keep={"1.1.0"})
    assert removed == ["1.2.0"]
    assert sorted(p.name for p in (root / "versions").iterdir()) == ["1.1.0", "1.3.0", "1.4.0"]


def test_a_rollback_returns_to_the_previous_version_and_marks_the_version_bad(
    installer: Installer, tmp_path: Path, root: Path, bundled: Path
) -> None:
    install(installer, tmp_path, "1.1.0")
    install(installer, tmp_path, "1.2.0")
    rollback = installer.rollback("1.2.0", "it crashed")
    assert rollback is not None
    assert (rollback.from_version, rollback.to_version) == ("1.2.0", "1.1.0")
    assert active_runtime(root, bundled=bundled).version == "1.1.0"
    assert installer.state.bad_versions() == {"1.2.0": "it crashed"}
    # From the first installed version, a rollback returns to the runtime bundled with the app.
    assert installer.rollback("1.1.0", "it crashed too") is not None
    assert active_runtime(root, bundled=bundled).source == "bundled"
    assert read_pointer(installer.layout) is None


def test_no_rollback_when_nothing_would_be_left_to_start(root: Path, tmp_path: Path) -> None:
    layout = InstallLayout(root)
    layout.create()
    installer = Installer(layout, bundled_dir=tmp_path / "no-bundled-runtime")
    install(installer, tmp_path, "1.1.0")
    assert installer.rollback("1.1.0", "crashed") is None
    assert active_runtime(root, bundled=tmp_path / "no-bundled-runtime").version == "1.1.0"


def test_a_version_that_is_not_active_is_never_rolled_back(installer: Installer, tmp_path: Path) -> None:
    install(installer, tmp_path, "1.1.0")
    assert installer.rollback("0.9.0", "crashed") is None
    assert installer.state.bad_versions() == {}


def test_a_second_installer_is_refused_while_one_runs(installer: Installer, root: Path) -> None:
    other = Installer(InstallLayout(root))
    with installer.exclusive():
        with pytest.raises(InstallFailed) as caught, other.exclusive():
            pass
        assert caught.value.code == "busy"
    with other.exclusive():
        pass


_UNPACK_SCRIPT = """
import sys
from pathlib import Path
from desktop.updater.install import Installer
from desktop.updater.layout import InstallLayout
layout = InstallLayout(Path(sys.argv[1]))
layout.create()
Installer(layout).unpack(Path(sys.argv[2]), version=sys.argv[3], platform="linux-x86_64")
"""


def kill_mid_extract(root: Path, archive: Path) -> None:
    """Unpack ``archive`` in a process of its own and SIGKILL it while it writes the big file."""
    child = subprocess.Popen(
        [sys.executable, "-c", _UNPACK_SCRIPT, str(root), str(archive), "1.2.0"], cwd=REPO_ROOT
    )
    staging = root / "updater" / "staging"
    deadline = time.monotonic() + 30
    while not list(staging.glob("*/agent-runtime/_internal/big.bin")):
        assert child.poll() is None, "the unpack finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()


async def test_an_install_killed_mid_extract_leaves_the_previous_runtime_and_is_cleaned_up(
    installer: Installer,
    tmp_path: Path,
    root: Path,
    bundled: Path,
    make_service: ServiceFactory,
    site: ReleaseSite,
) -> None:
    install(installer, tmp_path, "1.1.0")
    archive = build_bundle(site.directory, "1.2.0", extra={"_internal/big.bin": bytes(64 << 20)})
    await asyncio.to_thread(kill_mid_extract, root, archive)
    staging = root / "updater" / "staging"

    assert list(staging.iterdir()), "the crash left a partial staging tree"
    assert not (root / "versions" / "1.2.0").exists()
    assert active_runtime(root, bundled=bundled).version == "1.1.0"

    site.publish([site.release("1.2.0", archive)])
    result = await make_service().update()
    assert result.status is UpdateStatus.INSTALLED, result.message
    assert list(staging.iterdir()) == []
    assert active_runtime(root, bundled=bundled).version == "1.2.0"


async def test_an_install_interrupted_before_the_pointer_switch_is_checked_and_completed(
    installer: Installer,
    tmp_path: Path,
    root: Path,
    bundled: Path,
    make_service: ServiceFactory,
    site: ReleaseSite,
) -> None:
    install(installer, tmp_path, "1.1.0")
    archive = build_bundle(site.directory, "1.2.0")
    installer.unpack(archive, version="1.2.0", platform=PLATFORM)  # renamed in, never activated
    (root / ".active.json.x1y2.tmp").write_text('{"active": {"version": "6.6.6"')  # a half-written pointer
    assert active_runtime(root, bundled=bundled).version == "1.1.0"

    site.publish([site.release("1.2.0", archive)])
    result = await make_service().update()

    assert result.status is UpdateStatus.INSTALLED, result.message
    assert active_runtime(root, bundled=bundled).version == "1.2.0"
    assert not (root / ".active.json.x1y2.tmp").exists()


async def test_a_damaged_installation_found_after_a_crash_is_replaced(
    installer: Installer,
    tmp_path: Path,
    root: Path,
    bundled: Path,
    make_service: ServiceFactory,
    site: ReleaseSite,
) -> None:
    archive = build_bundle(site.directory, "1.2.0")
    installer.unpack(archive, version="1.2.0", platform=PLATFORM)
    damaged = root / "versions/1.2.0/agent-runtime/_internal/VERSION"
    damaged.chmod(0o644)
    damaged.write_text("half-writ")
    site.publish([site.release("1.2.0", archive)])

    result = await make_service().update()

    assert result.status is UpdateStatus.INSTALLED, result.message
    assert damaged.read_text() == "1.2.0"
    assert active_runtime(root, bundled=bundled).version == "1.2.0"
