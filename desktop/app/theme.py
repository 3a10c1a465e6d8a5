"""The app's light or dark appearance: the operating system's (the default), or Light or Dark as
chosen in Settings (``ui.theme`` in the settings file), applied at once to every open window.

Colours come from the palette (``palette(...)`` in the style sheet), never hard-coded, so they follow
the scheme; the few exceptions — the banner's tone stripe, warnings — are chosen to read on both.
Qt ≥ 6.5 reports system scheme changes (``QStyleHints.colorSchemeChanged``); the style sheet is then
applied again so every ``palette(...)`` reference is resolved against the new palette. A chosen Light
or Dark asks the platform for that scheme (``QStyleHints.setColorScheme``, for native dialogs and
title bars) and, as not every platform theme follows that request, sets the Fusion style with a
palette of that scheme itself. Windows' native style has no dark variant, so the Fusion style is used
there when the system is dark.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from desktop.settings.store import THEMES

__all__ = ["STYLE_SHEET", "THEMES", "AppTheme", "dark_palette", "follow_system_theme", "is_dark"]

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
QLineEdit:focus, QTextEdit:focus, QPlainTextEdit:focus, QAbstractItemView:focus, QComboBox:focus,
QAbstractSpinBox:focus, QToolButton:focus, QToolButton#toolHeader:focus
{ border: 2px solid palette(highlight); border-radius: 3px; }
"""
"""The focused control has a highlight-coloured frame, whatever the style draws (buttons, check boxes
and radio buttons keep the style's own focus rectangle)."""

_CHOSEN_PROPERTY = "coworkTheme"
"""Kept on the application, so :func:`is_dark` knows a chosen scheme without a handle on the theme."""


def is_dark(app: QApplication) -> bool:
    chosen = app.property(_CHOSEN_PROPERTY)
    if chosen in ("light", "dark"):
        return bool(chosen == "dark")
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None and scheme() != Qt.ColorScheme.Unknown:
        return bool(scheme() == Qt.ColorScheme.Dark)
    return app.palette().window().color().lightness() < 128


def dark_palette() -> QPalette:
    """A dark palette for the Fusion style, with readable disabled and placeholder text."""
    palette = QPalette()
    roles = QPalette.ColorRole
    colours = {
        roles.Window: "#2b2b2b",
        roles.WindowText: "#e8e8e8",
        roles.Base: "#1f1f1f",
        roles.AlternateBase: "#303030",
        roles.ToolTipBase: "#3a3a3a",
        roles.ToolTipText: "#e8e8e8",
        roles.PlaceholderText: "#9a9a9a",
        roles.Text: "#e8e8e8",
        roles.Button: "#353535",
        roles.ButtonText: "#e8e8e8",
        roles.BrightText: "#ff6b6b",
        roles.Light: "#474747",
        roles.Midlight: "#3c3c3c",
        roles.Mid: "#262626",
        roles.Dark: "#1a1a1a",
        roles.Shadow: "#0d0d0d",
        roles.Highlight: "#3d6fd6",
        roles.HighlightedText: "#ffffff",
        roles.Link: "#7fb0ff",
        roles.LinkVisited: "#c59cff",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7c7c7c"))
    return palette


class AppTheme:
    """The appearance chosen for the application; :meth:`apply` switches it at once."""

    def __init__(self, app: QApplication) -> None:
        self._app = app
        self._system_style = app.style().name()
        self.choice = "system"
        changed = getattr(app.styleHints(), "colorSchemeChanged", None)
        if changed is not None:
            changed.connect(lambda _scheme: self._follow_system())

    def apply(self, choice: str) -> str:
        """Show ``choice`` (``system``, ``light`` or ``dark``; anything else is ``system``); the theme
        now shown."""
        choice = choice if choice in THEMES else "system"
        previous, self.choice = self.choice, choice
        app = self._app
        app.setProperty(_CHOSEN_PROPERTY, choice)
        hints = app.styleHints()
        set_scheme = getattr(hints, "setColorScheme", None)
        if choice == "system":
            if previous != "system":  # back from a chosen scheme: the platform's style and palette again
                if hasattr(hints, "unsetColorScheme"):
                    hints.unsetColorScheme()
                app.setStyle(self._system_style)
                app.setPalette(QPalette())  # nothing set: every colour resolves to the platform's
        else:
            if set_scheme is not None:
                set_scheme(Qt.ColorScheme.Dark if choice == "dark" else Qt.ColorScheme.Light)
            app.setStyle("Fusion")
            app.setPalette(dark_palette() if choice == "dark" else app.style().standardPalette())
        _apply(app)
        return choice

    def _follow_system(self) -> None:
        if self.choice == "system":
            _apply(self._app)


def _apply(app: QApplication) -> None:
    if sys.platform == "win32" and is_dark(app) and app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setStyleSheet(STYLE_SHEET)


def follow_system_theme(app: QApplication, choice: str = "system") -> AppTheme:
    """The app's theme, applied: ``choice`` (Settings' ``ui.theme``), following the system's scheme
    while it is ``system``."""
    theme = AppTheme(app)
    theme.apply(choice)
    return theme
