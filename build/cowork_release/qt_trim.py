"""Which of the Qt files PyInstaller collects the desktop app keeps (``installer/cowork.spec``).

The app uses five Qt modules — QtCore, QtGui, QtWidgets, QtNetwork (its local socket to the runtime)
and QtDBus (Linux desktop notifications) — from the ``PySide6-Essentials`` wheel. PyInstaller's Qt
hooks collect more than that: every plugin of the modules' plugin types, the shared libraries those
plugins link (QtQml and QtQuick come in with the virtual keyboard, QtPdf with the PDF image
format…), and Qt's translations for every language (the spec adds back, beside the app's own
catalogues, Qt's for the languages the app ships). The spec drops them here, by destination path, on
each platform's layout:

- Linux: ``PySide6/Qt/lib/libQt6Core.so.6``, ``PySide6/Qt/plugins/platforms/libqxcb.so``;
- macOS: ``PySide6/Qt/lib/QtCore.framework/…``, ``PySide6/Qt/plugins/platforms/libqcocoa.dylib``;
- Windows: ``PySide6/Qt6Core.dll``, ``PySide6/plugins/platforms/qwindows.dll``.

Plugins are kept by name (an allowlist: a plugin type Qt adds later is left out until someone needs
it); Qt libraries are dropped by name (a denylist: a library a kept plugin links must never go
missing, and ``tests/installer`` checks on Linux that none did).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

__all__ = [
    "DROPPED_QT_LIBRARIES",
    "KEPT_PLUGINS",
    "TocEntry",
    "keep_qt_entry",
    "keep_qt_file",
    "qt_library_name",
    "trim_binaries",
]

# Plugin directory → plugin names kept (without lib prefix and extension); "*" keeps the directory.
KEPT_PLUGINS: dict[str, dict[str, frozenset[str]]] = {
    "linux": {
        # X11 and Wayland sessions; offscreen for headless runs and tests
        "platforms": frozenset({"qxcb", "qwayland", "qoffscreen"}),
        "xcbglintegrations": frozenset({"*"}),
        # the standard shell protocol (wl-shell is obsolete and needs a library of its own)
        "wayland-shell-integration": frozenset({"xdg-shell"}),
        "wayland-decoration-client": frozenset({"*"}),
        "wayland-graphics-integration-client": frozenset({"*"}),
        # dark mode, fonts and file dialogs through the desktop portal (GNOME, KDE). Not qgtk3: it links
        # the GTK stack, which a package cannot ship whole, and half of it (glib, pango, cairo from the
        # build machine) loaded beside the user's own GTK is a known source of symbol-version crashes.
        "platformthemes": frozenset({"qxdgdesktopportal"}),
        # typing: dead keys and compose sequences, and input methods (CJK) through IBus
        "platforminputcontexts": frozenset(
            {"composeplatforminputcontextplugin", "ibusplatforminputcontextplugin"}
        ),
        # icon themes are SVG; dialog icons (standardIcon) come from them
        "iconengines": frozenset({"qsvgicon"}),
        "imageformats": frozenset({"qsvg"}),
    },
    "darwin": {
        "platforms": frozenset({"qcocoa", "qoffscreen"}),
        "styles": frozenset({"*"}),
        "iconengines": frozenset({"qsvgicon"}),
        "imageformats": frozenset({"qsvg"}),
    },
    "win32": {
        "platforms": frozenset({"qwindows", "qoffscreen"}),
        "styles": frozenset({"*"}),
        "iconengines": frozenset({"qsvgicon"}),
        "imageformats": frozenset({"qsvg"}),
    },
}

# Qt libraries no kept module or plugin uses, by module name (libQt6<name>, Qt6<name>.dll,
# Qt<name>.framework); a name matches itself and every longer name it begins (Quick → QuickControls2).
DROPPED_QT_LIBRARIES = (
    "Qml", "Quick", "Labs", "Pdf", "VirtualKeyboard", "Designer", "Help", "UiTools", "Sql", "Test",
    "Lottie", "ShaderTools", "Multimedia", "WebEngine", "WebChannel", "WebSockets", "WebView", "3D",
    "Charts", "DataVisualization", "Graphs", "StateMachine", "Scxml", "SvgWidgets", "OpenGLWidgets",
    "PrintSupport", "Concurrent", "Xml", "Positioning", "Location", "RemoteObjects", "Sensors",
    "SerialPort", "SerialBus", "Bluetooth", "Nfc", "TextToSpeech", "SpatialAudio", "HttpServer",
    "NetworkAuth", "WaylandCompositor", "WaylandEglCompositor", "WlShellIntegration", "EglFS", "EglFs",
    "CanvasPainter",
)  # fmt: skip

TocEntry = tuple[str, str, str]
"""PyInstaller's ``(destination, source, typecode)``."""

