"""The preview's Revert buttons: the selected file, or every file of the last task that changed it,
back to before the agent changed it — after the user confirms, through the runtime
(``RevertChanges``; the caller sends it). A file the runtime cannot revert (its earlier content was
not kept, or it changed since the agent's last write) has the button off and the reason as tooltip.

Keyboard: Alt+R reverts the file, Alt+T the task; the confirmation answers to Enter (Revert) and Esc.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QPushButton, QWidget

from desktop.i18n import translate
from desktop.patch.model import PatchEntry, RevertRequest, task_revert

__all__ = ["RevertControls"]

#: Files named in a confirmation; the rest are counted.
_NAMED = 12


class RevertControls(QWidget):
    """``revert`` sends the request; the owner then calls :meth:`finished` with what to tell."""

    def __init__(
        self,
        revert: Callable[[RevertRequest], None],
        show: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._revert = revert
        self._show = show
        self._entry: PatchEntry | None = None
        self._entries: tuple[PatchEntry, ...] = ()
        self._busy = False
        self.confirmation: QMessageBox | None = None
        """The question on screen, while one is."""
        self.file_button = QPushButton(translate("PatchPreview", "&Revert file"))
        self.file_button.setAccessibleName(translate("PatchPreview", "Revert the selected file"))
        self.file_button.setAutoDefault(False)
        self.file_button.clicked.connect(self.revert_file)
        self.task_button = QPushButton(translate("PatchPreview", "Revert &task"))
        self.task_button.setAccessibleName(
            translate("PatchPreview", "Revert every file of the task that last changed the selected file")
        )
        self.task_button.setAutoDefault(False)
        self.task_button.clicked.connect(self.revert_task)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.file_button)
        layout.addWidget(self.task_button)
        QWidget.setTabOrder(self.file_button, self.task_button)
        self.show_entry(None, ())

    def show_entry(self, entry: PatchEntry | None, entries: tuple[PatchEntry, ...]) -> None:
        """The selected file (None: nothing selected) among all the preview's."""
        self._entry, self._entries = entry, entries
        can = entry is not None and entry.revertible and not self._busy
        self.file_button.setEnabled(can)
        self.task_button.setEnabled(can and entry is not None and entry.last_task is not None)
        if entry is None:
            tip = ""
        elif not entry.revertible:
            tip = entry.revert_note or translate("PatchPreview", "Revert is not available for this file.")
        else:
            tip = translate("PatchPreview", "Put this file back to how it was before the agent changed it")
        self.file_button.setToolTip(tip)
        self.file_button.setAccessibleDescription(tip)
        self.task_button.setToolTip(
            tip
            if entry is None or not entry.revertible
            else translate("PatchPreview", "Put back every file of the last task that changed this one")
        )

    # ------------------------------------------------------------------ asking

    def revert_file(self) -> None:
        entry = self._entry
        if entry is None or not entry.revertible or self._busy:
            return
        request = RevertRequest(
            paths=(entry.path,),
            task_id=None,
            session_id=entry.session_id,
            display_paths=(entry.display_path,),
        )
        self._ask(
            request,
            translate(
                "PatchPreview",
                "Put {file} back to how it was before the agent changed it? Its current content is replaced.",
            ).format(file=entry.display_path),
        )

    def revert_task(self) -> None:
        entry = self._entry
        request = task_revert(self._entries, entry) if entry is not None and entry.revertible else None
        if request is None or self._busy:
            return
        names = list(request.display_paths[:_NAMED])
        hidden = len(request.display_paths) - len(names)
        if hidden > 0:
            names.append(translate("PatchPreview", "and {count} more").format(count=hidden))
        self._ask(
            request,
            translate(
                "PatchPreview",
                "Put back every file the task changed, as it was before the task: {files}?",
            ).format(files=", ".join(names)),
        )

    def _ask(self, request: RevertRequest, question: str) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            translate("PatchPreview", "Revert changes — Cowork"),
            question,
            QMessageBox.StandardButton.Cancel,
            self.window(),
        )
        confirm = box.addButton(translate("PatchPreview", "Revert"), QMessageBox.ButtonRole.DestructiveRole)
        confirm.setAccessibleName(translate("PatchPreview", "Revert"))
        box.setDefaultButton(confirm)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        box.setAccessibleName(translate("PatchPreview", "Confirm the revert"))

        def answered() -> None:
            self.confirmation = None
            if box.clickedButton() is confirm:
                self._busy = True
                self.show_entry(self._entry, self._entries)
                self._show(translate("PatchPreview", "Reverting…"))
                self._revert(request)

        box.finished.connect(answered)
        self.confirmation = box
        box.open()

    def finished(self, message: str) -> None:
        """The revert ended (done or refused): ``message`` says how; the buttons work again."""
        self._busy = False
        self.show_entry(self._entry, self._entries)
        self._show(message)
