"""Errors of the message thread, each in the seed's shape (seed 001 §6.5).

::

    ThreadError                  (CoworkError)
    ├── ThreadOrderError         INVALID_REQUEST — a message out of place: a tool result with no call to
    │                            answer, a new turn while tool calls wait for results, a bad restore
    ├── BudgetExceeded           LLM_BUDGET_EXCEEDED — the session's token budget would be passed
    │   └── ContextWindowExceeded  the newest messages alone do not fit the model's input window
    └── TokenizerUnavailable     INTERNAL_ERROR — the offline tokenizer or its data file is missing
"""

from __future__ import annotations

from typing import Any

from contracts.errors import CoworkError, ErrorCode

__all__ = [
    "BudgetExceeded",
    "ContextWindowExceeded",
    "ThreadError",
    "ThreadOrderError",
    "TokenizerUnavailable",
]


class ThreadError(CoworkError):
    """Root of every error the thread package raises."""


class ThreadOrderError(ThreadError):
    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message, details=details)


class BudgetExceeded(ThreadError):
    """The next LLM call would take the session past ``llmPolicy.maxSessionTokens`` (seed 000 §6.5)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(ErrorCode.LLM_BUDGET_EXCEEDED, message, details=details)


class ContextWindowExceeded(BudgetExceeded):
    """System prompt, tool definitions and the newest message (with its tool results) exceed
    ``llmPolicy.maxInputTokens``: no truncation can make the request fit (seed 000 §5.4)."""


class TokenizerUnavailable(ThreadError):
    def __init__(self, message: str, *, encoding: str, cause: str) -> None:
        super().__init__(ErrorCode.INTERNAL_ERROR, message, details={"encoding": encoding, "cause": cause})
