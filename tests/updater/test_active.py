"""Which runtime a new session starts, and how the launch modules ask for it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.launch.errors import LaunchError
from desktop.launch.runtime import runtime_command
from desktop.updater.active import NoRuntimeAvailable, active_runtime, bundled_runtime_dir
from desktop.updater.install import Installer
from desktop.updater.layout import InstallLayout
from tests.support.peers import REPO_ROOT
from tests.updater.support import PLATFORM, PROGRAM, ReleaseSite, build_bundle


@pytest.fixture
def installer(root: Path, bundled: Path, site: ReleaseSite) -> Installer:
    installer = Installer(InstallLayout(root), bundled_dir=bundled)
    installer.layout.create()
    for version in ("1.1.0", "1.2.0"):
        archive = build_bundle(site.directory, version)
        installer.activate(installer.unpack(archive, version=version, platform=PLATFORM))
    return installer


def test_until_the_first_update_the_bundled_runtime_is_used(root: Path, bundled: Path) -> None:
    active = active_runtime(root, bundled=bundled)
    assert (active.version, active.source) == ("1.0.0", "bundled")
    assert active.command() == [str(bundled / "agent-runtime" / PROGRAM)]


def test_the_pointer_names_the_runtime_and_falls_back_when_it_is_unusable(
    installer: Installer, root: Path, bundled: Path
) -> None:
    assert active_runtime(root, bundled=bundled).version == "1.2.0"
    installer.state.mark_bad("1.2.0", "a rollback interrupted before its pointer switch")
    assert (active_runtime(root, bundled=bundled).version, active_runtime(root, bundled=bundled).source) == (
        "1.1.0",
        "previous",
    )
    (root / "versions/1.1.0/agent-runtime" / PROGRAM).unlink()
    assert active_runtime(root, bundled=bundled).source == "bundled"


@pytest.mark.parametrize(
    "pointer",
    [
        "{not json",
        json.dumps({"active": {"version": "../../../usr", "executable": "bin/sh"}, "previous": None}),
        json.dumps({"active": {"version": "1.2.0", "executable": "../../../../bin/sh"}, "previous": None}),
        json.dumps({"active": {"version": "1.2.0", "executable": "/bin/sh"}, "previous": None}),
    ],
)
def test_a_damaged_or_hostile_pointer_falls_back_to_the_bundled_runtime(
    installer: Installer, root: Path, bundled: Path, pointer: str
) -> None:
    (root / "active.json").write_text(pointer)
    assert active_runtime(root, bundled=bundled).source == "bundled"


def test_with_no_runtime_at_all_the_error_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NoRuntimeAvailable, match="reinstall Cowork"):
        active_runtime(tmp_path / "root", bundled=tmp_path / "nothing")


def test_the_bundled_runtime_lives_beside_the_app_or_in_its_macos_resources() -> None:
    assert bundled_runtime_dir("/opt/Cowork/cowork") == Path("/opt/Cowork/runtime")
    assert bundled_runtime_dir("/Applications/Cowork.app/Contents/MacOS/Cowork") == Path(
        "/Applications/Cowork.app/Contents/Resources/runtime"
    )


def test_runtime_command_from_source_frozen_and_overridden(
    installer: Installer, root: Path, bundled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert runtime_command({}) == [sys.executable, "-P", "-m", "agent_runtime"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr("desktop.updater.layout.default_root", lambda: root)
    monkeypatch.setattr("desktop.updater.active.default_root", lambda: root)
    assert runtime_command({}) == [str(root / "versions/1.2.0/agent-runtime" / PROGRAM)]
    assert runtime_command({"COWORK_RUNTIME_EXECUTABLE": "/opt/rt"}) == ["/opt/rt"]
    monkeypatch.setattr("desktop.updater.active.default_root", lambda: root / "empty")
    monkeypatch.setattr("desktop.updater.active.bundled_runtime_dir", lambda: bundled / "gone")
    with pytest.raises(LaunchError, match="No agent runtime is installed"):
        runtime_command({})


def test_the_launch_modules_load_the_updater_only_when_frozen() -> None:
    code = (
        "import sys, desktop.launch.runtime as r; r.runtime_command({}); "
        "print(sorted(m for m in sys.modules if m.startswith('desktop.updater')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_choosing_the_runtime_imports_nothing_heavy() -> None:
    code = (
        "import sys; from desktop.updater.active import active_runtime; "
        "heavy = ('pydantic', 'httpx', 'cryptography', 'contracts.release'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
