"""ConversationState: what the window shows, built from the runtime's events and from a history."""

from __future__ import annotations

from typing import Any

from desktop.conversation.banners import BannerAction
from desktop.conversation.items import AssistantMessage, Item, Notice, ToolCallRow, ToolState, UserMessage
from desktop.conversation.state import ConversationState, describe_task
from tests.desktop.conversation.events import chunk, event


class Recorder:
    def __init__(self) -> None:
        self.added: list[Item] = []
        self.changed: list[Item] = []
        self.resets = self.statuses = self.banners = 0

    def item_added(self, item: Item) -> None:
        self.added.append(item)

    def item_changed(self, item: Item) -> None:
        self.changed.append(item)

    def items_reset(self) -> None:
        self.resets += 1

    def status_changed(self) -> None:
        self.statuses += 1

    def banner_changed(self) -> None:
        self.banners += 1


def applied(*events: dict[str, Any]) -> tuple[ConversationState, Recorder]:
    state = ConversationState()
    recorder = Recorder()
    state.subscribe(recorder)
    for one in events:
        state.apply(one)
    return state, recorder


def test_text_chunks_stream_into_one_message_per_step_and_only_that_message_changes() -> None:
    state, seen = applied(
        event("task_started", {"maxSteps": 10, "approvalMode": "always"}),
        event("llm_request_started", {"model": "m", "estimatedInputTokens": 10}),
        *(chunk(piece) for piece in ["Hel", "lo, ", "world"]),
        event("llm_request_completed", {"model": "m", "inputTokens": 10, "outputTokens": 3, "latencyMs": 5}),
    )
    [reply] = state.items
    assert isinstance(reply, AssistantMessage)
    assert reply.text == "Hello, world"
    assert not reply.streaming
    assert seen.added == [reply]
    assert set(map(id, seen.changed)) == {id(reply)}
    assert state.status.task == "PROCESSING_RESPONSE"


def test_a_retried_model_call_drops_the_text_already_shown_for_the_step() -> None:
    state, _ = applied(
        event("llm_request_started", {"model": "m", "estimatedInputTokens": 1}),
        chunk("partial ans"),
        event("llm_request_started", {"model": "m", "estimatedInputTokens": 1}),
        chunk("The whole answer."),
    )
    [reply] = state.items
    assert isinstance(reply, AssistantMessage)
    assert reply.text == "The whole answer."


def test_a_tool_call_is_a_row_that_waits_for_approval_then_reports_its_outcome() -> None:
    state, _ = applied(
        event("tool_requested", {"toolName": "WriteFile", "toolCallId": "c1", "target": "/p/a.txt"}),
        event(
            "approval_requested",
            {
                "approvalId": "a1",
                "riskLevel": "medium",
                "details": {"toolName": "WriteFile"},
                "stepId": "step_1",
            },
        ),
    )
    [row] = state.items
    assert isinstance(row, ToolCallRow)
    assert row.state is ToolState.AWAITING_APPROVAL
    assert state.status.task == "WAITING_FOR_APPROVAL"
    assert describe_task(state.status.task) == "waiting for your approval"
    state.apply(event("approval_resolved", {"approvalId": "a1", "decision": "approved", "latencyMs": 3}))
    assert row.state is ToolState.RUNNING
    assert state.status.task == "EXECUTING_TOOLS"
    state.apply(
        event(
            "tool_completed",
            {
                "toolName": "WriteFile",
                "toolCallId": "c1",
                "status": "succeeded",
                "latencyMs": 42,
                "outputPreview": "ok",
            },
        )
    )
    # The tool's own time: the runtime's 42 ms include the 3 ms the call waited for approval.
    assert (row.state, row.duration_ms, row.output, row.target) == (ToolState.SUCCEEDED, 39, "ok", "/p/a.txt")
    assert row.approval_wait_ms == 3


