"""The ordered thread (seed 000 §5.1, §5.5): ids, roles, task/step ids, timestamps, order rules,
serialisation to the checkpoint and session_history, and restoring from both (seed 004)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent_runtime.agent_host.thread import ConversationThread, ThreadError, ThreadOrderError, TokenBudget
from contracts.checkpoint import Checkpoint
from contracts.enums import Role, SessionStatus, ToolStatus
from contracts.errors import ErrorCode
from contracts.messages import SessionHistory
from contracts.validation import validate_json_value
from tests.agent_runtime.agent_host.thread.support import (
    START,
    Clock,
    WordTokenizer,
    call,
    ids,
    new_thread,
    result,
)


def one_step(thread: ConversationThread) -> None:
    thread.add_user_message("read the readme", task_id="task_1")
    thread.add_assistant_message(
        "reading",
        task_id="task_1",
        step_id="step_1",
        tool_calls=[call("c1", path="/p/README.md"), call("c2", path="/p/b")],
    )
    thread.add_tool_result(result("c2", output="bee"))
    thread.add_tool_result(result("c1", output="the readme"))
    thread.add_assistant_message("It says hello.", task_id="task_1", step_id="step_2")


def test_messages_carry_ids_roles_task_and_step_ids_timestamps_and_token_counts() -> None:
    thread = new_thread()
    one_step(thread)
    roles = [m.role for m in thread.messages]
    assert roles == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.TOOL, Role.ASSISTANT]
    assert [m.message_id for m in thread.messages] == [f"msg_{i:03d}" for i in range(1, 6)]
    assert [m.timestamp for m in thread.messages] == [START + timedelta(seconds=i) for i in range(1, 6)]
    tool = thread.messages[2]
    assert (tool.tool_call_id, tool.tool_name, tool.tool_status, tool.task_id, tool.step_id) == (
        "c2", "ReadFile", ToolStatus.SUCCEEDED, "task_1", "step_1",
    )  # fmt: skip
    assert all(m.session_id == "sess_1" and m.token_count for m in thread.messages)
    assert thread.thread_token_count == sum(m.token_count or 0 for m in thread.messages)


def test_a_failed_or_denied_tool_result_tells_the_model_why() -> None:
    thread = new_thread()
    thread.add_user_message("go", task_id="task_1")
    thread.add_assistant_message("", task_id="task_1", step_id="step_1", tool_calls=[call("c1"), call("c2")])
    failed = thread.add_tool_result(result("c1", output="partial", status=ToolStatus.FAILED))
    denied = thread.add_tool_result(result("c2", output="", status=ToolStatus.DENIED))
    assert failed.content == "Failed (TOOL_EXECUTION_FAILED): it broke\npartial"
    assert denied.content.startswith("Denied:")


def test_a_tool_result_that_answers_no_open_call_is_refused_and_the_thread_is_unchanged() -> None:
    thread = new_thread()
    thread.add_user_message("go", task_id="task_1")
    with pytest.raises(ThreadOrderError) as caught:
        thread.add_tool_result(result("c9"))
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert len(thread) == 1


def test_a_tool_result_for_another_tool_than_the_call_is_refused() -> None:
    thread = new_thread()
    thread.add_assistant_message("", task_id="t", step_id="s", tool_calls=[call("c1", "ReadFile")])
    with pytest.raises(ThreadOrderError):
        thread.add_tool_result(result("c1", tool="DeleteFile"))


def test_nothing_else_is_added_while_tool_calls_wait_for_their_results() -> None:
    thread = new_thread()
    thread.add_assistant_message("", task_id="t", step_id="s", tool_calls=[call("c1"), call("c2")])
    thread.add_tool_result(result("c1"))
    with pytest.raises(ThreadOrderError) as caught:
        thread.add_user_message("next", task_id="t2")
    assert caught.value.shape.details["pendingToolCallIds"] == ["c2"]
    assert thread.pending_tool_calls == {"c2": "ReadFile"}


def test_open_calls_of_an_interrupted_step_can_be_answered_with_failures() -> None:
    thread = new_thread()
    thread.add_assistant_message(
        "", task_id="t", step_id="s", tool_calls=[call("c1"), call("c2", "RunCommand")]
    )
    added = thread.fail_pending_tool_calls(
        "the runtime restarted before the tool reported", task_id="t", step_id="s"
    )
    assert [(m.tool_call_id, m.tool_name, m.tool_status) for m in added] == [
        ("c1", "ReadFile", ToolStatus.FAILED),
        ("c2", "RunCommand", ToolStatus.FAILED),
    ]
    thread.add_user_message("carry on", task_id="t2")


def test_a_reused_tool_call_id_is_refused() -> None:
    thread = new_thread()
    thread.add_assistant_message("", task_id="t", step_id="s", tool_calls=[call("c1")])
    thread.add_tool_result(result("c1"))
    with pytest.raises(ThreadOrderError):
        thread.add_assistant_message("", task_id="t", step_id="s2", tool_calls=[call("c1")])


def test_a_duplicate_message_id_from_the_id_factory_is_refused() -> None:
    thread = ConversationThread("s", WordTokenizer(), Clock(), lambda: "same", budget=TokenBudget(100))
    thread.add_user_message("one", task_id="t")
    with pytest.raises(ThreadOrderError):
        thread.add_user_message("two", task_id="t")
    assert len(thread) == 1


def test_bad_values_are_an_invalid_request_naming_the_field() -> None:
    thread = new_thread()
    with pytest.raises(ThreadError) as caught:
        thread.add_user_message("hi", task_id="")
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.shape.details["field"] == "taskId"


def test_the_budget_is_prechecked_and_updated_through_the_thread() -> None:
    thread = new_thread(limit=100)
    thread.precheck(100)
    thread.record_usage(90, 20)
    assert thread.session_tokens_used == 110
    with pytest.raises(ThreadError) as caught:
        thread.precheck(0)
    assert caught.value.code is ErrorCode.LLM_BUDGET_EXCEEDED


def test_the_thread_survives_a_checkpoint_written_as_json_and_read_back() -> None:
    thread = new_thread()
    one_step(thread)
    thread.record_usage(1_200, 300)
    checkpoint = Checkpoint(
        checkpoint_version="1.0",
        session_id="sess_1",
        workspace_id="ws_1",
        tenant_id="tenant_1",
        user_id="user_1",
        session_status=SessionStatus.SESSION_RUNNING,
        thread=thread.to_checkpoint_thread(),
        session_tokens_used=thread.session_tokens_used,
        policy_bundle_version="1",
        checkpointed_at=START,
    )
    restored_checkpoint = Checkpoint.model_validate_json(checkpoint.model_dump_json(by_alias=True))
    restored = ConversationThread.from_checkpoint(
        restored_checkpoint, tokenizer=WordTokenizer(), max_session_tokens=10_000, id_factory=ids("new")
    )
    assert restored.messages == thread.messages
    assert restored.session_tokens_used == 1_500
    assert restored.thread_token_count == thread.thread_token_count
    restored.add_user_message("and now?", task_id="task_2")


def test_a_past_conversation_continues_in_a_new_session_from_its_history() -> None:
    thread = new_thread()
    one_step(thread)
    history = thread.to_session_history(workspace_id="ws_1", snapshot_after_task_id="task_1")
    wire = history.to_wire()
    continued = ConversationThread.from_session_history(
        validate_json_value(SessionHistory, wire),
        session_id="sess_2",
        tokenizer=WordTokenizer(),
        budget=TokenBudget(10_000),
        id_factory=ids("new"),
    )
    assert [m.content for m in continued.messages] == [m.content for m in thread.messages]
    assert continued.session_tokens_used == 0
    new = continued.add_user_message("continue", task_id="task_9")
    assert new.session_id == "sess_2"
    assert continued.messages[0].session_id == "sess_1"


def test_a_conversation_continued_twice_keeps_every_session_s_messages() -> None:
    first = new_thread()
    one_step(first)
    second = ConversationThread.from_session_history(
        first.to_session_history(workspace_id="ws_1", snapshot_after_task_id="task_1"),
        session_id="sess_2",
        tokenizer=WordTokenizer(),
        budget=TokenBudget(10_000),
        id_factory=ids("second"),
    )
    second.add_user_message("and then?", task_id="task_2")
    second.add_assistant_message("Then this.", task_id="task_2", step_id="step_1")
    history = second.to_session_history(workspace_id="ws_2", snapshot_after_task_id="task_2")
    third = ConversationThread.from_session_history(
        validate_json_value(SessionHistory, history.to_wire()),
        session_id="sess_3",
        tokenizer=WordTokenizer(),
        budget=TokenBudget(10_000),
        id_factory=ids("third"),
    )
    assert [m.session_id for m in third.messages] == ["sess_1"] * len(first.messages) + ["sess_2"] * 2
    with pytest.raises(ThreadOrderError, match="out of place"):
        ConversationThread.from_session_history(
            history, session_id="sess_1", tokenizer=WordTokenizer(), budget=TokenBudget(10_000)
        )


def _history_messages() -> list[dict[str, object]]:
    thread = new_thread()
    one_step(thread)
    return [m.to_wire() for m in thread.messages]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda ms: ms.insert(0, ms.pop(2)),  # a tool result before its call
        lambda ms: ms.pop(1),  # the assistant call removed
        lambda ms: ms.insert(3, ms.pop(4)),  # a message between a call and its last result
        lambda ms: ms.append(dict(ms[2], messageId="msg_x")),  # a call answered twice
        lambda ms: ms.append(dict(ms[0])),  # a duplicate message id
        lambda ms: ms.append(dict(ms[0], messageId="msg_y", sessionId="sess_other")),  # another session
    ],
)
def test_a_history_in_an_impossible_order_is_refused_with_a_clear_error(mutate: object) -> None:
    messages = _history_messages()
    mutate(messages)  # type: ignore[operator]
    history = validate_json_value(
        SessionHistory,
        {
            "workspaceId": "ws",
            "sessionId": "sess_1",
            "snapshotAfterTaskId": "task_1",
            "snapshotAt": START.isoformat(),
            "messages": messages,
        },
    )
    with pytest.raises(ThreadOrderError) as caught:
        ConversationThread.from_session_history(
            history, session_id="sess_2", tokenizer=WordTokenizer(), budget=TokenBudget(10)
        )
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert "index" in caught.value.shape.details


def test_a_history_ending_with_unanswered_calls_restores_them_as_pending() -> None:
    messages = _history_messages()[:2]
    history = validate_json_value(
        SessionHistory,
        {
            "workspaceId": "ws",
            "sessionId": "sess_1",
            "snapshotAfterTaskId": "task_1",
            "snapshotAt": START.isoformat(),
            "messages": messages,
        },
    )
    thread = ConversationThread.from_session_history(
        history, session_id="sess_2", tokenizer=WordTokenizer(), budget=TokenBudget(10)
    )
    assert set(thread.pending_tool_calls) == {"c1", "c2"}


def test_restored_token_counts_are_recomputed_not_trusted() -> None:
    messages = _history_messages()
    messages[0]["tokenCount"] = 0
    history = validate_json_value(
        SessionHistory,
        {
            "workspaceId": "ws",
            "sessionId": "sess_1",
            "snapshotAfterTaskId": "task_1",
            "snapshotAt": START.isoformat(),
            "messages": messages,
        },
    )
    thread = ConversationThread.from_session_history(
        history, session_id="sess_2", tokenizer=WordTokenizer(), budget=TokenBudget(10)
    )
    assert thread.messages[0].token_count == len(["read", "the", "readme"]) + 4
