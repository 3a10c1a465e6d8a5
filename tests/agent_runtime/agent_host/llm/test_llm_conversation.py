"""The thread reshaped into valid turns: merging, pairing and repairs (no network)."""

from __future__ import annotations

from agent_runtime.agent_host.llm.conversation import (
    MISSING_RESULT_TEXT,
    AssistantTurn,
    UserTurn,
    build_turns,
)
from contracts.enums import ToolStatus

from .support import assistant, call, result, system, user


def test_consecutive_messages_of_one_side_merge_so_roles_alternate() -> None:
    turns = build_turns([user("a"), user("b"), assistant("c"), assistant("d", call("x")), result("x", "r")])
    assert [type(turn) for turn in turns] == [UserTurn, AssistantTurn, UserTurn]
    assert turns[0] == UserTurn(texts=["a", "b"])
    assert isinstance(turns[1], AssistantTurn)
    assert turns[1].texts == ["c", "d"]
    assert [c.tool_call_id for c in turns[1].tool_calls] == ["x"]


def test_results_are_put_in_call_order_whatever_order_they_arrived_in() -> None:
    turns = build_turns(
        [user("go"), assistant("", call("1"), call("2")), result("2", "two"), result("1", "one")]
    )
    last = turns[-1]
    assert isinstance(last, UserTurn)
    assert [(r.tool_call_id, r.content) for r in last.results] == [("1", "one"), ("2", "two")]


def test_a_duplicate_result_for_one_call_is_kept_as_text_not_sent_twice() -> None:
    turns = build_turns([user("go"), assistant("", call("1")), result("1", "first"), result("1", "again")])
    last = turns[-1]
    assert isinstance(last, UserTurn)
    assert [r.content for r in last.results] == ["first"]
    assert last.texts == ["[Result of ReadFile call 1, succeeded]\nagain"]


def test_calls_left_without_results_at_the_end_get_error_results() -> None:
    turns = build_turns([user("go"), assistant("", call("1", "RunCommand"))])
    last = turns[-1]
    assert isinstance(last, UserTurn)
    assert [(r.tool_call_id, r.content, r.is_error) for r in last.results] == [
        ("1", MISSING_RESULT_TEXT, True)
    ]


def test_denied_and_failed_results_are_errors_and_an_unset_status_is_success() -> None:
    turns = build_turns(
        [
            user("go"),
            assistant("", call("1"), call("2"), call("3")),
            result("1", "no", ToolStatus.DENIED),
            result("2", "broke", ToolStatus.FAILED),
            result("3", "fine"),
        ]
    )
    last = turns[-1]
    assert isinstance(last, UserTurn)
    assert [r.is_error for r in last.results] == [True, True, False]


def test_system_notes_and_whitespace_only_messages() -> None:
    turns = build_turns([system("note"), user("  \n"), assistant("   ")])
    assert turns == [UserTurn(texts=["[System note] note"])]


def test_an_empty_thread_has_no_turns() -> None:
    assert build_turns([]) == []
