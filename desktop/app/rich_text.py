"""Read-only text views of the conversation: as tall as their text (the conversation scrolls, not each
message), wrapping anywhere a line is too long for the width (a long URL or path never widens the
pane), and inline code drawn as code: monospace on a tinted background."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QPalette,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

__all__ = ["AutoHeightBrowser", "code_background", "mark_inline_code"]


def code_background() -> QColor:
    """A tint of the text colour over the base: visible on light and dark themes alike. From the
    application's palette: the conversation's text views have transparent backgrounds."""
    palette = QGuiApplication.palette()
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    share = 0.08
    return QColor(
        round(base.red() * (1 - share) + text.red() * share),
        round(base.green() * (1 - share) + text.green() * share),
        round(base.blue() * (1 - share) + text.blue() * share),
    )


class AutoHeightBrowser(QTextBrowser):
    """A read-only rich-text view as tall as its text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenExternalLinks(True)
        # Ignored horizontally: the text wraps to the width it is given and never asks for more; the
        # height is fixed to the text's (no size hints in Python: an answer may hold hundreds of
        # these, and the layout asks each one for its hints on every frame).
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        # Transparent by palette, not by style sheet: one style sheet per view costs a millisecond each
        # when a long conversation opens.
        self.viewport().setAutoFillBackground(False)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, QColor(Qt.GlobalColor.transparent))
        self.setPalette(palette)
        # Tab moves on to the next control; the text stays selectable and its links reachable.
        self.setTabChangesFocus(True)
        document = self.document()
        document.setDocumentMargin(2)
        option = document.defaultTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        document.setDefaultTextOption(option)
        document.documentLayout().documentSizeChanged.connect(self._fit)

    def _fit(self, size: object = None) -> None:
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(max(height, 8))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if width > 0 and self.document().textWidth() != width:
            self.document().setTextWidth(width)
            self._fit()


def mark_inline_code(document: QTextDocument, start: int, background: QColor) -> None:
    """Give the monospace runs from ``start`` to the end a background: Qt's Markdown importer makes
    `code` monospace only. Only the text from ``start`` is visited, so a streaming answer pays for
    its new text, not for all of it."""
    block = document.findBlock(start)
    marked = QTextCharFormat()
    marked.setBackground(background)
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.isValid() and fragment.charFormat().fontFixedPitch():
                cursor = QTextCursor(document)
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(marked)
            iterator += 1
        block = block.next()