def test_a_denied_call_shows_the_reason_and_a_task_that_wrote_files_offers_their_review() -> None:
    state, _ = applied(
        event("task_started", {"maxSteps": 10, "approvalMode": "always"}),
        event("tool_requested", {"toolName": "DeleteFile", "toolCallId": "d1", "target": "/p/x"}),
        event(
            "tool_completed",
            {
                "toolName": "DeleteFile",
                "toolCallId": "d1",
                "status": "denied",
                "latencyMs": 1,
                "error": {"code": "APPROVAL_DENIED", "message": "Not approved: no"},
            },
        ),
        event("tool_requested", {"toolName": "WriteFile", "toolCallId": "w1", "target": "/p/y"}),
        event(
            "tool_completed",
            {"toolName": "WriteFile", "toolCallId": "w1", "status": "succeeded", "latencyMs": 1},
        ),
        event("task_completed", {"stepCount": 2}, step=None),
    )
    denied, _written, notice = state.items
    assert isinstance(denied, ToolCallRow)
    assert denied.state is ToolState.DENIED
    assert denied.output == "Not approved: no"
    assert isinstance(notice, Notice)
    assert notice.action == "review_changes"
    assert notice.text.startswith("1 file changed")
    assert state.status.task == "TASK_COMPLETED"
    assert not state.busy


def test_the_step_counter_warns_at_80_percent_and_tokens_count_against_the_budget() -> None:
    state, _ = applied(
        event("task_started", {"maxSteps": 10, "approvalMode": "always"}),
        event("step_started", {"stepId": "s", "stepCount": 7}),
    )
    assert not state.status.near_step_limit
    state.apply(event("step_limit_approaching", {"stepCount": 8, "maxSteps": 10}))
    assert state.status.near_step_limit
    state.apply(
        event(
            "llm_request_completed",
            {
                "model": "m",
                "inputTokens": 100,
                "outputTokens": 20,
                "latencyMs": 1,
                "sessionTokensUsed": 1200,
                "maxSessionTokens": 5000,
            },
        )
    )
    assert (state.status.tokens_used, state.status.token_limit) == (1200, 5000)


def test_failures_and_pauses_become_banners_that_say_what_to_do() -> None:
    state, seen = applied(
        event(
            "task_failed",
            {
                "stepCount": 3,
                "reason": "budget_exceeded",
                "error": {"code": "LLM_BUDGET_EXCEEDED", "message": "x"},
            },
            step=None,
        )
    )
    assert state.banner is not None
    assert state.banner.action is BannerAction.NEW_SESSION
    assert "token budget" in state.banner.text
    state.apply(
        event(
            "task_failed",
            {
                "stepCount": 1,
                "reason": "guardrail_blocked",
                "error": {"code": "LLM_GUARDRAIL_BLOCKED", "message": "Blocked: PII"},
            },
            step=None,
        )
    )
    assert "Blocked: PII" in state.banner.text
    assert "Rephrase" in state.banner.text
    state.apply(
        event(
            "task_failed",
            {
                "stepCount": 1,
                "reason": "guardrail_blocked",
                "error": {
                    "code": "LLM_GUARDRAIL_BLOCKED",
                    "message": "The LLM gateway blocked the request: Violated guardrail policy",
                },
            },
            step=None,
        )
    )
    assert state.banner.text == (
        "The LLM gateway's guardrail blocked the request: Violated guardrail policy."
        " Rephrase the request and send it again."
    )
    state.apply(
        event(
            "session_paused",
            {"reason": "llm_unreachable", "error": {"code": "RATE_LIMITED", "message": "gateway down"}},
            step=None,
        )
    )
    assert state.banner.action is BannerAction.RESUME
    assert state.status.session == "SESSION_PAUSED"
    assert "gateway down" in state.banner.text
    state.apply(event("session_resumed", {}, step=None))
    assert state.banner is None
    assert state.status.session == "SESSION_RUNNING"
    assert seen.banners == 5


def test_a_cancelled_task_leaves_a_notice_and_an_unanswered_approval_row_is_closed() -> None:
    state, _ = applied(
        event("tool_requested", {"toolName": "RunCommand", "toolCallId": "r1", "target": "make"}),
        event("approval_requested", {"approvalId": "a1", "details": {"toolName": "RunCommand"}}),
        event("task_cancelled", {"stepCount": 1, "reason": "cancelled"}, step=None),
    )
    row, notice = state.items
    assert isinstance(row, ToolCallRow)
    assert row.state is ToolState.DENIED
    assert isinstance(notice, Notice)
    assert notice.text == "Task cancelled."
    assert state.status.task == "TASK_CANCELLED"


