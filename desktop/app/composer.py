"""Where the user writes: a plain-text box that sends on Ctrl+Enter (⌘↩ on macOS) and keeps Enter
for new lines, with Send and Stop beside it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

__all__ = ["Composer", "PromptEdit"]


class PromptEdit(QPlainTextEdit):
    submitted = Signal()
    typing_started = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Ask Cowork to do something… (Ctrl+Enter to send)")
        self.setTabChangesFocus(True)
        self.setMaximumHeight(160)
        self.setMinimumHeight(64)
        self.textChanged.connect(self._changed)
        self._was_empty = True

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        # Qt maps ControlModifier to ⌘ on macOS, so this is Ctrl+Enter there as ⌘+Enter.
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submitted.emit()
            event.accept()
            return
        super().keyPressEvent(event)

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
