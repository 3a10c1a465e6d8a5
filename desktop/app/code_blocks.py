"""A fenced code block of an answer: monospace on its own background, highlighted by Pygments (by the
fence's language, or recognised from the code), with a Copy button for its text.

While the block streams it is shown plain and only the new text is appended each frame; it is
highlighted once, when its closing fence arrives (or the answer ends), Pygments reading it a few
milliseconds at a time between frames so that a long block never freezes the window. Blocks longer
than :data:`HIGHLIGHT_CHARS` stay plain.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from functools import cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.style import Style
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.app.rich_text import AutoHeightBrowser
from desktop.i18n import translate
from desktop.patch.highlight import is_dark

__all__ = ["HIGHLIGHT_CHARS", "CodeBlockView", "guess_language", "lexer_for"]

HIGHLIGHT_CHARS = 64 * 1024
"""Longer code blocks are shown without highlighting."""
SLICE_S = 0.004
"""The longest Pygments reads a block at one go: the window never waits on highlighting longer."""

_STYLES = {False: "default", True: "github-dark"}
"""Pygments styles for light and dark themes, chosen for contrast on their own background."""
_LABEL_COLOURS = {False: "#57606a", True: "#c9d1d9"}
"""The language label's colour on a light and on a dark code background."""

# A few telling signs of the languages answers show most; Pygments' own guesser reads every lexer
# (a quarter of a second the first time) and often picks an exotic one for short snippets.
_GUESSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("json", re.compile(r"\A\s*[\[{]\s*(\"[^\"]*\"\s*:|[\[{\"\d]|\]|\})")),
    ("diff", re.compile(r"^(@@ .* @@|\+\+\+ |--- )", re.MULTILINE)),
    ("html", re.compile(r"\A\s*<(!DOCTYPE|html|div|p|span|body|head|\?xml)\b", re.IGNORECASE)),
    (
        "python",
        re.compile(r"^\s*(def |class |import |from \S+ import |async def |if __name__)", re.MULTILINE),
    ),
    (
        "bash",
        re.compile(
            r"\A(#!.*\b(ba|z)?sh\b|\$ )|^\s*(sudo |apt(-get)? |pip |npm |cd |export |echo )", re.MULTILINE
        ),
    ),
    (
        "javascript",
        re.compile(r"^\s*(const |let |function |export |import .* from ['\"])|=> ?\{", re.MULTILINE),
    ),
    ("rust", re.compile(r"^\s*(fn |pub fn |use std|impl |let mut )", re.MULTILINE)),
    ("go", re.compile(r"^\s*(package \w+|func \w*\(|import \()", re.MULTILINE)),
    (
        "sql",
        re.compile(
            r"^\s*(SELECT|INSERT INTO|UPDATE|CREATE TABLE|DELETE FROM)\b", re.MULTILINE | re.IGNORECASE
        ),
    ),
    ("c", re.compile(r"^\s*#include\s*[<\"]", re.MULTILINE)),
    ("yaml", re.compile(r"\A(---\n)?[\w-]+:( .*)?\n(\s+[\w-]+:|- )", re.MULTILINE)),
)


def guess_language(code: str) -> str:
    """The language ``code`` is most likely in, from a few telling signs; ``""`` when none shows."""
    sample = code[:4000]
    for language, sign in _GUESSES:
        if sign.search(sample):
            return language
    return ""


@cache
def lexer_for(language: str) -> Lexer | None:
    """Pygments' lexer for a fence's language name (``py``, ``python``, ``sh``…), or ``None``."""
    if not language:
        return None
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@cache
def _style(dark: bool) -> type[Style]:
    return get_style_by_name(_STYLES[dark])


@cache
def _format(dark: bool, token: _TokenType) -> QTextCharFormat:
    fmt = QTextCharFormat()
    spec = _style(dark).style_for_token(token)
    if spec["color"]:
        fmt.setForeground(QColor(f"#{spec['color']}"))
    if spec["bold"]:
        fmt.setFontWeight(QFont.Weight.Bold)
    if spec["italic"]:
        fmt.setFontItalic(True)
    return fmt