def test_a_history_becomes_prompts_answers_and_finished_tool_rows() -> None:
    messages = [
        {"messageId": "1", "sessionId": "s", "role": "user", "content": "Read a", "timestamp": "t"},
        {
            "messageId": "2",
            "sessionId": "s",
            "role": "assistant",
            "content": "Reading.",
            "timestamp": "t",
            "toolCalls": [{"toolCallId": "c1", "toolName": "ReadFile", "arguments": {"path": "/p/a"}}],
        },
        {
            "messageId": "3",
            "sessionId": "s",
            "role": "tool",
            "content": "contents of a",
            "timestamp": "t",
            "toolCallId": "c1",
            "toolName": "ReadFile",
            "toolStatus": "succeeded",
        },
        {"messageId": "4", "sessionId": "s", "role": "assistant", "content": "It says hi.", "timestamp": "t"},
    ]
    state, seen = applied()
    state.load_history(messages)
    user, reading, row, answer = state.items
    assert isinstance(user, UserMessage)
    assert user.text == "Read a"
    assert isinstance(reading, AssistantMessage)
    assert reading.text == "Reading."
    assert isinstance(row, ToolCallRow)
    assert (row.tool_name, row.target, row.state, row.output) == (
        "ReadFile",
        "/p/a",
        ToolState.SUCCEEDED,
        "contents of a",
    )
    assert isinstance(answer, AssistantMessage)
    assert answer.text == "It says hi."
    assert seen.resets == 1


def test_unknown_events_and_malformed_payloads_are_ignored() -> None:
    state, _ = applied(
        {"eventType": "something_new", "payload": {}},
        {"eventType": "text_chunk", "payload": "not an object"},
        {"eventType": "text_chunk", "payload": {"text": 5}},
    )
    assert state.items == []


def test_the_end_of_a_call_requested_before_the_window_saw_the_session_still_gets_a_row() -> None:
    state, _ = applied(
        event(
            "tool_completed",
            {
                "toolName": "RunCommand",
                "toolCallId": "r1",
                "status": "failed",
                "latencyMs": 0,
                "error": {"code": "TOOL_EXECUTION_FAILED", "message": "Interrupted — result unknown."},
            },
        )
    )
    [row] = state.items
    assert isinstance(row, ToolCallRow)
    assert (row.tool_name, row.state, row.output) == (
        "RunCommand",
        ToolState.FAILED,
        "Interrupted — result unknown.",
    )


def test_an_answer_read_after_newer_events_does_not_undo_them() -> None:
    state, _ = applied(event("task_started", {"maxSteps": 10, "approvalMode": "always"}))
    asked = state.events_seen
    state.apply(event("task_completed", {"stepCount": 1}, step=None))
    # The ResumeSession answer said "running" before the task ended; it arrives after the end.
    state.set_session(
        "SESSION_RUNNING",
        {"taskId": "task_1", "status": "TASK_RUNNING", "stepCount": 0, "maxSteps": 10},
        asked_after=asked,
    )
    assert state.status.task == "TASK_COMPLETED"
    state.set_session(
        "SESSION_RUNNING",
        {"taskId": "task_2", "status": "IDLE", "stepCount": 0, "maxSteps": 10},
        asked_after=state.events_seen,
    )
    assert state.status.task == "IDLE"


def test_concurrent_approvals_of_one_step_land_on_their_own_tool_rows() -> None:
    """A step's calls are asked about concurrently and in any order: the request names its call."""
    state, _ = applied(
        event("tool_requested", {"toolName": "WriteFile", "toolCallId": "w1", "target": "calc.py"}),
        event("tool_requested", {"toolName": "WriteFile", "toolCallId": "w2", "target": "test_calc.py"}),
        event(
            "approval_requested",
            {"approvalId": "a1", "details": {"toolName": "WriteFile", "toolCallId": "w1"}},
        ),
        event(
            "approval_requested",
            {"approvalId": "a2", "details": {"toolName": "WriteFile", "toolCallId": "w2"}},
        ),
    )
    first, second = state.items
    assert isinstance(first, ToolCallRow)
    assert isinstance(second, ToolCallRow)
    assert (first.tool_call_id, first.approval_id) == ("w1", "a1")
    assert (second.tool_call_id, second.approval_id) == ("w2", "a2")
