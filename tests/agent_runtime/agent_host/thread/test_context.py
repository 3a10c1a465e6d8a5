"""The context window (seed 000 §5.4): system prompt and tools always in, a recency window kept whole,
the oldest of the middle dropped behind a marker, tool calls never separated from their results.

The word tokenizer makes counts easy: a message costs its words plus 4 tokens of overhead."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.thread import ContextWindowExceeded, ConversationThread, truncation_marker_text
from contracts.enums import Role
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.thread.support import call, new_thread, result

MARKER = "[Earlier conversation truncated — {n} messages removed]"


def long_task(steps: int, words: int = 20) -> ConversationThread:
    """A first user prompt, then ``steps`` steps of assistant call + result, then a second task."""
    thread = new_thread()
    thread.add_user_message("first task " + "w " * words, task_id="task_1")
    for i in range(steps):
        thread.add_assistant_message(
            f"step {i} " + "a " * words, task_id="task_1", step_id=f"s{i}", tool_calls=[call(f"c{i}")]
        )
        thread.add_tool_result(result(f"c{i}", output=f"out {i} " + "o " * words))
    thread.add_user_message("second task " + "w " * words, task_id="task_2")
    thread.add_assistant_message(
        "working " + "a " * words, task_id="task_2", step_id="t2s1", tool_calls=[call("d1")]
    )
    thread.add_tool_result(result("d1", output="out " + "o " * words))
    return thread


def test_a_thread_that_fits_is_sent_whole_without_a_marker() -> None:
    thread = long_task(2)
    selection = thread.select_context(10_000, system_tokens=100, tools_tokens=100)
    assert selection.messages == thread.messages
    assert not selection.truncated
    assert selection.input_tokens == 200 + thread.thread_token_count


def test_the_oldest_middle_messages_are_dropped_behind_a_marker_and_the_rest_fits() -> None:
    thread = long_task(10)
    budget = 600
    selection = thread.select_context(budget, system_tokens=50, tools_tokens=50, recency_window=4)
    assert selection.truncated
    assert selection.input_tokens <= budget
    sent = selection.messages
    # The session's first prompt is kept at the head; then the marker where messages were cut.
    assert sent[0] == thread.messages[0]
    assert sent[1].role is Role.SYSTEM
    assert sent[1].content == truncation_marker_text(selection.dropped_count)
    # Everything after the marker is the newest, contiguous part of the thread.
    tail = thread.messages[-(len(sent) - 2) :]
    assert sent[2:] == tail
    assert selection.history_tokens == sum(m.token_count or 0 for m in sent)


def test_the_current_tasks_prompt_is_kept_even_when_the_middle_before_it_is_dropped() -> None:
    thread = new_thread()
    thread.add_user_message("first task", task_id="task_1")
    thread.add_assistant_message("old " + "x " * 200, task_id="task_1", step_id="s0")
    thread.add_user_message("second task", task_id="task_2")
    for i in range(6):
        thread.add_assistant_message("a " * 30, task_id="task_2", step_id=f"s{i}", tool_calls=[call(f"c{i}")])
        thread.add_tool_result(result(f"c{i}", output="o " * 30))
    selection = thread.select_context(320, system_tokens=10, tools_tokens=10, recency_window=4)
    contents = [m.content for m in selection.messages]
    assert "first task" in contents
    assert "second task" in contents
    assert contents.count(MARKER.format(n=1).replace("messages", "message")) == 1


def test_a_tool_call_is_never_sent_without_its_results_nor_results_without_their_call() -> None:
    thread = new_thread()
    thread.add_user_message("go", task_id="t")
    for i in range(8):
        thread.add_assistant_message(
            "", task_id="t", step_id=f"s{i}", tool_calls=[call(f"c{i}a"), call(f"c{i}b")]
        )
        thread.add_tool_result(result(f"c{i}a", output="o " * (10 + i * 7)))
        thread.add_tool_result(result(f"c{i}b", output="p " * (3 + i * 5)))
    for budget in range(60, 900, 7):
        try:
            selection = thread.select_context(budget, system_tokens=5, tools_tokens=5, recency_window=3)
        except ContextWindowExceeded:
            continue
        open_calls: set[str] = set()
        for message in selection.messages:
            if message.role is Role.TOOL:
                assert message.tool_call_id in open_calls, budget
                open_calls.discard(message.tool_call_id)
            else:
                assert not open_calls, budget
                open_calls = {c.tool_call_id for c in message.tool_calls or ()}
        assert not open_calls
        assert selection.input_tokens <= budget


def test_the_recency_window_is_widened_to_keep_a_call_with_its_results() -> None:
    thread = long_task(6)
    selection = thread.select_context(300, system_tokens=10, tools_tokens=10, recency_window=1)
    assert selection.truncated
    # The newest message is a tool result: its assistant call comes along.
    assert selection.messages[-2].tool_calls
    assert selection.recency_kept >= 2


def test_a_recency_window_that_does_not_fit_gives_up_its_oldest_units_first() -> None:
    thread = long_task(6)
    selection = thread.select_context(150, system_tokens=10, tools_tokens=10, recency_window=12)
    assert selection.recency_kept < 12
    assert selection.messages[-1] == thread.messages[-1]
    assert selection.input_tokens <= 150


def test_when_even_the_newest_message_does_not_fit_the_error_is_llm_budget_exceeded() -> None:
    thread = long_task(2, words=500)
    with pytest.raises(ContextWindowExceeded) as caught:
        thread.select_context(300, system_tokens=100, tools_tokens=100)
    assert caught.value.code is ErrorCode.LLM_BUDGET_EXCEEDED
    assert caught.value.shape.details["maxInputTokens"] == 300


def test_system_prompt_and_tools_that_alone_exceed_the_window_are_reported() -> None:
    thread = new_thread()
    with pytest.raises(ContextWindowExceeded):
        thread.select_context(100, system_tokens=80, tools_tokens=80)


def test_selecting_never_changes_the_thread() -> None:
    thread = long_task(10)
    before = thread.messages
    thread.select_context(300, system_tokens=10, tools_tokens=10)
    assert thread.messages == before