class CodeBlockView(QFrame):
    """One code block: a header with its language and Copy, and the code below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeBlock")
        self.code = ""
        self.language = ""
        self.highlighted = False
        """Whether the code is drawn highlighted (it is plain while it streams)."""
        self.closed = False
        self.language_label = QLabel()
        self.language_label.setObjectName("codeLanguage")
        self.copy_button = QToolButton()
        self.copy_button.setText(translate("Conversation", "Copy"))
        self.copy_button.setToolTip(translate("Conversation", "Copy this code"))
        self.copy_button.setAccessibleName(translate("Conversation", "Copy code block"))
        self.copy_button.setAutoRaise(True)
        self.copy_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.copy_button.clicked.connect(self.copy)
        self.text = AutoHeightBrowser()
        self.text.setOpenLinks(False)
        self.text.setAccessibleName(translate("Conversation", "Code"))
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.document().setDefaultFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        header = QHBoxLayout()
        header.setContentsMargins(8, 2, 2, 0)
        header.addWidget(self.language_label)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 6)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.text)
        self._dark = is_dark(self.palette())
        self._paint_background()
        self._tokens: Iterator[tuple[_TokenType, str]] | None = None
        self._runs: list[tuple[_TokenType, list[str]]] = []
        self._lexing = QTimer(self)
        self._lexing.setInterval(0)
        self._lexing.timeout.connect(self._lex_slice)

    def show_code(self, code: str, language: str, *, final: bool) -> None:
        """Show ``code``; ``final``: it will not change any more, so it is highlighted now."""
        if language != self.language:
            self.language = language
            self.language_label.setText(language)
        if final:
            if not (self.closed and code == self.code):
                self.code, self.closed = code, True
                self._draw_final()
            return
        self.closed = False
        if code.startswith(self.code) and not self.highlighted:
            # Streaming: append what is new; the text drawn so far stays.
            added = code[len(self.code) :]
            if added:
                cursor = QTextCursor(self.text.document())
                cursor.movePosition(QTextCursor.MoveOperation.End)
                cursor.insertText(added, QTextCharFormat())
        else:
            self.highlighted = False
            self.text.setPlainText(code)
        self.code = code

    def _draw_final(self) -> None:
        """The whole code, plain at once, then highlighted: Pygments reads it a slice at a time
        (:data:`SLICE_S` each, between frames), and the colours go in together when it is done."""
        self._lexing.stop()
        self.highlighted = False
        self.text.setPlainText(self.code)
        language = self.language or guess_language(self.code)
        if language and not self.language_label.text():
            self.language_label.setText(language)
        lexer = lexer_for(language) if len(self.code) <= HIGHLIGHT_CHARS else None
        if lexer is None:
            self._tokens = None
            return
        self._tokens = iter(lexer.get_tokens(self.code))
        self._runs = []
        self._lexing.start()

    @property
    def highlighting(self) -> bool:
        """The code is being read for its colours (:attr:`highlighted` once it is done)."""
        return self._tokens is not None

    def _lex_slice(self) -> None:
        tokens = self._tokens
        if tokens is None:
            self._lexing.stop()
            return
        deadline = time.perf_counter() + SLICE_S
        runs = self._runs
        # Consecutive tokens of one kind are inserted together: far fewer insertions than tokens.
        for count, (token, value) in enumerate(tokens, 1):
            if runs and runs[-1][0] is token:
                runs[-1][1].append(value)
            else:
                runs.append((token, [value]))
            if count % 64 == 0 and time.perf_counter() > deadline:
                return  # the rest on the next turn of the event loop
        self._lexing.stop()
        self._tokens = None
        cursor = QTextCursor(self.text.document())
        cursor.beginEditBlock()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.removeSelectedText()
        for token, values in runs:
            cursor.insertText("".join(values), _format(self._dark, token))
        cursor.endEditBlock()
        self._runs = []
        self.highlighted = True

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code)

    def _paint_background(self) -> None:
        # Painted, not styled: a style sheet per block costs a millisecond each when a long
        # conversation opens.
        self._background = QColor(_style(self._dark).background_color or "#f8f8f8")
        palette = self.language_label.palette()
        palette.setColor(
            QPalette.ColorRole.WindowText, QColor(_LABEL_COLOURS[self._background.lightness() < 128])
        )
        self.language_label.setPalette(palette)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._background)
        painter.drawRoundedRect(QRectF(self.rect()), 4, 4)
        painter.end()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            dark = is_dark(self.palette())
            if dark != self._dark:
                self._dark = dark
                self._paint_background()
                if self.highlighted:
                    self._draw_final()