_LIBRARY = re.compile(
    r"^(?:lib)?Qt6(?P<so>[A-Za-z0-9]+)\.(?:so(?:\.\d+)*|dll)$"  # Linux, Windows
    r"|^Qt(?P<framework>[A-Za-z0-9]+)\.framework$"  # macOS
)
_PLUGIN_SUFFIXES = (".so", ".dylib", ".dll")


def qt_library_name(parts: Iterable[str]) -> str | None:
    """The Qt module a path belongs to (``Core`` for ``libQt6Core.so.6``, a framework's files), if any."""
    for part in parts:
        match = _LIBRARY.match(part)
        if match:
            return match.group("so") or match.group("framework")
    return None


def _plugin_name(file_name: str) -> str:
    stem = file_name
    for suffix in _PLUGIN_SUFFIXES:
        stem = stem.removesuffix(suffix)
    return stem.removeprefix("lib")


def keep_qt_file(destination: str, system: str) -> bool:
    """Whether the file PyInstaller would place at ``destination`` (relative to the app's
    ``_internal``) stays in the app built on ``system`` (``sys.platform``). Non-Qt files stay."""
    parts = PurePosixPath(destination.replace("\\", "/")).parts
    if not parts or parts[0] != "PySide6":
        return True
    if "translations" in parts and parts[-1].endswith(".qm"):
        return False  # the few the app uses go beside its own catalogues (installer/cowork.spec)
    if "plugins" in parts:
        index = parts.index("plugins")
        if len(parts) < index + 3:
            return True
        kept = KEPT_PLUGINS.get(system, {}).get(parts[index + 1], frozenset())
        return "*" in kept or _plugin_name(parts[index + 2]) in kept
    if parts[-1].startswith("libpyside6qml"):
        return False  # PySide6's QML support library, for the QtQml module the app does not use
    if parts[-1].lower() == "opengl32sw.dll":
        return False  # Windows' software OpenGL (Mesa, ~20 MB): widgets draw without OpenGL
    name = qt_library_name(parts)
    return name is None or not name.startswith(DROPPED_QT_LIBRARIES)


def keep_qt_entry(entry: TocEntry, system: str) -> bool:
    """:func:`keep_qt_file` for an entry of PyInstaller's TOC, ``(destination, source, typecode)``.

    PyInstaller links each library it collects into a subdirectory from the top of ``_internal``
    (a ``SYMLINK`` entry whose source is the target, relative to the link): the link goes with its
    target, or it would be left dangling.
    """
    destination, source, typecode = entry
    if not keep_qt_file(destination, system):
        return False
    if typecode != "SYMLINK":
        return True
    link_dir = posixpath.dirname(destination.replace("\\", "/"))
    target = posixpath.normpath(posixpath.join(link_dir, source.replace("\\", "/")))
    return keep_qt_file(target, system)


def trim_binaries(
    binaries: Iterable[TocEntry], system: str, imports: Callable[[str], Iterable[str]]
) -> list[TocEntry]:
    """``binaries`` without the Qt files :func:`keep_qt_entry` drops and, on Linux, without the
    system libraries PyInstaller collected only because a dropped plugin links them (the GTK theme's
    pango, cairo, gdk-pixbuf…). ``imports(source)`` names the libraries a binary links.

    A library stays if anything kept links it, or if nothing collected links it at all (it was
    collected for another reason, e.g. a ``ctypes`` load). macOS and Windows need no such pass: the
    system frameworks and DLLs Qt's plugins link are never collected there.
    """
    entries = list(binaries)
    kept = [entry for entry in entries if keep_qt_entry(entry, system)]
    if not system.startswith("linux"):
        return kept
    dropped = [entry for entry in entries if entry not in kept]
    top_level = {d: s for d, s, t in entries if t != "SYMLINK" and "/" not in d}

    def reach(roots: Iterable[TocEntry]) -> set[str]:
        seen: set[str] = set()
        pending = [source for _, source, typecode in roots if typecode != "SYMLINK"]
        while pending:
            for name in imports(pending.pop()):
                library = PurePosixPath(name).name
                if library not in seen:
                    seen.add(library)
                    if library in top_level:
                        pending.append(top_level[library])
        return seen

    # Libraries a dropped file links are candidates; those still linked from what stays are kept.
    candidates = reach(dropped) & top_level.keys()
    needed = reach(entry for entry in kept if entry[0] not in candidates)
    return [entry for entry in kept if entry[0] not in candidates or entry[0] in needed]
