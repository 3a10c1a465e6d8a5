"""The session's token budget (seed 000 §5.3, §6.5).

* Before each LLM call: ``sessionTokensUsed + estimate ≤ llmPolicy.maxSessionTokens``, else
  ``LLM_BUDGET_EXCEEDED`` and the call is not made.
* After each call: ``sessionTokensUsed += inputTokens + outputTokens`` as the gateway reported them.
* Mid-session overage: a response that takes usage past the budget is kept (the current step
  finishes, its tools run), but every later pre-check fails — even one estimating zero tokens.
"""

from __future__ import annotations

from typing import Any

from agent_runtime.agent_host.thread.errors import BudgetExceeded

__all__ = ["TokenBudget"]


def _count(name: str, value: Any) -> int:
    # bool is an int in Python; a True here is a bug in the caller, not one token.
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
    return value


class TokenBudget:
    """Tokens used in the session against ``llmPolicy.maxSessionTokens``."""

    __slots__ = ("_limit", "_used")

    def __init__(self, max_session_tokens: int, *, used: int = 0) -> None:
        self._limit = _count("max_session_tokens", max_session_tokens)
        self._used = _count("used", used)

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return max(0, self._limit - self._used)

    @property
    def exhausted(self) -> bool:
        """Usage has gone past the budget: no further LLM call may start in this session."""
        return self._used > self._limit

    def allows(self, estimate: int) -> bool:
        """Whether a call estimated at ``estimate`` tokens may start."""
        estimate = _count("estimate", estimate)
        return not self.exhausted and self._used + estimate <= self._limit

    def precheck(self, estimate: int) -> None:
        """Raise :class:`BudgetExceeded` (``LLM_BUDGET_EXCEEDED``) unless the call may start."""
        if self.allows(estimate):
            return
        if self.exhausted:
            message = f"The session's token budget is used up: {self._used:,} tokens used of {self._limit:,}."
        else:
            message = (
                f"The session's token budget would be exceeded: {self._used:,} tokens used, about"
                f" {estimate:,} more needed, {self._limit:,} allowed."
            )
        raise BudgetExceeded(
            message, sessionTokensUsed=self._used, estimatedTokens=estimate, maxSessionTokens=self._limit
        )

    def record_usage(self, input_tokens: int, output_tokens: int) -> None:
        """Add the gateway's actual figures for one call."""
        self._used += _count("input_tokens", input_tokens) + _count("output_tokens", output_tokens)

    def with_limit(self, max_session_tokens: int) -> TokenBudget:
        """The same usage against a new limit, e.g. from a policy bundle refreshed on resume."""
        return TokenBudget(max_session_tokens, used=self._used)

    def __repr__(self) -> str:
        return f"TokenBudget(used={self._used}, limit={self._limit})"
