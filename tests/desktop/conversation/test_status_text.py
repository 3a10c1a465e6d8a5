"""The status strip's words for every state of the session and its task: no "Task no task yet", no
"Step 0 of 40" while the first step's tools run."""

from __future__ import annotations

import pytest

from desktop.conversation.state import ConversationState
from desktop.conversation.status_text import state_text, steps_text
from tests.desktop.conversation.events import event

WORDING = [
    (None, None, "Ready for your message"),
    ("SESSION_CREATED", None, "Starting…"),
    ("SESSION_RUNNING", None, "Ready for your message"),
    ("SESSION_RUNNING", "IDLE", "Ready for your message"),
    ("SESSION_RUNNING", "TASK_RUNNING", "Working…"),
    ("SESSION_CREATED", "TASK_RUNNING", "Working…"),
    ("SESSION_RUNNING", "WAITING_FOR_LLM", "Waiting for the model…"),
    ("SESSION_RUNNING", "PROCESSING_RESPONSE", "Reading the model's answer…"),
    ("SESSION_RUNNING", "CHECKING_POLICY", "Checking the policy…"),
    ("SESSION_RUNNING", "WAITING_FOR_APPROVAL", "Waiting for your approval"),
    ("SESSION_RUNNING", "EXECUTING_TOOLS", "Running tools…"),
    ("SESSION_RUNNING", "TASK_COMPLETED", "Done — ready for your next message"),
    ("SESSION_RUNNING", "TASK_FAILED", "The task failed"),
    ("SESSION_RUNNING", "TASK_CANCELLED", "Cancelled — ready for your next message"),
    ("SESSION_PAUSED", "TASK_RUNNING", "Session paused"),
    ("SESSION_COMPLETED", "TASK_COMPLETED", "Session ended"),
    ("SESSION_CANCELLED", None, "Session ended"),
    ("SESSION_FAILED", "TASK_FAILED", "Session ended with an error"),
]


@pytest.mark.parametrize(("session", "task", "words"), WORDING)
def test_each_state_has_its_wording(session: str | None, task: str | None, words: str) -> None:
    assert state_text(session, task) == words


@pytest.mark.parametrize(
    ("task", "count", "near", "words"),
    [
        ("TASK_RUNNING", 0, False, "Step 1 of 40"),
        ("EXECUTING_TOOLS", 0, False, "Step 1 of 40"),
        ("EXECUTING_TOOLS", 3, False, "Step 3 of 40"),
        ("WAITING_FOR_LLM", 33, True, "Step 33 of 40 — near the limit"),
        ("TASK_COMPLETED", 4, False, "4 of 40 steps used"),
        ("TASK_CANCELLED", 0, False, ""),
        (None, 0, False, ""),
        ("IDLE", 0, False, ""),
    ],
)
def test_the_step_counter_counts_the_step_under_way(
    task: str | None, count: int, near: bool, words: str
) -> None:
    assert steps_text(task, count, 40, near_limit=near) == words
    assert steps_text(task, count, None, near_limit=near) == ""


def test_a_tool_running_in_the_first_step_never_reads_step_0_or_no_task() -> None:
    state = ConversationState()
    state.set_session("SESSION_RUNNING")
    assert "no task" not in state.status.summary.lower()
    state.expect_task("task_1", 40)  # StartTask answered; no step_started yet
    state.apply(event("tool_requested", {"toolName": "ReadFile", "toolCallId": "c1", "target": "/p/a"}))
    state.apply(
        event(
            "tool_completed",
            {"toolName": "ReadFile", "toolCallId": "c1", "status": "succeeded", "latencyMs": 1},
        )
    )
    status = state.status
    assert status.summary == "Running tools…"
    assert steps_text(status.task, status.step_count, status.max_steps, near_limit=False) == "Step 1 of 40"
