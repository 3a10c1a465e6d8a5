"""When Cowork notifies through the operating system, and what it says: the decision table."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.conversation.notify import MAX_BODY_CHARS, NotificationKind, notification_for


def event(kind: str, **payload: Any) -> dict[str, Any]:
    return {"eventType": kind, "sessionId": "sess_1", "taskId": "task_1", "payload": payload}


APPROVAL = event("approval_requested", approvalId="a1", actionSummary="Write: README.md")
DONE = event("task_completed", stepCount=3)
FAILED = event("task_failed", stepCount=2, error={"code": "LLM_BUDGET_EXCEEDED", "message": "Out of tokens."})
CANCELLED = event("task_cancelled", stepCount=1, reason="cancelled by the user")
QUESTION = event("elicitation_requested", elicitationId="e1", serverName="tickets", message="Which project?")
CHUNK = event("text_chunk", text="Hello")


@pytest.mark.parametrize(
    ("happened", "active", "enabled", "expected"),
    [
        (DONE, False, True, NotificationKind.TASK_COMPLETED),
        (FAILED, False, True, NotificationKind.TASK_FAILED),
        (APPROVAL, False, True, NotificationKind.APPROVAL_WAITING),
        (QUESTION, False, True, NotificationKind.INPUT_WAITING),
        (CANCELLED, False, True, None),  # the user cancelled it: not news to them
        (CHUNK, False, True, None),
        (DONE, True, True, None),  # the user is looking at Cowork
        (APPROVAL, True, True, None),
        (DONE, False, False, None),  # turned off
        (APPROVAL, False, False, None),
    ],
)
def test_the_decision_table(
    happened: dict[str, Any], active: bool, enabled: bool, expected: NotificationKind | None
) -> None:
    found = notification_for(happened, conversation="shop", window_active=active, enabled=enabled)
    assert (found.kind if found else None) == expected


def test_what_each_says() -> None:
    def said(happened: dict[str, Any]) -> tuple[str, str]:
        found = notification_for(happened, conversation="shop", window_active=False, enabled=True)
        assert found is not None
        assert found.session_id == "sess_1"
        return found.title, found.body

    assert said(DONE) == ("Task finished", "shop: done.")
    assert said(FAILED) == ("Task failed", "shop: the task stopped. Out of tokens.")
    assert said(APPROVAL) == ("Approval needed", "shop: Write: README.md")
    assert said(QUESTION) == ("Input needed", "shop: tickets asks for your input.")


def test_a_long_body_is_cut_and_a_malformed_event_still_notifies_plainly() -> None:
    long = event("approval_requested", actionSummary="Run: " + "x" * 1000)
    found = notification_for(long, conversation="shop", window_active=False, enabled=True)
    assert found is not None
    assert len(found.body) == MAX_BODY_CHARS
    assert found.body.endswith("…")
    bare = notification_for(
        {"eventType": "approval_requested", "payload": None},
        conversation="shop",
        window_active=False,
        enabled=True,
    )
    assert bare is not None
    assert bare.body == "shop: an action"
    assert bare.session_id is None
