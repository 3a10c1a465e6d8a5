"""ServerHealth: unavailable after repeated failures, one trial call per backoff period."""

from __future__ import annotations

import pytest

from agent_runtime.tool_runtime.mcp.availability import ServerHealth


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failures_in_a_row_mark_the_server_unavailable_until_the_backoff_passes() -> None:
    clock = Clock()
    health = ServerHealth(failures_to_mark=3, backoff_s=30, clock=clock)
    for attempt in range(2):
        assert health.may_try()
        health.failed(f"refused {attempt}")
        assert health.available
    health.failed("refused 2")
    assert not health.available
    assert health.last_error == "refused 2"
    assert not health.may_try()
    assert health.seconds_until_retry() == pytest.approx(30)
    clock.now += 29.9
    assert not health.may_try()
    clock.now += 0.2
    assert health.may_try(), "the trial call after the backoff"
    assert not health.may_try(), "only one trial per period"
    health.failed("still down")
    assert not health.may_try()
    clock.now += 30
    assert health.may_try()
    health.succeeded()
    assert health.available
    assert health.last_error is None
    assert health.consecutive_failures == 0
    assert health.may_try()


def test_a_success_resets_the_count() -> None:
    health = ServerHealth(failures_to_mark=2, clock=Clock())
    health.failed("once")
    health.succeeded()
    health.failed("again")
    assert health.available


def test_nonsense_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="failures_to_mark"):
        ServerHealth(failures_to_mark=0)
