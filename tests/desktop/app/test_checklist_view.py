"""The read-only checklist beside the conversation (seed 002 "UI/event model"): drawn from the live
``task_list_*`` events, and for a past conversation from its stored history; plus the notice of a
compacted context (seed 000 §5.4)."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from desktop.app.checklist_view import ChecklistView
from desktop.conversation.items import Notice
from desktop.conversation.state import ConversationState
from tests.desktop.conversation.events import event


def checklist(*items: tuple[str, str, str, str], nudged: bool = False) -> dict[str, Any]:
    return {
        "checklist": {
            "items": [{"id": i, "title": t, "status": s, "kind": k} for i, t, s, k in items],
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
            "verificationNudgeNeeded": nudged,
        }
    }


def shown(view: ChecklistView) -> list[str]:
    return [label.text() for label in view.labels]


def view_with_state(qtbot: QtBot) -> tuple[ChecklistView, ConversationState, QWidget]:
    window = QWidget()  # beside the conversation, as in the main window: shown or hidden by the view
    qtbot.addWidget(window)
    view = ChecklistView(window)
    state = ConversationState()
    view.show_state(state.checklist)
    window.show()
    return view, state, window


def test_live_events_draw_the_latest_checklist(qtbot: QtBot) -> None:
    view, state, _window = view_with_state(qtbot)
    assert not view.isVisible()  # no checklist yet: nothing beside the conversation

    state.apply(
        event(
            "task_list_created",
            checklist(
                ("a", "Edit the config", "in_progress", "implementation"), ("b", "Tidy", "pending", "other")
            ),
        )
    )
    assert view.isVisible()
    assert shown(view) == ["▶  Edit the config", "☐  Tidy"]
    assert view.heading.text() == "Checklist — 0 of 2 done"
    assert view.labels[0].font().bold()

    done = checklist(
        ("a", "Edit the config", "completed", "implementation"),
        ("b", "Tidy", "completed", "other"),
        nudged=True,
    )
    state.apply(event("task_list_updated", done))
    state.apply(event("task_list_verification_nudged", done))
    assert shown(view) == ["☑  Edit the config", "☑  Tidy"]
    assert view.heading.text() == "Checklist — 2 of 2 done"
    assert view.nudge.isVisible()


def tool_result(call_id: str, name: str, content: str, status: str = "succeeded") -> dict[str, Any]:
    return {
        "messageId": f"m_{call_id}",
        "sessionId": "s",
        "role": "tool",
        "content": content,
        "timestamp": "2026-01-01T00:00:00Z",
        "toolCallId": call_id,
        "toolName": name,
        "toolStatus": status,
    }


def call(call_id: str, name: str) -> dict[str, Any]:
    return {
        "messageId": f"a_{call_id}",
        "sessionId": "s",
        "role": "assistant",
        "content": "",
        "timestamp": "2026-01-01T00:00:00Z",
        "toolCalls": [{"toolCallId": call_id, "toolName": name, "arguments": {}}],
    }


def test_a_past_conversation_replays_its_checklist_from_the_history(qtbot: QtBot) -> None:
    view, state, _window = view_with_state(qtbot)
    created = {"items": [{"id": "a", "title": "Write it", "status": "pending", "kind": "implementation"}]}
    updated = {
        "items": [
            {"id": "a", "title": "Write it", "status": "completed", "kind": "implementation"},
            {"id": "v", "title": "Run the tests", "status": "in_progress", "kind": "verification"},
        ],
        "verificationNudgeNeeded": False,
    }
    history = [
        {
            "messageId": "u",
            "sessionId": "s",
            "role": "user",
            "content": "Do it",
            "timestamp": "2026-01-01T00:00:00Z",
        },
        call("c1", "task_list_create"),
        tool_result("c1", "task_list_create", json.dumps(created)),
        call("c2", "task_list_update"),
        tool_result("c2", "task_list_update", json.dumps(updated)),
        call("c3", "task_list_create"),
        tool_result(
            "c3", "task_list_create", "Failed (INVALID_REQUEST): A checklist already exists", "failed"
        ),
    ]
    state.load_history(history)
    assert shown(view) == ["☑  Write it", "▶  Run the tests  (verification)"]
    assert not view.nudge.isVisible()

    # Another past conversation without a checklist: the panel goes away.
    state.load_history(history[:1])
    assert not view.isVisible()


def test_a_compacted_context_is_a_notice_in_the_conversation() -> None:
    state = ConversationState()
    state.apply(event("context_compacted", {"mode": "summarized", "messages": 6, "compactionCount": 1}))
    state.apply(
        event(
            "context_compacted",
            {
                "mode": "truncated",
                "messages": 4,
                "compactionCount": 1,
                "reason": "the summary call failed: no",
            },
        )
    )
    notices = [item.text for item in state.items if isinstance(item, Notice)]
    assert "6 earlier messages were summarised" in notices[0]
    assert "4 earlier messages are no longer sent" in notices[1]
    assert "summary call failed" in notices[1]
