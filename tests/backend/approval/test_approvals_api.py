"""The Approval Service (seed 000 §10.4; seed 001 §4.3): decisions persisted, idempotent on
approvalId, listed per session, only for the caller's own sessions."""

from __future__ import annotations

from typing import Any

from contracts.errors import ErrorCode
from tests.backend.helpers import PROJECT, BackendClient


def decision(session_id: str, approval_id: str = "appr_001", **change: Any) -> dict[str, Any]:
    return {
        "approvalId": approval_id,
        "sessionId": session_id,
        "taskId": "task_001",
        "stepId": "step_003",
        "decision": "approved",
        "reason": "looks fine",
        "decidedAt": "2026-03-02T08:55:00Z",
        **change,
    }


async def test_a_decision_is_recorded_and_listed_with_its_session(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    response = await api.call("POST", "/approvals", json=decision(session["sessionId"]))
    assert response.status_code == 201
    stored = response.json()
    assert stored["workspaceId"] == session["workspaceId"]
    assert stored["scope"] == "once"
    assert stored["recordedAt"] == "2026-03-02T09:00:00Z"
    listed = (await api.call("GET", f"/approvals?sessionId={session['sessionId']}")).json()["approvals"]
    assert listed == [stored]


async def test_a_retried_decision_is_not_duplicated_and_a_different_one_conflicts(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    first = await api.call("POST", "/approvals", json=decision(session["sessionId"]))
    again = await api.call("POST", "/approvals", json=decision(session["sessionId"]))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    changed = await api.call("POST", "/approvals", json=decision(session["sessionId"], decision="denied"))
    assert changed.status_code == 409
    assert changed.json()["details"]["field"] == "approvalId"
    assert (
        len((await api.call("GET", f"/approvals?sessionId={session['sessionId']}")).json()["approvals"]) == 1
    )


async def test_decisions_are_listed_in_the_order_they_were_made(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    for approval_id, minute in (("b", 7), ("a", 9), ("c", 3)):
        body = decision(
            session["sessionId"], approval_id, decidedAt=f"2026-03-02T08:5{minute}:00Z", timedOut=minute == 9
        )
        assert (await api.call("POST", "/approvals", json=body)).status_code == 201
    listed = (await api.call("GET", f"/approvals?sessionId={session['sessionId']}")).json()["approvals"]
    assert [a["approvalId"] for a in listed] == ["c", "b", "a"]
    assert [a["timedOut"] for a in listed] == [False, False, True]


async def test_a_decision_for_an_unknown_session_is_session_not_found(api: BackendClient) -> None:
    response = await api.call("POST", "/approvals", json=decision("sess_unknown"))
    assert (response.status_code, response.json()["code"]) == (404, ErrorCode.SESSION_NOT_FOUND)
    listing = await api.call("GET", "/approvals?sessionId=sess_unknown")
    assert listing.status_code == 404


async def test_a_decision_must_be_complete_and_well_formed(api: BackendClient) -> None:
    session = await api.session([PROJECT])
    for change, field in (
        ({"decision": "maybe"}, "decision"),
        ({"decidedAt": "yesterday"}, "decidedAt"),
        ({"decidedAt": "2026-03-02T09:05:00"}, "decidedAt"),
        ({"stepId": None}, "stepId"),
    ):
        body = {k: v for k, v in decision(session["sessionId"], **change).items() if v is not None}
        response = await api.call("POST", "/approvals", json=body)
        assert response.status_code == 400
        assert response.json()["details"]["field"] == field
