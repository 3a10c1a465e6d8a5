"""Following the operating system's light or dark appearance.

Colours come from the palette (``palette(...)`` in the style sheet), never hard-coded, so they follow
the system's scheme; the few exceptions — the banner's tone stripe, warnings — are chosen to read on
both. Qt ≥ 6.5 reports scheme changes (``QStyleHints.colorSchemeChanged``); the style sheet is then
applied again so every ``palette(...)`` reference is resolved against the new palette. Windows'
native style has no dark variant, so the Fusion style is used there when the system is dark.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

__all__ = ["STYLE_SHEET", "follow_system_theme", "is_dark"]

STYLE_SHEET = """
QFrame#userMessage { background: palette(alternate-base); border-radius: 8px; }
QFrame#assistantMessage { background: transparent; }
QLabel#speaker { font-weight: bold; color: palette(placeholder-text); }
QLabel#placeholder { color: palette(placeholder-text); padding: 24px; }
QLabel#conversationTitle { font-size: 15px; font-weight: bold; }
QLabel#conversationFolder { color: palette(placeholder-text); }
QLabel#taskState { color: palette(placeholder-text); }
QToolButton#toolHeader { text-align: left; padding: 2px 4px; border: none; }
QToolButton#toolHeader[state="failed"] { color: #c62828; }
QToolButton#toolHeader[state="denied"] { color: #b26a00; }
QToolButton#toolHeader[state="awaiting_approval"] { font-weight: bold; }
QWidget#conversationBody { background: palette(base); }
"""


def is_dark(app: QApplication) -> bool:
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None and scheme() != Qt.ColorScheme.Unknown:
        return bool(scheme() == Qt.ColorScheme.Dark)
    return app.palette().window().color().lightness() < 128


def _apply(app: QApplication) -> None:
    if sys.platform == "win32" and is_dark(app) and app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setStyleSheet(STYLE_SHEET)


def follow_system_theme(app: QApplication) -> None:
    _apply(app)
    changed = getattr(app.styleHints(), "colorSchemeChanged", None)
    if changed is not None:
        changed.connect(lambda _scheme: _apply(app))
