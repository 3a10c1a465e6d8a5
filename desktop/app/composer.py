"""Where the user writes: a plain-text box that sends on Ctrl+Enter (⌘↩ on macOS) and keeps Enter
for new lines, with Send and Stop beside it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

__all__ = ["MAX_LINES", "MIN_LINES", "Composer", "PromptEdit"]

MIN_LINES = 3
MAX_LINES = 10


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
