"""What the conversation shows of its MCP servers: a running tool's progress on its row, a server that
became unavailable (or came back), a configuration that was not used, a tool waiting for the user's
answer, and the sign-in notice with its buttons — from the state's events to the widgets drawn."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from pytestqt.qtbot import QtBot

from contracts.events import EventType, SessionEvent
from desktop.app.conversation_view import ConversationView
from desktop.app.messages import NoticeView, ToolRowView
from desktop.conversation.items import Notice, SignInNotice, Tone, ToolCallRow
from desktop.conversation.state import ConversationState
from desktop.mcp.sign_in_view import SignInView, open_in_browser
from tests.desktop.mcp.requests import elicitation, event, server_state
from tests.desktop.mcp.widgets import assert_every_control_is_named


def running_tool(
    state: ConversationState, call_id: str = "call_1", name: str = "tickets/book"
) -> ToolCallRow:
    state.apply(event("tool_requested", {"toolName": name, "toolCallId": call_id}))
    row = state.items[-1]
    assert isinstance(row, ToolCallRow)
    return row


def progress(**fields: Any) -> dict[str, Any]:
    return event("mcp_progress", {"serverName": "tickets", "toolName": "book", "progress": 3, **fields})


def test_the_test_events_are_what_the_runtime_sends() -> None:
    for raw in (
        progress(toolCallId="call_1", total=10, message="Searching"),
        event("mcp_server_state_changed", server_state()),
        event("elicitation_requested", elicitation()),
        event("elicitation_resolved", {"elicitationId": "eli_1", "action": "accept"}),
        event("mcp_authorization_required", {"serverName": "t", "authorizationUrl": "https://a.example/x"}),
        event(
            "mcp_config_warning",
            {"message": "Bad entry.", "source": "workspace", "path": "/p/.cowork/mcp.json"},
        ),
    ):
        parsed = SessionEvent.model_validate_json(json.dumps(raw))  # as the runtime's own check reads it
        assert parsed.event_type is EventType(raw["eventType"])


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"total": 10, "message": "Searching  flights\n"}, "3 of 10 · Searching flights"),
        ({"total": 100}, "3%"),
        ({"progress": 0.5, "total": 1, "message": "Half"}, "50% · Half"),
        ({"message": "Connecting"}, "Connecting"),
        ({}, "3 done"),
        ({"message": "x" * 500}, "x" * 119 + "…"),
    ],
)
def test_a_running_tools_progress_shows_on_its_row(fields: dict[str, Any], shown: str) -> None:
    state = ConversationState()
    row = running_tool(state)
    state.apply(progress(toolCallId="call_1", **fields))
    assert row.progress == shown


def test_progress_without_a_call_id_finds_the_running_row_of_that_server_and_tool(qtbot: QtBot) -> None:
    state = ConversationState()
    other = running_tool(state, "call_0", "ReadFile")
    row = running_tool(state, "call_1", "tickets/book")
    state.apply(progress(total=10, message="Booking"))
    assert other.progress is None
    assert row.progress == "3 of 10 · Booking"

    assert state.status.task == "EXECUTING_TOOLS"
    view = ToolRowView(row)
    qtbot.addWidget(view)
    assert view.header.text().endswith("— running · 3 of 10 · Booking")
    row.target = "tickets/book"  # what the runtime names as an MCP call's target: not shown twice
    view.refresh()
    assert view.header.text() == "⋯  tickets/book   — running · 3 of 10 · Booking"

    state.apply(
        event("tool_completed", {"toolName": "tickets/book", "toolCallId": "call_1", "status": "succeeded"})
    )
    state.apply(progress(toolCallId="call_1", total=10, message="late"))  # after the end: ignored
    view.refresh()
    assert "Booking" not in view.header.text()
    assert "late" not in view.header.text()


def test_a_server_waiting_for_the_users_answer_says_so_on_the_tool_row() -> None:
    state = ConversationState()
    row = running_tool(state)
    assert state.status.task == "CHECKING_POLICY"
    state.apply(event("elicitation_requested", elicitation("eli_1")))
    assert row.progress == "tickets asks for your input"
    assert state.status.task == "EXECUTING_TOOLS"  # past the policy: the call runs and waits
    state.apply(event("elicitation_resolved", {"elicitationId": "eli_1", "action": "accept"}))
    assert row.progress is None


def test_a_server_that_becomes_unavailable_is_said_once_and_its_return_too() -> None:
    state = ConversationState()
    state.apply(event("mcp_server_state_changed", server_state("tickets", "connecting")))
    state.apply(event("mcp_server_state_changed", server_state("tickets", "connected")))
    assert [i for i in state.items if isinstance(i, Notice)] == []

    down = server_state("tickets", "unavailable", lastError="Connection refused.")
    state.apply(event("mcp_server_state_changed", down))
    state.apply(event("mcp_server_state_changed", down))  # still down: nothing new to say
    state.apply(event("mcp_server_state_changed", server_state("tickets", "connected")))

    notices = [(i.text, i.tone) for i in state.items if isinstance(i, Notice)]
    assert notices == [
        (
            "The MCP server tickets is unavailable: Connection refused. Its tools answer with an error for"
            " now; Cowork tries it again on a later call.",
            Tone.WARNING,
        ),
        ("The MCP server tickets is available again.", Tone.INFO),
    ]
    assert state.mcp_servers.find("tickets") is not None


def test_a_configuration_that_was_not_used_is_a_warning_in_the_conversation() -> None:
    state = ConversationState()
    state.apply(
        event(
            "mcp_config_warning",
            {
                "message": "Server x: the url must start with https://.",
                "source": "workspace",
                "path": "/p/.cowork/mcp.json",
            },
        )
    )
    notice = state.items[-1]
    assert isinstance(notice, Notice)
    assert notice.tone is Tone.WARNING
    assert (
        notice.text
        == "MCP configuration not used (in /p/.cowork/mcp.json): Server x: the url must start with https://."
    )


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the app handed the system to open (QDesktopServices.openUrl, recorded instead)."""
    urls: list[str] = []

    def record(url: QUrl) -> bool:
        urls.append(bytes(url.toEncoded().data()).decode())  # the bytes the browser is given
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", record)
    return urls


