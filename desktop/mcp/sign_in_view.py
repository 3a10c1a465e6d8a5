"""The conversation's notice that an MCP server needs the user to sign in, and the browser opening.

The notice (a :class:`SignInNotice` item) names the server and the host of its sign-in page, says
whether the browser was opened on it — and why not when it was not — and keeps the address at hand:
selectable in a read-only field, with "Copy address" and "Open in browser" (again). It is not modal:
the conversation goes on around it, and the runtime finishes the sign-in when the browser comes back
to its loopback address.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFont, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop.app.messages import ItemWidget
from desktop.approval.present import reveal_hidden
from desktop.conversation.items import SignInNotice
from desktop.i18n import translate
from desktop.mcp.authorization import host_of, sign_in_problem

__all__ = ["SignInView", "open_in_browser"]

logger = logging.getLogger(__name__)


def open_in_browser(url: str) -> bool:
    """Open ``url`` in the system browser; whether the system could. Only web addresses the sign-in
    rules allow (:func:`sign_in_problem`) are handed to the system."""
    if sign_in_problem(url):
        return False
    parsed = QUrl(url.strip(), QUrl.ParsingMode.StrictMode)
    if not parsed.isValid():
        return False
    return bool(QDesktopServices.openUrl(parsed))


class SignInView(ItemWidget):
    """``Sign in to weather`` — where, whether the browser opened, the address, Open again, Copy."""

    def __init__(self, item: SignInNotice, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("signInNotice")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(4)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setWordWrap(True)
        font = QFont(self.title.font())
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.address = QLineEdit()
        self.address.setReadOnly(True)
        self.address.setAccessibleName(translate("McpServers", "Sign-in address"))
        self.address.setToolTip(
            translate("McpServers", "The sign-in page's address: select it, or copy it with Copy address")
        )
        self.open_button = QPushButton()
        self.open_button.setAccessibleName(translate("McpServers", "Open the sign-in page in your browser"))
        self.open_button.clicked.connect(self.open_again)
        self.copy_button = QPushButton(translate("McpServers", "Copy address"))
        self.copy_button.setAccessibleName(translate("McpServers", "Copy the sign-in address"))
        self.copy_button.clicked.connect(self.copy_address)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.address, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.open_button)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        layout.addLayout(row)
        self.refresh()

    @property
    def notice(self) -> SignInNotice:
        assert isinstance(self.item, SignInNotice)
        return self.item

    def refresh(self) -> None:
        notice = self.notice
        server = reveal_hidden(notice.server_name)
        host = host_of(notice.url)
        self.title.setText(translate("McpServers", "Sign in to {server}").format(server=server))
        if notice.opened and host:
            words = translate(
                "McpServers",
                "Sign in to {server} in your browser: its sign-in page on {host} was opened there. The tool"
                " call goes on once you have signed in.",
            ).format(server=server, host=host)
        elif notice.opened:
            words = translate(
                "McpServers",
                "Sign in to {server} in your browser: its sign-in page was opened there. The tool call goes"
                " on once you have signed in.",
            ).format(server=server)
        elif host:
            words = translate("McpServers", "{server} needs you to sign in on {host}.").format(
                server=server, host=host
            )
            words = f"{words} {notice.problem}".strip()
        else:
            words = translate("McpServers", "{server} needs you to sign in.").format(server=server)
            words = f"{words} {notice.problem}".strip()
        self.text.setText(words)
        self.address.setText(reveal_hidden(notice.url))
        self.address.setCursorPosition(0)
        allowed = not sign_in_problem(notice.url)
        self.open_button.setText(
            translate("McpServers", "Open again")
            if notice.opened
            else translate("McpServers", "Open in browser")
        )
        self.open_button.setEnabled(allowed)
        self.open_button.setToolTip(
            translate("McpServers", "Open the sign-in page in your browser")
            if allowed
            else sign_in_problem(notice.url)
        )

    def open_again(self) -> None:
        notice = self.notice
        problem = sign_in_problem(notice.url)
        opened = not problem and open_in_browser(notice.url)
        logger.info("sign-in page of %s opened again: %s", notice.server_name, opened)
        notice.opened = opened
        notice.problem = (
            ""
            if opened
            else problem
            or translate("McpServers", "Cowork could not open your browser. Open the address yourself.")
        )
        self.refresh()

    def copy_address(self) -> None:
        QGuiApplication.clipboard().setText(self.notice.url)
