"""A read-only view of a unified diff, highlighted: added, removed, hunk headers, file headers, notes.

The colours follow the view's palette: one set for light backgrounds and one for dark, switched when
the system theme changes, each with at least 4.5:1 contrast against its background. Neutral text
(context lines, notes) keeps the palette's own colours.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from desktop.patch.model import LineKind, display_diff, line_kind

__all__ = ["DiffHighlighter", "DiffView", "is_dark", "status_colour"]

# GitHub's diff colours (foreground): light/dark pairs chosen for contrast on white and on near-black.
_COLOURS: dict[bool, dict[LineKind, str]] = {
    False: {"added": "#116329", "removed": "#a40e26", "hunk": "#0550ae"},
    True: {"added": "#7ee787", "removed": "#ffa198", "hunk": "#79c0ff"},
}

_IN_HUNKS = 1  # block state: this line is inside hunks (see model.line_kind)


_STATUS_KINDS: dict[str, LineKind] = {"created": "added", "deleted": "removed", "modified": "hunk"}


def is_dark(palette: QPalette) -> bool:
    """Whether text is shown on a dark background."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def status_colour(status: str, dark: bool) -> str:
    """The colour of a file's created/modified/deleted marker: the colour of its kind of diff line."""
    return _COLOURS[dark][_STATUS_KINDS.get(status, "hunk")]


class DiffHighlighter(QSyntaxHighlighter):
    def __init__(self, view: QPlainTextEdit) -> None:
        super().__init__(view.document())
        self._view = view
        self._dark = is_dark(view.palette())
        self._formats = self._make_formats()

    @property
    def dark(self) -> bool:
        return self._dark

    def format_for(self, kind: LineKind) -> QTextCharFormat:
        return self._formats.get(kind, QTextCharFormat())

    def follow_palette(self) -> None:
        """Re-colour after a palette change (the system switched between light and dark)."""
        dark = is_dark(self._view.palette())
        if dark != self._dark:
            self._dark = dark
            self._formats = self._make_formats()
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        kind, in_hunks = line_kind(text, self.previousBlockState() == _IN_HUNKS)
        self.setCurrentBlockState(_IN_HUNKS if in_hunks else 0)
        fmt = self._formats.get(kind)
        if fmt is not None and text:
            self.setFormat(0, len(text), fmt)

    def _make_formats(self) -> dict[LineKind, QTextCharFormat]:
        formats: dict[LineKind, QTextCharFormat] = {}
        for kind, colour in _COLOURS[self._dark].items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            formats[kind] = fmt
        header = QTextCharFormat()
        header.setFontWeight(QFont.Weight.Bold)
        formats["header"] = header
        note = QTextCharFormat()
        note.setFontItalic(True)
        note.setForeground(self._view.palette().color(QPalette.ColorRole.PlaceholderText))
        formats["note"] = note
        return formats


class DiffView(QPlainTextEdit):
    """A monospace, read-only, highlighted diff; very long diffs are cut with a line saying so."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Read-only text stays keyboard-operable: Tab in, arrows to move and scroll, Ctrl+A/C to copy.
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setTabChangesFocus(True)
        self.highlighter = DiffHighlighter(self)
        self._cut_note = ""

    @property
    def cut_note(self) -> str:
        """Why the diff shown is shorter than the diff sent; ``""`` when it is whole."""
        return self._cut_note

    def set_diff(self, diff: str) -> None:
        text, self._cut_note = display_diff(diff)
        self.setPlainText(f"{text}\n{self._cut_note}" if self._cut_note else text)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.follow_palette()
