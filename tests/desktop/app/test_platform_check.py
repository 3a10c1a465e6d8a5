"""Before the window opens on Linux/X11, missing system libraries of Qt's xcb plugin are named with the
packages to install, instead of Qt's bare "could not load the platform plugin" abort."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from desktop.app.platform_check import (
    XCB_LIBRARIES,
    missing_libraries,
    missing_libraries_message,
    would_use_xcb,
    xcb_problem,
)
from tests.support.peers import REPO_ROOT

X11 = {"DISPLAY": ":0"}


@pytest.mark.parametrize(
    ("environ", "argv", "platform", "expected"),
    [
        (X11, [], "linux", True),
        ({}, [], "linux", False),  # no display: nothing to open a window on
        ({**X11, "QT_QPA_PLATFORM": "offscreen"}, [], "linux", False),
        ({**X11, "QT_QPA_PLATFORM": "wayland;xcb"}, [], "linux", False),
        ({"QT_QPA_PLATFORM": "xcb"}, [], "linux", True),
        ({**X11, "XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, [], "linux", False),
        (X11, ["-platform", "offscreen"], "linux", False),
        ({"QT_QPA_PLATFORM": "offscreen"}, ["-platform", "xcb"], "linux", True),
        (X11, [], "darwin", False),
        (X11, [], "win32", False),
    ],
)
def test_only_an_xcb_window_is_checked(
    environ: dict[str, str], argv: list[str], platform: str, expected: bool
) -> None:
    assert would_use_xcb(environ, argv, platform) is expected


@pytest.mark.parametrize(
    ("absent", "debian", "fedora"),
    [
        ({"libxcb-cursor.so.0"}, "libxcb-cursor0", "xcb-util-cursor"),
        (
            {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"},
            "libxcb-icccm4 libxcb-keysyms1",
            "xcb-util-keysyms xcb-util-wm",
        ),
        ({"libxkbcommon-x11.so.0"}, "libxkbcommon-x11-0", "libxkbcommon-x11"),
        ({"libEGL.so.1", "libGL.so.1"}, "libegl1 libgl1", "libglvnd-egl libglvnd-glx"),
        ({"libglib-2.0.so.0", "libgthread-2.0.so.0"}, "libglib2.0-0", "glib2"),
        ({"libfontconfig.so.1"}, "libfontconfig1", "fontconfig"),
    ],
)
def test_the_message_names_each_missing_library_and_its_packages(
    absent: set[str], debian: str, fedora: str
) -> None:
    missing = missing_libraries(lookup=lambda soname: soname not in absent)
    assert {library.soname for library in missing} == absent
    message = missing_libraries_message(missing)
    for soname in absent:
        assert soname in message
    assert f"sudo apt install {debian}\n" in message
    assert f"sudo dnf install {fedora}\n" in message


def test_nothing_is_said_when_everything_is_there_or_the_platform_is_not_xcb() -> None:
    assert xcb_problem(X11, [], lookup=lambda _soname: True, platform="linux") is None
    assert xcb_problem({}, [], lookup=lambda _soname: False, platform="linux") is None
    assert "libxcb-cursor.so.0" in (xcb_problem(X11, [], lookup=lambda _s: False, platform="linux") or "")


def test_every_library_has_both_package_names() -> None:
    assert all(library.debian and library.fedora for library in XCB_LIBRARIES)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb platform is Linux's")
@pytest.mark.parametrize("command", [[], ["open", "."]])
def test_the_real_entry_point_says_what_to_install_and_exits_non_zero(command: list[str]) -> None:
    # The loader is told libxcb-cursor is absent, as on a fresh minimal install; everything else is real.
    program = (
        "import sys, desktop.app.platform_check as check\n"
        "real = check.loadable\n"
        "check.loadable = lambda soname: soname != 'libxcb-cursor.so.0' and real(soname)\n"
        "from desktop.cli import main\n"
        f"sys.exit(main({command!r}))\n"
    )
    env = {
        key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")
    }
    env["DISPLAY"] = ":97"
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 3, result.stderr
    assert "libxcb-cursor.so.0" in result.stderr
    # This machine may miss more than the library hidden here: each command names at least it.
    [apt] = [line for line in result.stderr.splitlines() if "sudo apt install" in line]
    [dnf] = [line for line in result.stderr.splitlines() if "sudo dnf install" in line]
    assert "libxcb-cursor0" in apt.split()
    assert "xcb-util-cursor" in dnf.split()
    assert "could not load the Qt platform plugin" not in result.stderr
