"""The session's token budget (seed 000 §6.5): pre-check, post-update, mid-session overage."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.thread import BudgetExceeded, TokenBudget
from contracts.errors import ErrorCode


def test_a_call_that_fits_the_budget_passes_the_precheck() -> None:
    budget = TokenBudget(1_000, used=400)
    budget.precheck(600)
    assert budget.allows(600)
    assert budget.remaining == 600


def test_a_call_that_would_pass_the_budget_fails_with_llm_budget_exceeded() -> None:
    budget = TokenBudget(1_000, used=400)
    with pytest.raises(BudgetExceeded) as caught:
        budget.precheck(601)
    assert caught.value.code is ErrorCode.LLM_BUDGET_EXCEEDED
    assert caught.value.shape.details == {
        "sessionTokensUsed": 400,
        "estimatedTokens": 601,
        "maxSessionTokens": 1_000,
    }


def test_actual_usage_is_added_after_each_call() -> None:
    budget = TokenBudget(1_000)
    budget.record_usage(300, 50)
    budget.record_usage(100, 25)
    assert budget.used == 475


def test_after_an_overage_the_current_step_is_kept_but_the_next_precheck_fails_even_at_zero() -> None:
    budget = TokenBudget(1_000, used=900)
    budget.precheck(50)  # the estimate was too low …
    budget.record_usage(120, 80)  # … and the response took usage past the limit: the step finishes
    assert budget.exhausted
    with pytest.raises(BudgetExceeded):
        budget.precheck(0)


def test_usage_exactly_at_the_limit_still_admits_a_zero_estimate_only() -> None:
    budget = TokenBudget(1_000, used=1_000)
    budget.precheck(0)
    with pytest.raises(BudgetExceeded):
        budget.precheck(1)


@pytest.mark.parametrize("bad", [-1, True, 1.5, "10"])
def test_counts_must_be_non_negative_integers(bad: object) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        TokenBudget(1_000).record_usage(bad, 0)  # type: ignore[arg-type]


def test_a_refreshed_limit_keeps_the_usage() -> None:
    budget = TokenBudget(1_000, used=700).with_limit(2_000)
    assert (budget.used, budget.limit) == (700, 2_000)
