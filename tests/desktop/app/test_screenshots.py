"""The README's screenshots: taken offscreen, and read back from a real X server (Xvfb) with ``--x11``
— the same pictures either way, so what the README shows is what a user's window shows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.support.peers import REPO_ROOT

SHOTS = {"main-window.png": (1280, 800), "approval-dialog.png": (680, 600), "patch-preview.png": (960, 480)}


def _take(output: Path, env: dict[str, str], *extra: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.desktop.app.screenshots", *extra, str(output)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def _pictures(folder: Path) -> dict[str, QImage]:
    return {name: QImage(str(folder / name)).convertToFormat(QImage.Format.Format_RGB32) for name in SHOTS}


def _colours(image: QImage) -> int:
    return len({image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)})


@pytest.fixture
def x_display() -> Iterator[str]:
    """A virtual X server of its own (a free display number Xvfb picks), stopped afterwards."""
    if shutil.which("Xvfb") is None or shutil.which("xwd") is None:
        pytest.skip("Xvfb and xwd are not installed (Debian/Ubuntu: apt install xvfb x11-apps)")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1440x900x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as told:
            number = told.readline().strip()
        assert number.isdigit(), "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _environment(**changes: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "QT_QPA_PLATFORM")}
    env.update(changes)
    return env


def test_the_screenshots_from_an_x_server_are_the_offscreen_ones(tmp_path: Path, x_display: str) -> None:
    _take(tmp_path / "offscreen", _environment(QT_QPA_PLATFORM="offscreen"))
    _take(tmp_path / "x11", _environment(DISPLAY=x_display), "--x11")

    offscreen, x11 = _pictures(tmp_path / "offscreen"), _pictures(tmp_path / "x11")
    for name, size in SHOTS.items():
        for pictures in (offscreen, x11):
            assert (pictures[name].width(), pictures[name].height()) == size, name
            assert _colours(pictures[name]) > 20, f"{name} is blank"
    # The patch preview shows nothing that changes from run to run (the others show times and a port):
    # read back from the server, it is the very picture Qt drew.
    assert x11["patch-preview.png"] == offscreen["patch-preview.png"]


def test_x11_mode_without_a_display_says_what_it_needs(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.desktop.app.screenshots", "--x11", str(tmp_path)],
        cwd=REPO_ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert "set DISPLAY" in result.stderr
    assert not any(tmp_path.iterdir())
