"""A task whose only change was an EditFile offers the review of its changes, as a WriteFile does."""

from __future__ import annotations

from desktop.conversation.items import Notice
from desktop.conversation.state import ConversationState
from tests.desktop.conversation.events import event


def test_a_task_that_edited_a_file_offers_its_review() -> None:
    state = ConversationState()
    for one in (
        event("task_started", {"maxSteps": 10, "approvalMode": "always"}),
        event("tool_requested", {"toolName": "EditFile", "toolCallId": "e1", "target": "/p/app.py"}),
        event(
            "tool_completed",
            {"toolName": "EditFile", "toolCallId": "e1", "status": "succeeded", "latencyMs": 3},
        ),
        event("tool_requested", {"toolName": "Grep", "toolCallId": "g1", "target": "/p"}),
        event(
            "tool_completed", {"toolName": "Grep", "toolCallId": "g1", "status": "succeeded", "latencyMs": 3}
        ),
        event("task_completed", {"stepCount": 2}, step=None),
    ):
        state.apply(one)
    notices = [item for item in state.items if isinstance(item, Notice)]
    assert [n.action for n in notices] == ["review_changes"]
    assert notices[0].text.startswith("1 file changed")
