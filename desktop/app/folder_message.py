"""Help → Open Logs Folder when no file manager answers: the folder's path, selectable, with Copy."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.dialog_size import keep_laid_out
from desktop.i18n import translate

__all__ = ["FolderPathDialog"]


class FolderPathDialog(QDialog):
    """Says the folder could not be opened and shows where it is, for a terminal or a file manager."""

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("LogsFolder", "Logs Folder — Cowork"))
        self.setMinimumWidth(480)
        self.message = QLabel(
            translate(
                "LogsFolder",
                "No file manager opened the logs folder. It is here; copy the path to open it"
                " yourself or to attach the logs to a report:",
            )
        )
        self.message.setWordWrap(True)
        self.path_edit = QLineEdit(str(folder))
        self.path_edit.setReadOnly(True)  # selectable and copyable, never edited
        self.path_edit.setAccessibleName(translate("LogsFolder", "Logs folder path"))
        self.path_edit.setCursorPosition(0)
        self.copy_button = QPushButton(translate("LogsFolder", "&Copy Path"))
        self.copy_button.setAccessibleName(translate("LogsFolder", "Copy the logs folder path"))
        self.copy_button.clicked.connect(self.copy_path)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.rejected.connect(self.reject)
        close = self.buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setAccessibleName(translate("LogsFolder", "Close"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.path_edit)
        layout.addWidget(self.buttons)
        self.path_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        self.path_edit.selectAll()
        keep_laid_out(self)

    def copy_path(self) -> None:
        QApplication.clipboard().setText(self.path_edit.text())
        self.copy_button.setText(translate("LogsFolder", "Copied"))
