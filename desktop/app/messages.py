"""The widgets of one conversation item each: the user's prompt, the assistant's Markdown, a compact
tool-call row that expands to its output, and a notice line. They only draw what
:mod:`desktop.conversation.items` holds; ``refresh()`` draws it again after a change.

The assistant's answer streams into a ``QTextDocument`` without redrawing what is settled: each
block that can no longer change (:class:`SettledScanner`) is appended to the document once, and only
the unsettled tail is replaced on each frame. When the stream ends the whole answer is drawn once more
from its full text (up to :data:`FULL_REDRAW_CHARS`), so the final result is exactly what a single
Markdown pass gives.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import (
    QFontDatabase,
    QGuiApplication,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.conversation.items import (
    AssistantMessage,
    Item,
    Notice,
    SignInNotice,
    Tone,
    ToolCallRow,
    ToolState,
    UserMessage,
)
from desktop.conversation.streaming import SettledScanner

__all__ = [
    "FULL_REDRAW_CHARS",
    "AssistantView",
    "ItemWidget",
    "NoticeView",
    "ToolRowView",
    "UserView",
    "widget_for",
]

FULL_REDRAW_CHARS = 64 * 1024
"""Answers up to this size are drawn once more from their whole text when the stream ends."""
OUTPUT_LINES = 14
"""The most lines a tool's output shows before it scrolls."""

TONE_COLOURS = {Tone.INFO: None, Tone.WARNING: "#b26a00", Tone.ERROR: "#c62828"}
_STATE_MARKS = {
    ToolState.RUNNING: ("⋯", "running"),
    ToolState.AWAITING_APPROVAL: ("⏸", "waiting for your approval"),
    ToolState.SUCCEEDED: ("✓", "done"),
    ToolState.FAILED: ("✗", "failed"),
    ToolState.DENIED: ("⊘", "not allowed"),
}


