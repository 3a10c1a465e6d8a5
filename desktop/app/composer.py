"""Where the user writes: a plain-text box with Send and Stop beside it. Enter sends and Shift+Enter
starts a new line; with Settings' "Ctrl+Enter sends" (⌘↩ on macOS) Enter starts a new line instead.
Files and images dragged or pasted in become removable chips above the box (Attach… does the same
from a file dialog); see :mod:`desktop.conversation.attachments` for what is sent. Typing ``/`` at
the start lists the prompt commands (:mod:`desktop.conversation.commands`) in a completion popup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QKeySequence, QStandardItem, QStandardItemModel, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCompleter,
    QFileDialog,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from contracts.images import ImageContent
from desktop.app.attachments_view import AttachmentsView, encode_pasted_image
from desktop.conversation.attachments import (
    AttachedFile,
    AttachedImage,
    AttachmentError,
    Attachments,
)
from desktop.conversation.commands import PromptCommand
from desktop.i18n import translate

__all__ = ["ENTER", "MAX_LINES", "MIN_LINES", "Composer", "Message", "PromptEdit"]

ENTER = "enter"
CTRL_ENTER = "ctrl_enter"
"""The send keys (``desktop.settings.store.SEND_KEYS``)."""

MIN_LINES = 3
MAX_LINES = 10
_COMMAND_ROLE = Qt.ItemDataRole.UserRole + 1
"""The completer matches and inserts ``/name``; the popup shows ``/name — description``."""
_POPUP_KEYS = frozenset(
    {Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab}
)


def _ctrl_enter_text() -> str:
    # "Ctrl+Return" on Windows and Linux, "⌘Return" on macOS.
    return QKeySequence("Ctrl+Return").toString(QKeySequence.SequenceFormat.NativeText)


class PromptEdit(QPlainTextEdit):
    submitted = Signal()
    typing_started = Signal()
    files_dropped = Signal(list)
    """Local files dropped or pasted: their paths (``list[Path]``), attached instead of inserted."""
    image_pasted = Signal(bytes)
    """A picture pasted or dropped without a file (a screenshot), encoded (PNG, or JPEG if large)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.send_key = ENTER
        self.setAccessibleName(translate("Composer", "Message"))
        self._show_send_key()
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

    def set_send_key(self, key: str) -> None:
        """``enter`` (Shift+Enter for a new line) or ``ctrl_enter`` (Enter for a new line)."""
        self.send_key = CTRL_ENTER if key == CTRL_ENTER else ENTER
        self._show_send_key()

    def _show_send_key(self) -> None:
        if self.send_key == CTRL_ENTER:
            hint = translate("Composer", "Ask Cowork to do something… ({keys} to send)").format(
                keys=_ctrl_enter_text()
            )
        else:
            hint = translate(
                "Composer", "Ask Cowork to do something… (Enter to send, Shift+Enter for a new line)"
            )
        self.setPlaceholderText(hint)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.popup().isVisible() and event.key() in _POPUP_KEYS:
            event.ignore()  # the popup's: choose a command, or close the list
            return
        if event.key() not in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            super().keyPressEvent(event)
            return
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        # Qt maps ControlModifier to ⌘ on macOS, so Ctrl+Enter is ⌘+Enter there; it sends either way.
        ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        if ctrl or (self.send_key == ENTER and not shift and not modifiers):
            self.submitted.emit()
            event.accept()
            return
        if shift or self.send_key == CTRL_ENTER:
            # A plain paragraph break: Qt's own Shift+Enter inserts a line separator (U+2028),
            # which is not the newline the prompt should carry.
            self.textCursor().insertText("\n")
            self.ensureCursorVisible()
            event.accept()
            return
        super().keyPressEvent(event)

    # Drops and pastes: a file becomes an attachment, a picture an attached image; text stays text.
    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return bool(_local_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        files = _local_files(source)
        if files:
            self.files_dropped.emit(files)
            return
        if source.hasImage():
            image = QImage(source.imageData())
            if not image.isNull():
                self.image_pasted.emit(encode_pasted_image(image))
                return
        super().insertFromMimeData(source)

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


def _local_files(source: QMimeData) -> list[Path]:
    if not source.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in source.urls() if url.isLocalFile() and url.toLocalFile()]


@dataclass(frozen=True)
class Message:
    """What the composer held when the user sent: the text as typed and what was attached."""

    text: str
    files: list[AttachedFile] = field(default_factory=list)
    images: list[AttachedImage] = field(default_factory=list)

    @property
    def file_paths(self) -> list[Path]:
        return [attached.path for attached in self.files]

    @property
    def image_contents(self) -> list[ImageContent]:
        return [attached.image for attached in self.images]


