"""The sidebar: a "New conversation" button (a project folder, or a general chat) and a search field
above a tree of conversations — one group per project folder, "General chats" below — drawn from a
:class:`desktop.conversation.sidebar.Sidebar`.

A conversation's context menu renames it (F2, edited in place), exports it to Markdown or JSON, and
deletes it (Delete); the view only asks for these, the window carries them out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop.conversation.sidebar import ConversationSummary, Sidebar, filter_sidebar
from desktop.i18n import translate

__all__ = ["KEY_ROLE", "SidebarView", "sidebar_model"]

KEY_ROLE = Qt.ItemDataRole.UserRole + 1


def _when(moment: datetime) -> str:
    local = moment.astimezone()
    today = datetime.now(UTC).astimezone().date()
    if local.date() == today:
        return local.strftime(translate("Sidebar", "today %H:%M"))
    return local.strftime("%d %b %Y %H:%M")


def _conversation_item(summary: ConversationSummary) -> QStandardItem:
    item = QStandardItem(summary.title)
    item.setData(summary.session_id, KEY_ROLE)
    item.setEditable(True)  # renamed in place (F2); the window keeps the name
    count = (
        translate("Sidebar", " · {count} messages").format(count=summary.message_count)
        if summary.message_count
        else ""
    )
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
        heading = _heading(
            translate("Sidebar", "General chats"),
            translate("Sidebar", "Conversations without a project folder"),
        )
        for summary in sidebar.general:
            heading.appendRow(_conversation_item(summary))
        root.appendRow(heading)
    return model


class SidebarView(QWidget):
    selected = Signal(str)
    """A conversation's key was chosen."""
    rename_requested = Signal(str, str)
    """``(key, new title)``: the user renamed a conversation in place."""
    delete_requested = Signal(str)
    """The user asked to delete a conversation (the window asks for confirmation)."""
    export_requested = Signal(str, str)
    """``(key, "markdown" | "json")``: the user asked to export a conversation."""

    def __init__(self, new_in_folder: QAction, new_general: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.new_button = QToolButton()
        self.new_button.setText(translate("Sidebar", "New conversation"))
        self.new_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(self.new_button)
        menu.addAction(new_in_folder)
        menu.addAction(new_general)
        self.new_button.setMenu(menu)
        self.new_button.setDefaultAction(new_in_folder)
        self.new_button.setText(translate("Sidebar", "New conversation"))
        self.model = QStandardItemModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setHeaderHidden(True)
        self.tree.setAccessibleName(translate("Sidebar", "Conversations"))
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.activated.connect(self._chosen)
        self.tree.clicked.connect(self._chosen)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.model.itemChanged.connect(self._item_renamed)
        self._filling = False
        self._sidebar = Sidebar()
        self._selected_key: str | None = None
        self.search = QLineEdit()
        self.search.setPlaceholderText(translate("Sidebar", "Search conversations (Ctrl+Shift+F)"))
        self.search.setAccessibleName(translate("Sidebar", "Search conversations"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _text: self._show())
        self.rename_action = self._tree_action(translate("Sidebar", "&Rename"), "F2", self.rename_current)
        self.export_markdown_action = self._tree_action(
            translate("Sidebar", "Export as &Markdown…"), None, lambda: self._export("markdown")
        )
        self.export_json_action = self._tree_action(
            translate("Sidebar", "Export as &JSON…"), None, lambda: self._export("json")
        )
        self.delete_action = self._tree_action(
            translate("Sidebar", "&Delete…"), QKeySequence.StandardKey.Delete, self._delete
        )
        self.menu: QMenu | None = None
        """The last context menu shown (for tests to read)."""
        self.placeholder = QLabel(translate("Sidebar", "Starting…"))
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 0, 8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.placeholder)
        self.tree.hide()

    def show_sidebar(self, sidebar: Sidebar, selected_key: str | None) -> None:
        self._sidebar = sidebar
        self._selected_key = selected_key
        self._show()

    def _show(self) -> None:
        query = self.search.text()
        shown = filter_sidebar(self._sidebar, query)
        self._filling = True
        try:
            sidebar_model(shown, self.model)
        finally:
            self._filling = False
        self.tree.expandAll()
        empty = not shown.projects and not shown.general
        self.tree.setVisible(not empty)
        self.placeholder.setVisible(empty)
        if query.strip() and (self._sidebar.projects or self._sidebar.general):
            self.placeholder.setText(translate("Sidebar", "No conversation matches your search."))
        else:
            self.placeholder.setText(
                translate("Sidebar", "No conversations yet. Start one with New conversation (Ctrl+N).")
            )
        self.select(self._selected_key)

    def show_message(self, text: str) -> None:
        self.placeholder.setText(text)
        self.placeholder.show()

    def select(self, key: str | None) -> None:
        self._selected_key = key
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

    def current_key(self) -> str | None:
        """The key of the conversation the tree's cursor is on."""
        key = self.tree.currentIndex().data(KEY_ROLE)
        return key if isinstance(key, str) else None

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def rename_current(self) -> None:
        """Edit the current conversation's title in place (Enter keeps it, Esc leaves it)."""
        index = self.tree.currentIndex()
        if isinstance(index.data(KEY_ROLE), str):
            self.tree.edit(index)

    def _tree_action(
        self,
        text: str,
        shortcut: QKeySequence | QKeySequence.StandardKey | str | None,
        slot: Callable[[], object],
    ) -> QAction:
        made = QAction(text, self.tree)
        if shortcut is not None:
            made.setShortcut(QKeySequence(shortcut))
            # Only while the list has the focus: F2 and Delete mean other things elsewhere.
            made.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        made.triggered.connect(lambda _checked=False: slot())
        self.tree.addAction(made)
        return made

    def _context_menu(self, position: QPoint) -> None:
        index = self.tree.indexAt(position)
        if not isinstance(index.data(KEY_ROLE), str):
            return
        self.tree.setCurrentIndex(index)
        menu = QMenu(self.tree)
        menu.setAccessibleName(translate("Sidebar", "Conversation actions"))
        menu.addAction(self.rename_action)
        menu.addAction(self.export_markdown_action)
        menu.addAction(self.export_json_action)
        menu.addSeparator()
        menu.addAction(self.delete_action)
        self.menu = menu
        menu.popup(self.tree.viewport().mapToGlobal(position))

    def _export(self, kind: str) -> None:
        key = self.current_key()
        if key is not None:
            self.export_requested.emit(key, kind)

    def _delete(self) -> None:
        key = self.current_key()
        if key is not None:
            self.delete_requested.emit(key)

    def _item_renamed(self, item: QStandardItem) -> None:
        if self._filling:
            return
        key = item.data(KEY_ROLE)
        summary = self._sidebar.find(key) if isinstance(key, str) else None
        if summary is None or not isinstance(key, str):
            return
        if " ".join(item.text().split()) != summary.title:
            self.rename_requested.emit(key, item.text())

    def _chosen(self, index: QModelIndex) -> None:
        key = index.data(KEY_ROLE)
        if isinstance(key, str):
            self.selected.emit(key)
