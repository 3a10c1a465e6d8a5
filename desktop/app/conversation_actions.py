"""What the sidebar's conversation actions do in the window: a rename is kept, a deletion is asked
about first, an export asks where to write. The work itself is the Qt-free
:class:`desktop.conversation.workbench.Workbench`'s (and :mod:`desktop.conversation.export`'s); every
failure goes through the window's :class:`CallRunner` to its one error presenter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton, QWidget

from desktop.app.sidebar_view import SidebarView
from desktop.conversation.errors import ConversationError
from desktop.conversation.export import ConversationExport, ExportError, write_export
from desktop.conversation.workbench import Workbench
from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = ["ConversationActions"]

_SUFFIXES = {"markdown": ".md", "json": ".json"}


class ConversationActions(QObject):
    def __init__(
        self, sidebar: SidebarView, window: QWidget, keep: Callable[[QWidget], None] | None = None
    ) -> None:
        """``keep``: the window's list of open dialogs (closed with it)."""
        super().__init__(window)
        self._sidebar = sidebar
        self._window = window
        self._keep = keep or (lambda _dialog: None)
        self.workbench: Workbench | None = None
        self.delete_question: QMessageBox | None = None
        """The last "Delete this conversation?" asked (for tests to answer)."""
        self.delete_button: QPushButton | None = None
        self.export_dialog: QFileDialog | None = None
        """The last "Export conversation" file dialog (for tests to answer)."""
        self.exported: Path | None = None
        """The file the last export wrote."""
        sidebar.rename_requested.connect(self.rename)
        sidebar.delete_requested.connect(self.ask_to_delete)
        sidebar.export_requested.connect(self.ask_where_to_export)

    def attach(self, workbench: Workbench) -> None:
        self.workbench = workbench

    # ------------------------------------------------------------------ rename

    def rename(self, key: str, title: str) -> None:
        workbench = self.workbench
        if workbench is None:
            return

        async def rename() -> None:
            try:
                workbench.rename(key, title)
            finally:
                # A refused name goes back to the one kept; a kept one is shown cleaned up.
                self._sidebar.show_sidebar(workbench.sidebar, self._selected_key())

        workbench.runner.run(QT_TRANSLATE_NOOP("Errors", "rename the conversation"), rename())

    # ------------------------------------------------------------------ delete

    def ask_to_delete(self, key: str) -> None:
        workbench = self.workbench
        summary = workbench.summary_of(key) if workbench is not None else None
        if workbench is None or summary is None:
            return
        box = QMessageBox(self._window)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(translate("DeleteConversation", "Delete Conversation"))
        box.setText(translate("DeleteConversation", "Delete “{title}”?").format(title=summary.title))
        box.setInformativeText(
            translate(
                "DeleteConversation",
                "Its messages and the files Cowork saved for it are removed from the backend for good."
                " Files in your project folder are not touched.",
            )
        )
        delete = box.addButton(
            translate("DeleteConversation", "&Delete"), QMessageBox.ButtonRole.DestructiveRole
        )
        delete.setAccessibleName(translate("DeleteConversation", "Delete the conversation"))
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)  # Enter must not destroy anything by accident
        box.setEscapeButton(cancel)
        delete.clicked.connect(lambda: self.delete(key))
        self.delete_question, self.delete_button = box, delete
        self._keep(box)
        box.open()

    def delete(self, key: str) -> None:
        workbench = self.workbench
        if workbench is not None:
            workbench.runner.run(
                QT_TRANSLATE_NOOP("Errors", "delete the conversation"), workbench.delete(key)
            )

    # ------------------------------------------------------------------ export

    def ask_where_to_export(self, key: str, kind: str) -> None:
        workbench = self.workbench
        summary = workbench.summary_of(key) if workbench is not None else None
        if workbench is None or summary is None or kind not in _SUFFIXES:
            return
        suffix = _SUFFIXES[kind]
        dialog = QFileDialog(self._window, translate("ExportConversation", "Export Conversation"))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(suffix.lstrip("."))
        dialog.setNameFilter(
            translate("ExportConversation", "Markdown (*.md)")
            if kind == "markdown"
            else translate("ExportConversation", "JSON (*.json)")
        )
        start = Path(summary.folder) if summary.folder and Path(summary.folder).is_dir() else Path.home()
        dialog.selectFile(str(start / f"{_file_name(summary.title)}{suffix}"))
        dialog.fileSelected.connect(lambda path: self.export(key, Path(path)))
        self.export_dialog = dialog
        self._keep(dialog)
        dialog.open()

    def export(self, key: str, path: Path) -> None:
        workbench = self.workbench
        if workbench is None:
            return

        async def export() -> None:
            conversation: ConversationExport = await workbench.export(key)
            try:
                write_export(path, conversation)
            except ExportError as exc:
                raise ConversationError(str(exc)) from exc
            self.exported = path

        workbench.runner.run(QT_TRANSLATE_NOOP("Errors", "export the conversation"), export())

    def _selected_key(self) -> str | None:
        workbench = self.workbench
        session = workbench.current if workbench is not None else None
        return workbench.key_of(session) if workbench is not None and session is not None else None


def _file_name(title: str) -> str:
    """The title as a file name every system accepts."""
    kept = "".join(c if c.isalnum() or c in " -_." else "_" for c in title).strip(" ._")
    return kept[:80] or "conversation"
