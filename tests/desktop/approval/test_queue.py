"""The approval queue, without Qt: order, duplicates, discarding, countdown and expiry."""

from __future__ import annotations

import math

import pytest

from desktop.approval.queue import ApprovalQueue, PendingApproval
from tests.desktop.approval.requests import request


def test_requests_wait_in_arrival_order_across_conversations() -> None:
    queue = ApprovalQueue()
    queue.add("sess_a", request("appr_1"), received_at=10.0)
    queue.add("sess_b", request("appr_2"), received_at=11.0)
    queue.add("sess_a", request("appr_3"), received_at=12.0)

    assert [p.approval_id for p in queue.pending()] == ["appr_1", "appr_2", "appr_3"]
    head = queue.head()
    assert head is not None
    assert (head.session_id, head.approval_id, head.title, head.risk) == (
        "sess_a",
        "appr_1",
        "Local command execution",
        "medium",
    )
    queue.discard("appr_1")
    assert queue.head() is not None
    assert queue.head().approval_id == "appr_2"  # type: ignore[union-attr]
    assert len(queue) == 2


def test_a_repeated_request_is_kept_once_and_keeps_its_first_arrival() -> None:
    queue = ApprovalQueue()
    changes: list[int] = []
    queue.subscribe(lambda: changes.append(len(queue)))
    first = queue.add("sess_a", request("appr_1"), received_at=10.0)
    again = queue.add("sess_a", request("appr_1", title="changed"), received_at=99.0)

    assert again is first
    assert len(queue) == 1
    assert first.title == "Local command execution"
    assert first.seconds_left(10.0) == 300
    assert changes == [1]


def test_discarding_is_idempotent_and_only_a_real_change_is_announced() -> None:
    queue = ApprovalQueue()
    changes: list[int] = []
    queue.add("sess_a", request("appr_1"), received_at=0.0)
    queue.subscribe(lambda: changes.append(len(queue)))
    queue.discard("appr_unknown")
    queue.discard("appr_1")
    queue.discard("appr_1")
    assert changes == [0]
    assert queue.head() is None
    assert queue.pending() == []


def test_discard_session_removes_only_that_conversations_requests() -> None:
    queue = ApprovalQueue()
    queue.add("sess_a", request("appr_1"), received_at=0.0)
    queue.add("sess_b", request("appr_2"), received_at=1.0)
    queue.add("sess_a", request("appr_3"), received_at=2.0)
    queue.discard_session("sess_a")
    assert [p.approval_id for p in queue.pending()] == ["appr_2"]


def test_seconds_left_counts_down_from_arrival_and_stops_at_zero() -> None:
    pending = PendingApproval("sess_a", request("appr_1", timeoutSeconds=60), received_at=100.0)
    assert pending.seconds_left(100.0) == 60
    assert pending.seconds_left(130.5) == 29.5
    assert pending.seconds_left(500.0) == 0


@pytest.mark.parametrize("timeout", [None, 0, -5, True, "300", math.nan])
def test_a_request_that_states_no_usable_time_limit_never_counts_down(timeout: object) -> None:
    fields = {"timeoutSeconds": timeout} if timeout is not None else {}
    raw = request("appr_1", **fields)
    if timeout is None:
        del raw["timeoutSeconds"]
    pending = PendingApproval("sess_a", raw, received_at=0.0)
    assert pending.seconds_left(1e9) == math.inf


def test_expire_removes_exactly_the_requests_whose_time_ran_out() -> None:
    queue = ApprovalQueue()
    queue.add("sess_a", request("appr_short", timeoutSeconds=10), received_at=0.0)
    queue.add("sess_a", request("appr_long", timeoutSeconds=100), received_at=0.0)
    no_limit = request("appr_none")
    del no_limit["timeoutSeconds"]
    queue.add("sess_a", no_limit, received_at=0.0)

    assert queue.expire(9.9) == []
    expired = queue.expire(10.0)
    assert [p.approval_id for p in expired] == ["appr_short"]
    assert [p.approval_id for p in queue.pending()] == ["appr_long", "appr_none"]
    queue.expire(1e9)
    assert [p.approval_id for p in queue.pending()] == ["appr_none"]


def test_a_request_without_an_approval_id_is_refused() -> None:
    queue = ApprovalQueue()
    with pytest.raises(ValueError, match="approvalId"):
        queue.add("sess_a", {"title": "x"}, received_at=0.0)
    with pytest.raises(ValueError, match="approvalId"):
        queue.add("sess_a", request(""), received_at=0.0)
    assert len(queue) == 0


def test_an_unknown_risk_level_counts_as_high() -> None:
    pending = PendingApproval("sess_a", request("appr_1", riskLevel="catastrophic"), received_at=0.0)
    assert pending.risk == "high"


def test_the_queue_keeps_its_own_copy_of_the_request() -> None:
    queue = ApprovalQueue()
    raw = request("appr_1")
    queue.add("sess_a", raw, received_at=0.0)
    raw["title"] = "swapped after arrival"
    assert queue.pending()[0].title == "Local command execution"


def test_unsubscribed_callbacks_hear_nothing_more() -> None:
    queue = ApprovalQueue()
    heard: list[str] = []

    def listener() -> None:
        heard.append("change")

    queue.subscribe(listener)
    queue.add("sess_a", request("appr_1"), received_at=0.0)
    queue.unsubscribe(listener)
    queue.unsubscribe(listener)
    queue.discard("appr_1")
    assert heard == ["change"]
