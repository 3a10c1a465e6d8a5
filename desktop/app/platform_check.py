"""Before the window opens on Linux/X11: are the system libraries Qt's xcb platform plugin needs there?

Without them Qt prints "could not load the Qt platform plugin "xcb"" and aborts, which names none of
what is missing. The wheel ships Qt itself but not these X11/OpenGL/font libraries of the system; the
list is what ``ldd`` shows ``plugins/platforms/libqxcb.so`` (and its ``libQt6XcbQpa``) loading from
outside the wheel. Each is looked up as the dynamic loader would (``dlopen`` of the exact soname), and
what is missing is named with the package that provides it on Debian/Ubuntu and on Fedora.

Qt-free: it runs before the ``QApplication`` is made, which is when Qt loads the plugin.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from desktop.i18n import translate

__all__ = [
    "EXIT_MISSING_LIBRARIES",
    "XCB_LIBRARIES",
    "SystemLibrary",
    "missing_libraries",
    "missing_libraries_message",
    "would_use_xcb",
    "xcb_problem",
]

EXIT_MISSING_LIBRARIES = 3
"""The status of a configuration problem, as ``cowork exec`` uses it."""


@dataclass(frozen=True)
class SystemLibrary:
    soname: str
    debian: str
    fedora: str


XCB_LIBRARIES: tuple[SystemLibrary, ...] = (
    SystemLibrary("libxcb.so.1", "libxcb1", "libxcb"),
    SystemLibrary("libX11.so.6", "libx11-6", "libX11"),
    SystemLibrary("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    SystemLibrary("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    SystemLibrary("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    SystemLibrary("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    SystemLibrary("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    SystemLibrary("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    SystemLibrary("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    SystemLibrary("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    SystemLibrary("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    SystemLibrary("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    SystemLibrary("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    SystemLibrary("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    SystemLibrary("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    SystemLibrary("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
    SystemLibrary("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    SystemLibrary("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    SystemLibrary("libGL.so.1", "libgl1", "libglvnd-glx"),
    SystemLibrary("libEGL.so.1", "libegl1", "libglvnd-egl"),
    SystemLibrary("libfontconfig.so.1", "libfontconfig1", "fontconfig"),
    SystemLibrary("libfreetype.so.6", "libfreetype6", "freetype"),
    SystemLibrary("libglib-2.0.so.0", "libglib2.0-0", "glib2"),
    SystemLibrary("libgthread-2.0.so.0", "libglib2.0-0", "glib2"),
    SystemLibrary("libdbus-1.so.3", "libdbus-1-3", "dbus-libs"),
)


def loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (what Qt's plugin loading will ask it)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def would_use_xcb(environ: Mapping[str, str], argv: Sequence[str], platform: str = sys.platform) -> bool:
    """Whether Qt would load its xcb plugin: Linux, and the platform asked for (``-platform``, else
    ``QT_QPA_PLATFORM``, whose first entry Qt tries first) is xcb, or none is and an X display is
    set outside a Wayland session (where Qt prefers its wayland plugin)."""
    if not platform.startswith("linux"):
        return False
    chosen = ""
    for index, argument in enumerate(argv):
        if argument in ("-platform", "--platform") and index + 1 < len(argv):
            chosen = argv[index + 1]
        elif argument.startswith("-platform="):
            chosen = argument.partition("=")[2]
    chosen = chosen or environ.get("QT_QPA_PLATFORM", "")
    first = chosen.split(";")[0].split(":")[0].strip().lower()
    if first:
        return first == "xcb"
    if not environ.get("DISPLAY"):
        return False
    wayland = environ.get("XDG_SESSION_TYPE", "").lower() == "wayland" and bool(
        environ.get("WAYLAND_DISPLAY")
    )
    return not wayland


def missing_libraries(
    libraries: Sequence[SystemLibrary] = XCB_LIBRARIES, *, lookup: Callable[[str], bool] | None = None
) -> list[SystemLibrary]:
    """Those of ``libraries`` the loader does not find (``lookup``: :func:`loadable` by default)."""
    found = lookup or loadable
    return [library for library in libraries if not found(library.soname)]


def missing_libraries_message(missing: Sequence[SystemLibrary]) -> str:
    """What to install, for the terminal: the libraries, then one command per distribution family."""
    debian = sorted({library.debian for library in missing})
    fedora = sorted({library.fedora for library in missing})
    names = ", ".join(library.soname for library in missing)
    return translate(
        "PlatformCheck",
        "Cowork cannot open its window: Qt's X11 (xcb) platform needs system libraries that are not"
        " installed: {names}.\n"
        "Install them, then start Cowork again:\n"
        "  Debian/Ubuntu:  sudo apt install {debian}\n"
        "  Fedora/RHEL:    sudo dnf install {fedora}\n"
        "On a Wayland desktop, QT_QPA_PLATFORM=wayland uses Wayland instead; without a display,"
        " 'cowork exec' runs a task in the terminal.",
    ).format(names=names, debian=" ".join(debian), fedora=" ".join(fedora))


def xcb_problem(
    environ: Mapping[str, str],
    argv: Sequence[str],
    *,
    lookup: Callable[[str], bool] | None = None,
    platform: str = sys.platform,
) -> str | None:
    """The message to print instead of opening the window, or None when the window can open."""
    if not would_use_xcb(environ, argv, platform):
        return None
    missing = missing_libraries(lookup=lookup)
    return missing_libraries_message(missing) if missing else None
