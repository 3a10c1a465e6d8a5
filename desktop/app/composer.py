"""Where the user writes: a plain-text box that sends on Ctrl+Enter (⌘↩ on macOS) and keeps Enter
for new lines, with Send and Stop beside it. Typing ``/`` at the start lists the prompt commands
(:mod:`desktop.conversation.commands`) in a completion popup."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCompleter,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.conversation.commands import PromptCommand

__all__ = ["MAX_LINES", "MIN_LINES", "Composer", "PromptEdit"]

MIN_LINES = 3
MAX_LINES = 10
_COMMAND_ROLE = Qt.ItemDataRole.UserRole + 1
"""The completer matches and inserts ``/name``; the popup shows ``/name — description``."""
_POPUP_KEYS = frozenset(
    {Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab}
)


class PromptEdit(QPlainTextEdit):
    submitted = Signal()
    typing_started = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Ask Cowork to do something… (Ctrl+Enter to send)")
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.textChanged.connect(self._changed)
        self.textChanged.connect(self._fit)
        self._was_empty = True
        self.command_source: Callable[[], Sequence[PromptCommand]] | None = None
        """The prompt commands of the shown conversation (read when ``/`` is typed)."""
        self.command_model = QStandardItemModel(self)
        self.completer = QCompleter(self.command_model, self)
        self.completer.setWidget(self)
        self.completer.setCompletionRole(_COMMAND_ROLE)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        # activated(str) carries the completion role's data: the "/name" to insert.
        self.completer.activated.connect(self._complete_with)
        self.textChanged.connect(self._offer_commands)
        self._fit()

    def _fit(self) -> None:
        # As tall as its text, from MIN_LINES to MAX_LINES: the conversation keeps the room.
        lines = max(MIN_LINES, min(MAX_LINES, int(self.document().size().height())))
        margins = self.contentsMargins()
        frame = 2 * self.frameWidth() + 2 * int(self.document().documentMargin())
        self.setFixedHeight(
            lines * self.fontMetrics().lineSpacing() + frame + margins.top() + margins.bottom()
        )

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.popup().isVisible() and event.key() in _POPUP_KEYS:
            event.ignore()  # the popup's: choose a command, or close the list
            return
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        # Qt maps ControlModifier to ⌘ on macOS, so this is Ctrl+Enter there as ⌘+Enter.
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submitted.emit()
            event.accept()
            return
        super().keyPressEvent(event)

    def popup(self) -> QAbstractItemView:
        """The completer's list of commands."""
        popup = self.completer.popup()
        assert popup is not None  # a QCompleter always has one
        return popup

    def _command_prefix(self) -> str | None:
        """``/na`` while the cursor is in a ``/name`` at the start of the text, else ``None``."""
        text = self.toPlainText()
        position = self.textCursor().position()
        prefix = text[:position]
        if not prefix.startswith("/") or prefix.startswith("//") or any(ch.isspace() for ch in prefix):
            return None
        return prefix

    def _offer_commands(self) -> None:
        prefix = self._command_prefix()
        popup = self.popup()
        if prefix is None or self.command_source is None:
            popup.hide()
            return
        if prefix == "/" or not popup.isVisible():
            # Read afresh as a command starts: a file added meanwhile is listed.
            self._load_commands(self.command_source())
        self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(max(320, popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width()))
        self.completer.complete(rect)

    def _load_commands(self, commands: Sequence[PromptCommand]) -> None:
        self.command_model.clear()
        for command in commands:
            shown = f"/{command.name}" + (f" — {command.description}" if command.description else "")
            item = QStandardItem(shown)
            item.setData(f"/{command.name}", _COMMAND_ROLE)
            item.setToolTip(str(command.path))
            item.setEditable(False)
            self.command_model.appendRow(item)

    def _complete_with(self, name: str) -> None:
        cursor = self.textCursor()
        cursor.setPosition(0)
        cursor.setPosition(len(self._command_prefix() or ""), QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"{name} ")
        self.setTextCursor(cursor)

    def _changed(self) -> None:
        empty = not self.toPlainText().strip()
        if self._was_empty and not empty:
            self.typing_started.emit()
        self._was_empty = empty


class Composer(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.edit = PromptEdit()
        self.send_button = QPushButton("Send")
        self.send_button.setToolTip("Send the message (Ctrl+Enter)")
        self.send_button.setDefault(False)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the running task (Esc)")
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 12)
        layout.addWidget(self.edit, 1)
        layout.addLayout(buttons)
        self.send_button.clicked.connect(self.edit.submitted.emit)

    def take_text(self) -> str:
        text = self.edit.toPlainText()
        self.edit.clear()
        return text

    def restore_text(self, text: str) -> None:
        """Put back a message that could not be sent, unless the user already typed another."""
        if not self.edit.toPlainText().strip():
            self.edit.setPlainText(text)
