"""Settings' MCP servers page: the shown conversation's servers with their address, state, tools and
last error, kept current by the runtime's events; Refresh asks again; an empty list says where servers
come from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends.null import Keyring
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.conversation.state import ConversationState
from desktop.mcp.servers import EMPTY_TEXT, McpServers, McpServersSource, ServerRow
from desktop.mcp.servers_view import NO_CONVERSATION_TEXT, McpServersPage
from desktop.settings.dialog import SettingsDialog
from desktop.settings.store import SettingsStore
from tests.desktop.mcp.requests import event, server_state
from tests.desktop.mcp.widgets import assert_every_control_is_named


class Refresher:
    """Stands for the workbench's ``GetMcpServers``: counts the asks; the test answers them."""

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers
        self.asked = 0

    def __call__(self) -> None:
        self.asked += 1
        self.servers.start_refresh()


@pytest.fixture
def state() -> ConversationState:
    return ConversationState()


@pytest.fixture
def refresher(state: ConversationState) -> Refresher:
    return Refresher(state.mcp_servers)


@pytest.fixture
def page(qtbot: QtBot, state: ConversationState, refresher: Refresher) -> McpServersPage:
    shown = McpServersPage(McpServersSource("Trip planning", state.mcp_servers, refresher))
    qtbot.addWidget(shown)
    shown.show()
    return shown


def test_a_server_row_reads_what_the_runtime_sends_leniently() -> None:
    row = ServerRow.from_wire(
        server_state(
            "tickets",
            "unavailable",
            toolCount=-2,
            lastError="refused\n  twice",
            rejectedTools=[{"toolName": "drop", "reason": "not allowlisted"}, "junk"],
            someFutureField=True,
        )
    )
    assert row == ServerRow(
        name="tickets",
        state="unavailable",
        url="https://tickets.example.com/mcp",
        tool_count=0,
        last_error="refused twice",
        protocol_version="2025-11-25",
        source="workspace",
        rejected_tools=(("drop", "not allowlisted"),),
    )
    assert row.state_text == "Unavailable"
    assert row.source_text == "Project (.cowork/mcp.json)"
    assert ServerRow.from_wire({"state": "connected"}) is None


def test_opening_the_page_asks_the_runtime_and_shows_its_answer(
    page: McpServersPage, state: ConversationState, refresher: Refresher
) -> None:
    assert refresher.asked == 1
    assert page.empty_label.text() == "Asking the conversation's agent runtime for its MCP servers…"
    assert not page.refresh_button.isEnabled()

    state.mcp_servers.replace(
        [
            server_state("tickets"),
            server_state("weather", "unavailable", lastError="Connection refused", toolCount=0),
        ]
    )

    assert page.heading.text() == "MCP servers of the conversation “Trip planning”"
    assert page.rows() == [
        ("tickets", "Connected", "3", "https://tickets.example.com/mcp", "—"),
        ("weather", "Unavailable", "0", "https://weather.example.com/mcp", "Connection refused"),
    ]
    assert page.empty_label.isHidden()
    assert page.refresh_button.isEnabled()


def test_the_list_follows_the_runtimes_events(page: McpServersPage, state: ConversationState) -> None:
    state.mcp_servers.replace([server_state("tickets", "connecting", toolCount=0)])
    state.apply(event("mcp_server_state_changed", server_state("tickets", "connected", toolCount=5)))
    state.apply(event("mcp_server_state_changed", server_state("search", "authorizing", toolCount=0)))
    assert [row[:3] for row in page.rows()] == [
        ("tickets", "Connected", "5"),
        ("search", "Waiting for you to sign in", "0"),
    ]
    state.apply(
        event("mcp_server_state_changed", server_state("tickets", "unavailable", lastError="Timed out"))
    )
    assert page.rows()[0][1::3] == ("Unavailable", "Timed out")


def test_selecting_a_server_shows_everything_about_it(page: McpServersPage, state: ConversationState) -> None:
    state.mcp_servers.replace(
        [
            server_state(
                "tickets",
                rejectedTools=[{"toolName": "delete_all", "reason": "not allowlisted by the policy"}],
            )
        ]
    )
    page.table.setCurrentItem(page.table.topLevelItem(0))
    text = page.details.text()
    assert "Address: https://tickets.example.com/mcp" in text
    assert "Configured in: Project (.cowork/mcp.json)" in text
    assert "MCP version: 2025-11-25" in text
    assert "Not registered: delete_all: not allowlisted by the policy" in text
    state.apply(event("mcp_server_state_changed", server_state("tickets", "unavailable", lastError="Gone")))
    assert "Last error: Gone" in page.details.text()  # the selection stays through updates


def test_refresh_asks_again_and_a_failure_is_shown(
    qtbot: QtBot, page: McpServersPage, state: ConversationState, refresher: Refresher
) -> None:
    state.mcp_servers.replace([])
    assert page.empty_label.text() == EMPTY_TEXT
    assert ".cowork/mcp.json" in EMPTY_TEXT
    assert "organisation's policy" in EMPTY_TEXT
    page.refresh_button.click()
    assert refresher.asked == 2
    state.mcp_servers.failed("The agent runtime did not answer (timed out).")
    assert (
        page.problem_label.text()
        == "Could not list the servers: The agent runtime did not answer (timed out)."
    )
    assert page.problem_label.isVisible()


def test_without_a_conversation_the_page_says_where_servers_come_from(qtbot: QtBot) -> None:
    page = McpServersPage(None)
    qtbot.addWidget(page)
    assert page.empty_label.text() == NO_CONVERSATION_TEXT
    assert page.table.isHidden()
    assert not page.refresh_button.isEnabled()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SettingsStore]:
    previous = keyring.get_keyring()
    keyring.set_keyring(Keyring())  # nothing is read from or written to the real keychain
    try:
        yield SettingsStore(tmp_path / "settings.json")
    finally:
        keyring.set_keyring(previous)


def test_settings_has_an_mcp_page_that_fits_a_small_screen(
    qtbot: QtBot, store: SettingsStore, state: ConversationState, refresher: Refresher
) -> None:
    state.mcp_servers.replace([server_state("tickets")])
    dialog = SettingsDialog(store, mcp=McpServersSource("Trip planning", state.mcp_servers, refresher))
    qtbot.addWidget(dialog)
    dialog.show()
    tabs = [dialog.tabs.tabText(i).replace("&", "") for i in range(dialog.tabs.count())]
    assert tabs == ["General", "MCP servers", "Prices"]
    dialog.tabs.setCurrentWidget(dialog.mcp_servers)
    assert dialog.mcp_servers.rows()[0][:2] == ("tickets", "Connected")

    minimum = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert minimum.width() <= 1024
    assert minimum.height() <= 640 - 40
    dialog.resize(minimum)
    QApplication.processEvents()
    assert dialog.mcp_servers.table.viewport().height() >= 60
    assert_every_control_is_named(dialog.mcp_servers)


def test_settings_without_a_conversation_still_lists_no_servers(qtbot: QtBot, store: SettingsStore) -> None:
    dialog = SettingsDialog(store)
    qtbot.addWidget(dialog)
    assert dialog.mcp_servers.empty_label.text() == NO_CONVERSATION_TEXT
