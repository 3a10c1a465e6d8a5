"""The patch preview window (``GetPatchPreview``): the files a conversation changed, each marked
created (A), modified (M) or deleted (D), and the highlighted unified diff of the one selected.

"Open in editor" hands the file to the system (``QDesktopServices.openUrl``; injectable) — or its
folder, when the system would run the file instead of showing it (``model.open_target``). Keyboard:
arrows choose a file, Enter or Ctrl+O opens it, Tab reaches the diff, Esc closes.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.patch.highlight import DiffView, is_dark, status_colour
from desktop.patch.model import CannotOpen, PatchEntry, RevertRequest, open_target, read_preview
from desktop.patch.revert import RevertControls

__all__ = ["PatchPreviewDialog"]

_ENTRY_ROLE = Qt.ItemDataRole.UserRole
NOT_TRACKED_NOTE = QT_TRANSLATE_NOOP(
    "PatchPreview", "Files changed by commands the agent ran are not listed here."
)


class PatchPreviewDialog(QDialog):
    """``preview`` is the ``GetPatchPreview`` result wire dict (``{"files": [...]}``);
    ``workspace_root`` the conversation's project folder (``None`` for a general chat)."""

    def __init__(
        self,
        preview: dict[str, Any],
        workspace_root: Path | None,
        parent: QWidget | None = None,
        *,
        open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
        revert: Callable[[RevertRequest], None] | None = None,
    ) -> None:
        """``revert`` sends a confirmed ``RevertChanges`` (None: no Revert buttons); its end is told
        back with :meth:`revert_finished`."""
        super().__init__(parent)
        self._root = workspace_root
        self._open_url = open_url
        self._revert = revert
        self._entries: tuple[PatchEntry, ...] = ()
        self.setWindowTitle(translate("PatchPreview", "Changes — Cowork"))
        self.setSizeGripEnabled(True)
        self.resize(960, 640)
        self._build()
        self.set_preview(preview)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)

        self.file_list = QTreeWidget()
        self.file_list.setColumnCount(3)
        self.file_list.setHeaderLabels(["", "File", "Lines"])
        self.file_list.setRootIsDecorated(False)
        self.file_list.setUniformRowHeights(True)
        self.file_list.setAccessibleName(translate("PatchPreview", "Changed files"))
        header = self.file_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.file_list.currentItemChanged.connect(lambda *_: self._show_current())
        self.file_list.itemActivated.connect(lambda *_: self.open_selected())

        self.file_label = QLabel()
        self.file_label.setTextFormat(Qt.TextFormat.PlainText)
        self.file_label.setWordWrap(True)
        self.diff_view = DiffView()
        self.diff_view.setAccessibleName(translate("PatchPreview", "Diff"))
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.file_label)
        right_layout.addWidget(self.diff_view, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.file_list)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setChildrenCollapsible(False)

        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)

        self.message_label = QLabel()
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setWordWrap(True)
        self.open_button = QPushButton(translate("PatchPreview", "&Open in editor"))
        self.open_button.setToolTip(translate("PatchPreview", "Open the selected file (Enter, Ctrl+O)"))
        self.open_button.setAutoDefault(False)
        self.open_button.clicked.connect(self.open_selected)
        QShortcut(QKeySequence.StandardKey.Open, self).activated.connect(self.open_selected)
        self.close_button = QPushButton(translate("PatchPreview", "Close"))
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.close)
        self.revert_controls = (
            RevertControls(self._revert, self.message_label.setText, self)
            if self._revert is not None
            else None
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.message_label, 1)
        if self.revert_controls is not None:
            buttons.addWidget(self.revert_controls)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.close_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.empty_label, 1)
        layout.addLayout(buttons)
        QWidget.setTabOrder(self.file_list, self.diff_view)
        QWidget.setTabOrder(self.diff_view, self.open_button)
        QWidget.setTabOrder(self.open_button, self.close_button)
        if self.revert_controls is not None:
            chain = [
                self.diff_view,
                self.revert_controls.file_button,
                self.revert_controls.task_button,
                self.open_button,
                self.close_button,
            ]
            for first, second in pairwise(chain):
                QWidget.setTabOrder(first, second)

    # ------------------------------------------------------------------ contents

    @property
    def entries(self) -> tuple[PatchEntry, ...]:
        return self._entries

    def current_entry(self) -> PatchEntry | None:
        item = self.file_list.currentItem()
        if item is None:
            return None
        index = item.data(0, _ENTRY_ROLE)
        return self._entries[index] if isinstance(index, int) else None

    def set_preview(self, preview: dict[str, Any]) -> None:
        """Show another ``GetPatchPreview`` result (the conversation changed more files)."""
        self.message_label.clear()
        try:
            contents = read_preview(preview, self._root)
        except ValueError as exc:
            self._entries = ()
            self._show_empty(
                translate("PatchPreview", "The changes cannot be shown: {problem}.").format(problem=exc)
            )
            return
        self._entries = contents.entries
        skipped = ""
        if contents.skipped == 1:
            skipped = translate("PatchPreview", " 1 entry could not be read.")
        elif contents.skipped:
            skipped = translate("PatchPreview", " {count} entries could not be read.").format(
                count=contents.skipped
            )
        not_tracked = translate("PatchPreview", NOT_TRACKED_NOTE)
        if not self._entries:
            nothing = translate("PatchPreview", "No files changed in this conversation yet.")
            self._show_empty(f"{nothing}{skipped}\n{not_tracked}")
            return
        self.summary_label.setText(_summary(self._entries) + skipped)
        self.summary_label.setToolTip(not_tracked)
        self.empty_label.hide()
        self.splitter.show()
        self._fill_list()

    def _show_empty(self, text: str) -> None:
        self.file_list.clear()
        self.summary_label.setText("")
        self.empty_label.setText(text)
        self.splitter.hide()
        self.empty_label.show()
        self.open_button.setEnabled(False)
        if self.revert_controls is not None:
            self.revert_controls.show_entry(None, ())

    def _fill_list(self) -> None:
        previous = self.current_entry()
        self.file_list.clear()
        dark = is_dark(self.file_list.palette())
        selected: QTreeWidgetItem | None = None
        first: QTreeWidgetItem | None = None
        for index, entry in enumerate(self._entries):
            lines = f"+{entry.added} −{entry.removed}" if entry.has_hunks else ""
            item = QTreeWidgetItem([entry.marker, entry.display_path, lines])
            item.setData(0, _ENTRY_ROLE, index)
            item.setForeground(0, QColor(status_colour(entry.status, dark)))
            item.setToolTip(0, entry.status_word)
            item.setData(0, Qt.ItemDataRole.AccessibleTextRole, entry.status_word)
            item.setToolTip(1, entry.path)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.file_list.addTopLevelItem(item)
            first = first or item
            if previous is not None and entry.path == previous.path:
                selected = item
        current = selected or first
        if current is not None:
            self.file_list.setCurrentItem(current)
        self.file_list.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show_current(self) -> None:
        entry = self.current_entry()
        self.message_label.clear()
        if self.revert_controls is not None:
            self.revert_controls.show_entry(entry, self._entries)
        if entry is None:
            self.file_label.clear()
            self.diff_view.set_diff("")
            self.open_button.setEnabled(False)
            return
        parts = [entry.display_path, entry.status_word]
        if entry.has_hunks:
            parts.append(
                translate("PatchPreview", "+{added} −{removed} lines").format(
                    added=entry.added, removed=entry.removed
                )
            )
        if entry.status != "deleted":
            parts.append(_size(entry.size_bytes))
        self.file_label.setText(" — ".join(parts))
        self.diff_view.set_diff(entry.diff)
        if not entry.has_hunks and entry.status != "deleted":
            self.message_label.setText(
                translate("PatchPreview", "No line-by-line diff for this file; open it to see it.")
            )
        self.open_button.setEnabled(entry.status != "deleted")
        self.open_button.setToolTip(
            translate("PatchPreview", "A deleted file cannot be opened")
            if entry.status == "deleted"
            else translate("PatchPreview", "Open the selected file")
        )

    def revert_finished(self, message: str) -> None:
        """A revert this window asked for ended; ``message`` tells the user how."""
        if self.revert_controls is not None:
            self.revert_controls.finished(message)

    # ------------------------------------------------------------------ opening

    def open_selected(self) -> bool:
        """Open the selected file (or its folder, see ``model.open_target``); the reason shows when
        nothing could be opened."""
        entry = self.current_entry()
        if entry is None:
            return False
        try:
            target = open_target(entry, self._root)
        except CannotOpen as exc:
            self.message_label.setText(str(exc))
            return False
        if not self._open_url(QUrl.fromLocalFile(str(target.path))):
            self.message_label.setText(
                translate("PatchPreview", "No application on this computer opened {path}.").format(
                    path=target.path
                )
            )
            return False
        self.message_label.setText(target.note)
        return True


def _summary(entries: tuple[PatchEntry, ...]) -> str:
    counts = {
        status: sum(1 for e in entries if e.status == status) for status in ("created", "modified", "deleted")
    }
    words = {
        "created": translate("PatchPreview", "{count} created"),
        "modified": translate("PatchPreview", "{count} modified"),
        "deleted": translate("PatchPreview", "{count} deleted"),
    }
    parts = [words[status].format(count=count) for status, count in counts.items() if count]
    files = (
        translate("PatchPreview", "1 file changed")
        if len(entries) == 1
        else translate("PatchPreview", "{count} files changed").format(count=len(entries))
    )
    added = sum(e.added for e in entries)
    removed = sum(e.removed for e in entries)
    return translate("PatchPreview", "{files}: {parts} (+{added} −{removed} lines)").format(
        files=files, parts=", ".join(parts), added=f"{added:,}", removed=f"{removed:,}"
    )


def _size(size: int) -> str:
    if size < 1024:
        return (
            translate("PatchPreview", "1 byte")
            if size == 1
            else translate("PatchPreview", "{count} bytes").format(count=size)
        )
    value = size / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GB"