class ItemWidget(QFrame):
    """Base of the item widgets: ``item`` is what it draws."""

    def __init__(self, item: Item, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item

    def refresh(self) -> None:
        """Draw the item again after it changed."""


class _AutoHeightBrowser(QTextBrowser):
    """A read-only rich-text view as tall as its text: the conversation scrolls, not each message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenExternalLinks(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)

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

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())


class UserView(ItemWidget):
    def __init__(self, item: UserMessage, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("userMessage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        who = QLabel("You")
        who.setObjectName("speaker")
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.MarkdownText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.text.setOpenExternalLinks(True)
        layout.addWidget(who)
        layout.addWidget(self.text)
        self.refresh()

    def refresh(self) -> None:
        assert isinstance(self.item, UserMessage)
        self.text.setText(self.item.text)


class AssistantView(ItemWidget):
    def __init__(self, item: AssistantMessage, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("assistantMessage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        header = QHBoxLayout()
        who = QLabel("Cowork")
        who.setObjectName("speaker")
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy this answer as Markdown")
        self.copy_button.setAutoRaise(True)
        self.copy_button.clicked.connect(self._copy)
        header.addWidget(who)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        self.browser = _AutoHeightBrowser()
        layout.addLayout(header)
        layout.addWidget(self.browser)
        self._scanner = SettledScanner()
        self._settled = 0  # characters of the text drawn as settled blocks
        self._tail_at = 0  # document position where the tail's drawing starts
        self._drawn = ""  # the text the document shows (by identity of its length and final flag)
        self._final = False
        self.refresh()

    @property
    def document(self) -> QTextDocument:
        return self.browser.document()

    def refresh(self) -> None:
        assert isinstance(self.item, AssistantMessage)
        text = self.item.text
        if not self.item.streaming:
            if not self._final or text != self._drawn:
                self._draw_whole(text)
            return
        self._final = False
        if len(text) < self._settled or not text.startswith(self._drawn[: self._settled]):
            self._restart()  # the runtime discarded the partial answer and asked again
        settled = self._scanner.feed(text)
        cursor = QTextCursor(self.document)
        cursor.setPosition(self._tail_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if settled > self._settled:
            _append_markdown(self.document, text[self._settled : settled])
            self._settled = settled
            self._tail_at = self._end()
        tail = text[settled:]
        if tail.strip():
            _append_markdown(self.document, tail)
        self._drawn = text

    def _draw_whole(self, text: str) -> None:
        if len(text) <= FULL_REDRAW_CHARS or not self._drawn:
            self.document.setMarkdown(text)
        else:
            # Too long to lay out again in one frame: what streamed stays, the last tail is settled.
            cursor = QTextCursor(self.document)
            cursor.setPosition(self._tail_at)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            _append_markdown(self.document, text[self._settled :])
        self._drawn = text
        self._final = True
        self._restart(clear=False)

    def _restart(self, *, clear: bool = True) -> None:
        self._scanner.reset()
        self._settled = 0
        self._tail_at = 0
        if clear:
            self.document.clear()
            self._drawn = ""

    def _end(self) -> int:
        cursor = QTextCursor(self.document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor.position()

    def _copy(self) -> None:
        assert isinstance(self.item, AssistantMessage)
        QGuiApplication.clipboard().setText(self.item.text)


def _append_markdown(document: QTextDocument, markdown: str) -> None:
    """Append ``markdown`` as blocks of their own at the end of ``document``.

    ``insertMarkdown`` merges the fragment's first block into the block at the cursor, taking that
    block's format: a new, plain block is made first and given the first block's own format after.
    """
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    if not document.isEmpty():
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        listed = cursor.block().textList()
        if listed is not None:
            listed.remove(cursor.block())
        cursor.setBlockFormat(QTextBlockFormat())
    start = cursor.position()
    fragment = QTextDocument()
    fragment.setMarkdown(markdown)
    first = fragment.begin()
    cursor.insertMarkdown(markdown)
    if first.textList() is None:
        QTextCursor(document.findBlock(start)).setBlockFormat(first.blockFormat())


class ToolRowView(ItemWidget):
    """``✓ WriteFile  /project/notes.md  · 12 ms``; a click shows what the tool said."""

    def __init__(self, item: ToolCallRow, root: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self._root = root.rstrip("/\\") if root else None
        self.setObjectName("toolRow")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 1, 10, 1)
        layout.setSpacing(2)
        self.header = QToolButton()
        self.header.setObjectName("toolHeader")
        self.header.setCheckable(True)
        self.header.setAutoRaise(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.RightArrow)
        self.header.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.header.toggled.connect(self._toggle)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.output.hide()
        layout.addWidget(self.header)
        layout.addWidget(self.output)
        self.refresh()

    @property
    def row(self) -> ToolCallRow:
        assert isinstance(self.item, ToolCallRow)
        return self.item

    def refresh(self) -> None:
        row = self.row
        mark, words = _STATE_MARKS[row.state]
        # An MCP tool's call names no file or command: its target, when the runtime sends one, is the
        # tool itself, which the row already shows.
        target = "" if row.target == row.tool_name else _relative(row.target or "", self._root)
        if len(target) > 90:
            target = target[:60] + "…" + target[-29:]
        duration = f" · {_duration(row.duration_ms)}" if row.duration_ms is not None else ""
        state = "" if row.state is ToolState.SUCCEEDED else f" — {words}"
        if row.progress and not row.finished:
            state += f" · {row.progress}"  # what a running MCP tool last reported
        self.header.setText(f"{mark}  {row.tool_name}  {target}{duration}{state}")
        self.header.setToolTip(row.target or row.tool_name)
        self.header.setProperty("state", row.state.value)
        self.header.style().unpolish(self.header)
        self.header.style().polish(self.header)
        self.header.setEnabled(True)
        if self.output.isVisible():
            self._fill()

    def _toggle(self, shown: bool) -> None:
        self.header.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        if shown:
            self._fill()
        self.output.setVisible(shown)

    def _fill(self) -> None:
        text = self.row.output or ("(running…)" if not self.row.finished else "(no output)")
        if self.output.toPlainText() != text:
            self.output.setPlainText(text)
            lines = min(OUTPUT_LINES, text.count("\n") + 1)
            frame = 2 * self.output.frameWidth() + 8
            self.output.setFixedHeight((lines + 1) * self.output.fontMetrics().lineSpacing() + frame)


def _relative(target: str, root: str | None) -> str:
    """A path inside the project folder, as the user thinks of it: relative to the folder."""
    if root and len(target) > len(root) + 1 and target.startswith(root) and target[len(root)] in "/\\":
        return target[len(root) + 1 :]
    return target


def _duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


class NoticeView(ItemWidget):
    """A short line about the conversation; one with an action has a link that triggers it."""

    action_triggered = Signal(str)

    def __init__(self, item: Notice, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("notice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 2, 10, 2)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.text.linkActivated.connect(self.action_triggered.emit)
        layout.addWidget(self.text)
        self.refresh()

    def refresh(self) -> None:
        assert isinstance(self.item, Notice)
        notice = self.item
        text = _escape(notice.text)
        if notice.action == "review_changes":
            text += f' <a href="{notice.action}">Review changes</a>'
        colour = TONE_COLOURS[notice.tone]
        style = f"color: {colour};" if colour else ""
        self.text.setText(f'<i style="{style}">{text}</i>')


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def widget_for(item: Item, root: str | None = None) -> ItemWidget:
    """The widget for ``item``; ``root`` is the conversation's project folder, if any."""
    if isinstance(item, AssistantMessage):
        return AssistantView(item)
    if isinstance(item, ToolCallRow):
        return ToolRowView(item, root)
    if isinstance(item, UserMessage):
        return UserView(item)
    if isinstance(item, SignInNotice):
        # Imported here: the MCP sign-in view builds on this module's ItemWidget.
        from desktop.mcp.sign_in_view import SignInView

        return SignInView(item)
    return NoticeView(item)
