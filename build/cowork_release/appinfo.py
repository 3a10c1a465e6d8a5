"""What the desktop app's package is called and says about itself, shared by the spec and ``app``.

``installer/cowork.spec`` reads its names, Info.plist and Windows version numbers from here, and
``cowork-release app`` the places it fills in afterwards, so the two cannot disagree on where the
bundled runtime or ``update.json`` go. The layout is the one the desktop looks in
(``desktop.updater.active.app_resources_dir``): beside the program on Linux and Windows,
``Contents/Resources`` in the macOS ``.app``.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from packaging.version import InvalidVersion, Version

from contracts.release import Platform
from cowork_release.errors import ReleaseError

__all__ = [
    "APP_NAME",
    "BUNDLE_IDENTIFIER",
    "CLI_NAME",
    "COPYRIGHT",
    "DISTRIBUTION",
    "ICON_SOURCE",
    "MACOS_MINIMUM",
    "REPO_ROOT",
    "RUNTIME_DIR_NAME",
    "UPDATE_CONFIG_NAME",
    "WINDOWS_ICON",
    "app_version",
    "desktop_entry",
    "info_plist",
    "linux_tarball_name",
    "program_name",
    "resources_dir",
    "windows_version_numbers",
]

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DISTRIBUTION = "cowork"
APP_NAME = "Cowork"
CLI_NAME = "cowork-cli"
"""The console program beside the windowed one (``desktop.launch.child.CLI_PROGRAM``)."""
BUNDLE_IDENTIFIER = "dev.cowork.desktop"
COPYRIGHT = "Copyright © The Cowork authors"
# PySide6 6.11's Qt supports macOS 13 and later (doc.qt.io "Qt for macOS", supported configurations);
# the app cannot start on an older system, so Finder says so instead of the app crashing.
MACOS_MINIMUM = "13.0"
ICON_SOURCE = REPO_ROOT / "installer" / "icons" / "cowork.png"
WINDOWS_ICON = REPO_ROOT / "installer" / "icons" / "cowork.ico"
"""Drawn per size (legible at 16 px), as the installer's own icon; PyInstaller's conversion of the PNG
would only scale it down."""

RUNTIME_DIR_NAME = "runtime"
"""``desktop.updater.active.BUNDLED_DIR_NAME``."""
UPDATE_CONFIG_NAME = "update.json"
"""``desktop.updater.active.UPDATE_CONFIG_NAME``."""


def app_version() -> str:
    """The app's version: the installed ``cowork`` distribution's (pyproject ``version``)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ReleaseError(f"the {DISTRIBUTION} distribution is not installed: pip install -e .") from None


def program_name(platform: Platform, *, console: bool = False) -> str:
    """``Cowork`` / ``cowork-cli``, with ``.exe`` on Windows."""
    name = CLI_NAME if console else APP_NAME
    return f"{name}.exe" if platform == "windows-x64" else name


def resources_dir(app: Path, platform: Platform) -> Path:
    """Where the bundled runtime and ``update.json`` go in the built app (``OUT/Cowork`` or
    ``OUT/Cowork.app``)."""
    return app / "Contents" / "Resources" if platform.startswith("darwin") else app


def info_plist(version: str) -> dict[str, object]:
    """Info.plist entries of ``Cowork.app`` beyond PyInstaller's own (it sets the executable, the
    icon file and the identifier)."""
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleShortVersionString": version,
        "CFBundleVersion": version,
        "NSHighResolutionCapable": True,
        # PyInstaller's BUNDLE takes `console` from the COLLECT, which takes it from its last EXE —
        # cowork-cli, a console program — and then marks the app LSBackgroundOnly: no Dock icon, no
        # menu bar, a window that cannot come to the front. Cowork.app is a foreground app.
        "LSBackgroundOnly": False,
        "LSMinimumSystemVersion": MACOS_MINIMUM,
        "NSHumanReadableCopyright": COPYRIGHT,
        "LSApplicationCategoryType": "public.app-category.developer-tools",
    }


def windows_version_numbers(version: str) -> tuple[int, int, int, int]:
    """The four 16-bit numbers of a Windows version resource: the PEP 440 release, padded with zeros
    (``1.2`` → 1.2.0.0; a pre-release such as ``1.3.0b1`` shows as 1.3.0.0, its text says the rest)."""
    try:
        release = Version(version).release
    except InvalidVersion:
        raise ReleaseError(f"{version!r} is not a PEP 440 version") from None
    if len(release) > 4 or any(number > 0xFFFF for number in release):
        raise ReleaseError(f"{version} does not fit a Windows version resource (four numbers up to 65535)")
    padded = (*release, 0, 0, 0, 0)[:4]
    return padded[0], padded[1], padded[2], padded[3]


def linux_tarball_name(version: str) -> str:
    return f"cowork-{version}-linux-x86_64.tar.gz"


def desktop_entry() -> str:
    """``cowork.desktop`` for the Linux tarball: the freedesktop.org launcher entry. ``Exec`` and
    ``Icon`` are names, as a package installs them (``Cowork`` on the PATH, ``cowork`` in the icon
    theme); installing by hand means linking ``Cowork`` into ``~/.local/bin`` and copying both."""
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            f"Name={APP_NAME}",
            "GenericName=Agent workbench",
            "Comment=Local-first desktop agent for your projects",
            f"Exec={APP_NAME}",
            "Icon=cowork",
            "Terminal=false",
            "Categories=Development;",
            "",
        ]
    )
