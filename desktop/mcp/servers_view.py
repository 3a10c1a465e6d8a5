"""Settings' "MCP servers" page: the servers of the conversation shown in the window, each with its
address, state, tool count and last error, kept current by the runtime's events; Refresh asks again.

It draws an :class:`McpServers` (its conversation's, from :class:`McpServersSource`) and follows it
while open. With no conversation, or none of its servers configured, it says where servers come from.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.approval.present import reveal_hidden
from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.mcp.servers import EMPTY_TEXT, McpServersSource, ServerRow

__all__ = ["COLUMNS", "NO_CONVERSATION_TEXT", "McpServersPage"]

COLUMNS = (
    QT_TRANSLATE_NOOP("McpServers", "Server"),
    QT_TRANSLATE_NOOP("McpServers", "State"),
    QT_TRANSLATE_NOOP("McpServers", "Tools"),
    QT_TRANSLATE_NOOP("McpServers", "Address"),
    QT_TRANSLATE_NOOP("McpServers", "Last error"),
)
NO_CONVERSATION_TEXT = QT_TRANSLATE_NOOP(
    "McpServers",
    "Open a conversation to see its MCP servers. Servers come from your organisation's policy and from"
    " the project's .cowork/mcp.json file.",
)
_UNAVAILABLE_COLOUR = "#c62828"


class McpServersPage(QWidget):
    """See the module docstring. ``source`` is None when no conversation is shown."""

    def __init__(self, source: McpServersSource | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)
        self.table = QTreeWidget()
        self.table.setAccessibleName(translate("McpServers", "MCP servers"))
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels([translate("McpServers", column) for column in COLUMNS])
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.setMinimumHeight(120)
        header = self.table.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnWidth(3, 220)
        self.table.currentItemChanged.connect(lambda *_: self._show_details())
        self.details = QLabel()
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setAccessibleName(translate("McpServers", "Selected server"))
        self.empty_label = QLabel()
        self.empty_label.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_label.setWordWrap(True)
        self.problem_label = QLabel()
        self.problem_label.setTextFormat(Qt.TextFormat.PlainText)
        self.problem_label.setWordWrap(True)
        self.problem_label.setAccessibleName(translate("McpServers", "Problem listing the servers"))
        self.refresh_button = QPushButton(translate("McpServers", "&Refresh"))
        self.refresh_button.setAccessibleName(translate("McpServers", "Refresh the MCP servers"))
        self.refresh_button.setToolTip(
            translate("McpServers", "Ask the conversation's agent runtime for its MCP servers again")
        )
        self.refresh_button.clicked.connect(self.refresh)
        self.refresh_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        row = QHBoxLayout()
        row.addWidget(self.problem_label, 1)
        row.addWidget(self.refresh_button, 0, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignRight)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.details)
        layout.addLayout(row)
        if source is not None:
            redraw = self._redraw
            source.servers.subscribe(redraw)
            self.destroyed.connect(lambda *_: source.servers.unsubscribe(redraw))
        self._redraw()
        if source is not None:
            self.refresh()

    def rows(self) -> list[tuple[str, ...]]:
        """The table as shown, one tuple of column texts per server."""
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [tuple(item.text(c) for c in range(len(COLUMNS))) for item in items if item is not None]

    def refresh(self) -> None:
        if self._source is not None:
            self._source.refresh()

    def _redraw(self) -> None:
        source = self._source
        if source is None:
            self.heading.setText(translate("McpServers", "MCP servers"))
            self.empty_label.setText(translate("McpServers", NO_CONVERSATION_TEXT))
            self.empty_label.show()
            self.table.hide()
            self.details.hide()
            self.problem_label.hide()
            self.refresh_button.setEnabled(False)
            return
        servers = source.servers
        self.heading.setText(
            translate("McpServers", "MCP servers of the conversation “{name}”").format(
                name=reveal_hidden(source.conversation)
            )
        )
        current = self.table.currentItem()
        selected = current.data(0, Qt.ItemDataRole.UserRole) if current is not None else None
        self.table.clear()
        for server in servers.rows:
            item = QTreeWidgetItem([reveal_hidden(text) for text in _columns(server)])
            item.setData(0, Qt.ItemDataRole.UserRole, server.name)
            item.setToolTip(3, reveal_hidden(server.url))
            item.setToolTip(4, reveal_hidden(server.last_error))
            if server.rejected_tools:
                item.setToolTip(2, _rejected_text(server))
            if server.unavailable:
                item.setForeground(1, QBrush(QColor(_UNAVAILABLE_COLOUR)))
            self.table.addTopLevelItem(item)
            if server.name == selected:
                self.table.setCurrentItem(item)
        empty = not servers.rows
        self.table.setVisible(not empty)
        self.empty_label.setText(
            translate("McpServers", "Asking the conversation's agent runtime for its MCP servers…")
            if empty and servers.refreshing
            else translate("McpServers", EMPTY_TEXT)
        )
        self.empty_label.setVisible(empty)
        problem = servers.problem
        self.problem_label.setText(
            translate("McpServers", "Could not list the servers: {problem}").format(problem=problem)
            if problem
            else ""
        )
        self.problem_label.setVisible(bool(servers.problem))
        self.refresh_button.setEnabled(not servers.refreshing)
        self.refresh_button.setText(
            translate("McpServers", "Refreshing…")
            if servers.refreshing
            else translate("McpServers", "&Refresh")
        )
        self._show_details()

    def _show_details(self) -> None:
        source, item = self._source, self.table.currentItem()
        server = (
            source.servers.find(str(item.data(0, Qt.ItemDataRole.UserRole)))
            if source is not None and item is not None
            else None
        )
        if server is None:
            self.details.hide()
            return
        lines = [f"{server.name}: {server.state_text}"]
        if server.url:
            lines.append(translate("McpServers", "Address: {url}").format(url=server.url))
        if server.source_text:
            lines.append(translate("McpServers", "Configured in: {source}").format(source=server.source_text))
        if server.protocol_version:
            lines.append(
                translate("McpServers", "MCP version: {version}").format(version=server.protocol_version)
            )
        lines.append(translate("McpServers", "Tools registered: {count}").format(count=server.tool_count))
        if server.rejected_tools:
            lines.append(_rejected_text(server))
        if server.last_error:
            lines.append(translate("McpServers", "Last error: {error}").format(error=server.last_error))
        self.details.setText(reveal_hidden("\n".join(lines)))
        self.details.show()


def _columns(server: ServerRow) -> tuple[str, ...]:
    return (server.name, server.state_text, str(server.tool_count), server.url, server.last_error or "—")


def _rejected_text(server: ServerRow) -> str:
    shown = "; ".join(f"{tool}: {why}" for tool, why in server.rejected_tools[:10])
    more = len(server.rejected_tools) - 10
    if more > 0:
        return translate("McpServers", "Not registered: {tools} (and {count} more)").format(
            tools=shown, count=more
        )
    return translate("McpServers", "Not registered: {tools}").format(tools=shown)
