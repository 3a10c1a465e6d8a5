"""The runaway guard: a model repeating the same call is stopped, a model making progress is not."""

from __future__ import annotations

from typing import Any

from agent_runtime.agent_host.loop import RunawayGuard
from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolCall, ToolError, ToolResult


def call(command: str, **extra: Any) -> ToolCall:
    return ToolCall(tool_call_id="c", tool_name="RunCommand", arguments={"command": command, **extra})


def result(status: ToolStatus) -> ToolResult:
    error = (
        None
        if status is ToolStatus.SUCCEEDED
        else ToolError(code=ErrorCode.TOOL_EXECUTION_FAILED, message="x")
    )
    return ToolResult(
        tool_name="RunCommand", session_id="s", task_id="t", step_id="p", status=status, error=error
    )


def test_three_identical_failing_calls_in_a_row_stop_the_task() -> None:
    guard = RunawayGuard()
    assert guard.observe([call("make")], [result(ToolStatus.FAILED)]) is None
    assert guard.observe([call("make")], [result(ToolStatus.DENIED)]) is None
    reason = guard.observe([call("make")], [result(ToolStatus.FAILED)])
    assert reason is not None
    assert "RunCommand" in reason
    assert "3 times" in reason


def test_different_arguments_or_a_success_reset_the_count() -> None:
    guard = RunawayGuard()
    for command in ("make", "make", "make test", "make", "make"):
        assert guard.observe([call(command)], [result(ToolStatus.FAILED)]) is None
    guard.reset()
    guard.observe([call("make")], [result(ToolStatus.FAILED)])
    guard.observe([call("make")], [result(ToolStatus.FAILED)])
    assert guard.observe([call("make")], [result(ToolStatus.SUCCEEDED)]) is None
    assert guard.observe([call("make")], [result(ToolStatus.FAILED)]) is None


def test_five_identical_calls_stop_the_task_even_when_they_succeed() -> None:
    guard = RunawayGuard()
    outcomes = [guard.observe([call("ls")], [result(ToolStatus.SUCCEEDED)]) for _ in range(5)]
    assert outcomes[:4] == [None] * 4
    assert outcomes[4] is not None
    assert "5 times" in outcomes[4]


def test_argument_order_does_not_hide_a_repeat() -> None:
    guard = RunawayGuard(failing_limit=2)
    guard.observe([call("ls", cwd="/a", timeout=5)], [result(ToolStatus.FAILED)])
    swapped = ToolCall(
        tool_call_id="d", tool_name="RunCommand", arguments={"timeout": 5, "cwd": "/a", "command": "ls"}
    )
    assert guard.observe([swapped], [result(ToolStatus.FAILED)]) is not None
