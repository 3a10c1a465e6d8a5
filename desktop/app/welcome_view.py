"""What the window shows while no conversation is open: the three steps to a first answer."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.i18n import translate

__all__ = ["WelcomeView"]


class WelcomeView(QWidget):
    """Choose a folder, set up a model, then ask — each step with the control that does it."""

    def __init__(self, choose_folder: QAction, settings: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        heading = QLabel(translate("Welcome", "Start here"))
        heading.setObjectName("conversationTitle")
        self.folder_button = QPushButton(translate("Welcome", "Choose a &Project Folder…"))
        self.folder_button.setAccessibleName(translate("Welcome", "Choose a project folder"))
        self.folder_button.clicked.connect(lambda _checked=False: choose_folder.trigger())
        self.model_button = QPushButton(translate("Welcome", "Set Up a &Model…"))
        self.model_button.setAccessibleName(translate("Welcome", "Set up a model in Settings"))
        self.model_button.clicked.connect(lambda _checked=False: settings.trigger())
        self.model_state = QLabel()
        self.model_state.setObjectName("conversationFolder")  # the quiet colour of secondary text
        self.model_state.setTextFormat(Qt.TextFormat.PlainText)
        self.model_state.setWordWrap(True)
        self.model_state.hide()
        steps = (
            (
                translate("Welcome", "1. Choose a project folder"),
                translate(
                    "Welcome",
                    "Cowork reads, edits and runs commands only inside the folder you choose. For a chat"
                    " without files, use File → New General Chat.",
                ),
                self.folder_button,
                None,
            ),
            (
                translate("Welcome", "2. Set up a model"),
                translate(
                    "Welcome",
                    "Pick the LLM Cowork works with in Settings: a provider and its API key, a local model,"
                    " or the offline demo model to try things out.",
                ),
                self.model_button,
                self.model_state,
            ),
            (
                translate("Welcome", "3. Ask"),
                translate(
                    "Welcome",
                    "Describe the task below and press Ctrl+Enter. Cowork asks before risky actions.",
                ),
                None,
                None,
            ),
        )
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(12)
        self.step_labels: list[QLabel] = []
        for row, (title, text, button, note) in enumerate(steps):
            label = QLabel(f"<b>{title}</b><br>{text}")
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setWordWrap(True)
            self.step_labels.append(label)
            cell = QVBoxLayout()
            cell.setSpacing(2)
            cell.addWidget(label)
            if note is not None:
                cell.addWidget(note)
            grid.addLayout(cell, row, 0)
            if button is not None:
                grid.addWidget(button, row, 1, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(0, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(32, 24, 32, 24)
        column.addWidget(heading)
        column.addSpacing(8)
        column.addLayout(grid)
        column.addStretch(1)
        self.setTabOrder(self.folder_button, self.model_button)

    def show_model(self, description: str | None) -> None:
        """Which model is set up (``None``: none yet); the button then reads as a change, not a start."""
        if description is None:
            self.model_state.hide()
            self.model_button.setText(translate("Welcome", "Set Up a &Model…"))
            return
        self.model_state.setText(translate("Welcome", "Set up: {model}.").format(model=description))
        self.model_state.show()
        self.model_button.setText(translate("Welcome", "Change the &Model…"))
