"""The sidebar: a "New conversation" button (a project folder, or a general chat) above a tree of
conversations — one group per project folder, "General chats" below — drawn from a
:class:`desktop.conversation.sidebar.Sidebar`."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QLabel, QMenu, QToolButton, QTreeView, QVBoxLayout, QWidget

from desktop.conversation.sidebar import ConversationSummary, Sidebar

__all__ = ["KEY_ROLE", "SidebarView", "sidebar_model"]

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
GENERAL_HEADING = "General chats"


def _when(moment: datetime) -> str:
    local = moment.astimezone()
    today = datetime.now(UTC).astimezone().date()
    if local.date() == today:
        return local.strftime("today %H:%M")
    return local.strftime("%d %b %Y %H:%M")


def _conversation_item(summary: ConversationSummary) -> QStandardItem:
    item = QStandardItem(summary.title)
    item.setData(summary.session_id, KEY_ROLE)
    item.setEditable(False)
    count = f" · {summary.message_count} messages" if summary.message_count else ""
    item.setToolTip(f"{summary.title}\n{_when(summary.updated_at)}{count}")
    return item


def _heading(text: str, tooltip: str) -> QStandardItem:
    heading = QStandardItem(text)
    heading.setEditable(False)
    heading.setSelectable(False)
    heading.setToolTip(tooltip)
    font = heading.font()
    font.setBold(True)
    heading.setFont(font)
    return heading


def sidebar_model(sidebar: Sidebar, model: QStandardItemModel | None = None) -> QStandardItemModel:
    """``sidebar`` as a two-level item model (headings, then conversations with their keys)."""
    model = model or QStandardItemModel()
    model.clear()
    root = model.invisibleRootItem()
    for group in sidebar.projects:
        heading = _heading(group.name, group.folder)
        for summary in group.conversations:
            heading.appendRow(_conversation_item(summary))
        root.appendRow(heading)
    if sidebar.general:
        heading = _heading(GENERAL_HEADING, "Conversations without a project folder")
        for summary in sidebar.general:
            heading.appendRow(_conversation_item(summary))
        root.appendRow(heading)
    return model


class SidebarView(QWidget):
    selected = Signal(str)
    """A conversation's key was chosen."""

    def __init__(self, new_in_folder: QAction, new_general: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.new_button = QToolButton()
        self.new_button.setText("New conversation")
        self.new_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(self.new_button)
        menu.addAction(new_in_folder)
        menu.addAction(new_general)
        self.new_button.setMenu(menu)
        self.new_button.setDefaultAction(new_in_folder)
        self.new_button.setText("New conversation")
        self.model = QStandardItemModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.activated.connect(self._chosen)
        self.tree.clicked.connect(self._chosen)
        self.placeholder = QLabel("Starting…")
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 0, 8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.placeholder)
        self.tree.hide()

    def show_sidebar(self, sidebar: Sidebar, selected_key: str | None) -> None:
        sidebar_model(sidebar, self.model)
        self.tree.expandAll()
        empty = not sidebar.projects and not sidebar.general
        self.tree.setVisible(not empty)
        self.placeholder.setVisible(empty)
        self.placeholder.setText("No conversations yet. Start one with New conversation (Ctrl+N).")
        self.select(selected_key)

    def show_message(self, text: str) -> None:
        self.placeholder.setText(text)
        self.placeholder.show()

    def select(self, key: str | None) -> None:
        selection = self.tree.selectionModel()
        index = self.index_of(key) if key else QModelIndex()
        if index.isValid():
            selection.setCurrentIndex(index, selection.SelectionFlag.ClearAndSelect)
        else:
            selection.clearSelection()

    def index_of(self, key: str) -> QModelIndex:
        for row in range(self.model.rowCount()):
            heading = self.model.index(row, 0)
            for child in range(self.model.rowCount(heading)):
                index = self.model.index(child, 0, heading)
                if index.data(KEY_ROLE) == key:
                    return index
        return QModelIndex()

    def titles(self) -> list[tuple[str, list[str]]]:
        """What the sidebar shows: (heading, conversation titles) in order — for tests."""
        shown = []
        for row in range(self.model.rowCount()):
            heading = self.model.index(row, 0)
            children = [self.model.index(c, 0, heading).data() for c in range(self.model.rowCount(heading))]
            shown.append((str(heading.data()), [str(c) for c in children]))
        return shown

    def _chosen(self, index: QModelIndex) -> None:
        key = index.data(KEY_ROLE)
        if isinstance(key, str):
            self.selected.emit(key)