class Composer(QWidget):
    changed = Signal()
    """The text or the attachments changed: whether Send may be pressed may have too."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attachments = Attachments()
        self.attachments_view = AttachmentsView()
        self.attachments_view.removed.connect(self.remove_attachment)
        self.edit = PromptEdit()
        self.edit.files_dropped.connect(self.attach_files)
        self.edit.image_pasted.connect(self.attach_image)
        self.edit.textChanged.connect(self.changed.emit)
        self.send_button = QPushButton(translate("Composer", "Send"))
        self.send_button.setAccessibleName(translate("Composer", "Send"))
        self.send_button.setDefault(False)
        self.stop_button = QPushButton(translate("Composer", "Stop"))
        self.stop_button.setAccessibleName(translate("Composer", "Stop"))
        self.stop_button.setToolTip(translate("Composer", "Stop the running task (Esc)"))
        self.attach_button = QPushButton(translate("Composer", "&Attach…"))
        self.attach_button.setAccessibleName(translate("Composer", "Attach files or images"))
        self.attach_button.setToolTip(
            translate(
                "Composer", "Attach files (sent by path) or images (sent to the model); or drop or paste them"
            )
        )
        self.attach_button.clicked.connect(self.choose_files)
        self.file_dialog: QFileDialog | None = None
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.attach_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 12)
        layout.setSpacing(0)
        layout.addWidget(self.attachments_view)
        layout.addLayout(row)
        self.send_button.clicked.connect(self.edit.submitted.emit)
        self.setTabOrder(self.edit, self.send_button)
        self.setTabOrder(self.send_button, self.stop_button)
        self.setTabOrder(self.stop_button, self.attach_button)
        self.set_send_key(ENTER)

    def set_send_key(self, key: str) -> None:
        """Settings' send key: ``enter`` or ``ctrl_enter``."""
        self.edit.set_send_key(key)
        keys = _ctrl_enter_text() if self.edit.send_key == CTRL_ENTER else translate("Composer", "Enter")
        self.send_button.setToolTip(translate("Composer", "Send the message ({keys})").format(keys=keys))

    def set_folder(self, folder: str | None) -> None:
        """The shown conversation's project folder: files outside it are marked."""
        self.attachments.set_folder(Path(folder) if folder else None)
        self._show()

    def has_text(self) -> bool:
        """Whether there is something to send: the box holds more than whitespace."""
        return bool(self.edit.toPlainText().strip())

    # ------------------------------------------------------------------ attaching

    def attach_files(self, paths: Sequence[Path]) -> None:
        problems = [problem for path in paths if (problem := self._attach(path))]
        self._show(problems[-1] if problems else None)

    def attach_image(self, data: bytes) -> None:
        try:
            self.attachments.add_image(data)
        except AttachmentError as exc:
            self._show(str(exc))
            return
        self._show()

    def remove_attachment(self, attached: AttachedFile | AttachedImage) -> None:
        self.attachments.remove(attached)
        self._show()
        self.edit.setFocus()

    def choose_files(self) -> None:
        dialog = QFileDialog(self, translate("Composer", "Attach files or images"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        if self.attachments.folder is not None:
            dialog.setDirectory(str(self.attachments.folder))
        dialog.filesSelected.connect(lambda chosen: self.attach_files([Path(path) for path in chosen]))
        self.file_dialog = dialog
        dialog.open()

    def _attach(self, path: Path) -> str | None:
        try:
            self.attachments.add_path(path)
        except AttachmentError as exc:
            return str(exc)
        return None

    def _show(self, problem: str | None = None) -> None:
        self.attachments_view.show_attachments(self.attachments)
        self.attachments_view.show_error(problem)
        self.changed.emit()

    # ------------------------------------------------------------------ sending

    def take_message(self) -> Message:
        """The message to send; the composer is empty afterwards."""
        message = Message(
            self.edit.toPlainText(), list(self.attachments.files), list(self.attachments.images)
        )
        self.edit.clear()
        self.attachments.clear()
        self._show()
        return message

    def restore(self, message: Message) -> None:
        """Put back a message that could not be sent, unless the user already wrote another."""
        if self.edit.toPlainText().strip() or self.attachments:
            return
        self.edit.setPlainText(message.text)
        self.attachments.files = list(message.files)
        self.attachments.images = list(message.images)
        self._show()