OAUTH_URL = (
    "https://auth.example.com/authorize?response_type=code&client_id=abc"
    "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5173%2Fcallback&scope=read%20write&state=a%2Bb%3D"
    "&code_challenge=x-_~.&code_challenge_method=S256&resource=https%3A%2F%2Fmcp.example.com%2Fmcp"
)


def test_open_in_browser_hands_the_sign_in_page_over_byte_for_byte_and_nothing_else(
    opened: list[str],
) -> None:
    assert open_in_browser(OAUTH_URL)
    assert not open_in_browser("file:///etc/passwd")
    assert not open_in_browser("https://auth.example.com/a b")
    assert opened == [OAUTH_URL]  # the state, PKCE and redirect parameters unchanged


def test_the_sign_in_notice_names_the_server_and_host_and_opens_again(
    qtbot: QtBot, opened: list[str]
) -> None:
    url = "https://auth.example.com/authorize?client_id=cowork&state=abc"
    state = ConversationState()
    view = ConversationView()
    qtbot.addWidget(view)
    view.show_state(state)
    state.add_sign_in("tickets", url, opened=True)

    shown = view.widgets()[-1]
    assert isinstance(shown, SignInView)
    assert shown.title.text() == "Sign in to tickets"
    assert "auth.example.com" in shown.text.text()
    assert "was opened" in shown.text.text()
    assert shown.address.text() == url
    assert shown.address.isReadOnly()
    assert shown.open_button.text() == "Open again"
    assert_every_control_is_named(shown)

    shown.open_button.click()
    assert opened == [url]
    shown.copy_button.click()
    assert QGuiApplication.clipboard().text() == url


def test_when_opening_failed_the_notice_says_so_and_offers_the_address(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    notice = SignInNotice(
        1,
        "tickets",
        "https://auth.example.com/a",
        opened=False,
        problem="Cowork could not open your browser. Open the address below yourself.",
    )
    view = SignInView(notice)
    qtbot.addWidget(view)
    assert "could not open your browser" in view.text.text()
    assert view.open_button.text() == "Open in browser"

    view.open_button.click()  # still no browser
    assert not notice.opened
    assert "could not open your browser" in view.text.text()


def test_an_address_that_is_not_a_sign_in_page_cannot_be_opened_from_the_notice(
    qtbot: QtBot, opened: list[str]
) -> None:
    notice = SignInNotice(1, "tickets", "file:///etc/passwd", opened=False, problem="not opened")
    view = SignInView(notice)
    qtbot.addWidget(view)
    assert not view.open_button.isEnabled()
    view.open_again()
    assert opened == []


def test_notices_about_servers_are_drawn_as_notices(qtbot: QtBot) -> None:
    state = ConversationState()
    view = ConversationView()
    qtbot.addWidget(view)
    view.show_state(state)
    state.apply(
        event("mcp_server_state_changed", server_state("tickets", "unavailable", lastError="Timed out"))
    )
    assert isinstance(view.widgets()[-1], NoticeView)
