"""Asking, answering and timing out (seed 000 §10.1–10.3, §11 "Approval" rows)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from agent_runtime.agent_host.approval import ApprovalGate, WrongSession
from contracts.approvals import ApprovalRequest
from contracts.enums import ApprovalDecision, ApprovalScope, Capability, RiskLevel
from contracts.errors import ErrorCode
from contracts.events import ApprovalResolvedPayload, EventType
from contracts.methods import ApproveActionParams

from .approval_fakes import (
    NOW,
    SESSION_ID,
    WAIT_S,
    RecordingEmitter,
    ask,
    fixed_clock,
    make_gate,
    shell_outcome,
)


def answer(
    approval_id: str,
    decision: ApprovalDecision = ApprovalDecision.APPROVED,
    *,
    reason: str | None = None,
    scope: ApprovalScope = ApprovalScope.ONCE,
    session_id: str = SESSION_ID,
) -> ApproveActionParams:
    return ApproveActionParams(
        session_id=session_id, approval_id=approval_id, decision=decision, reason=reason, scope=scope
    )


async def test_an_approved_request_shows_the_action_then_returns_the_users_approval() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter, timeout_s=300)
    waiter = ask(gate)

    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)
    shown = ApprovalRequest.model_validate_json(json.dumps(requested.payload))
    assert (requested.task_id, requested.step_id) == ("task_1", "step_1")
    assert shown.approval_id.startswith("appr_")
    assert len(shown.approval_id) == 37
    assert (shown.session_id, shown.task_id, shown.step_id) == (SESSION_ID, "task_1", "step_1")
    assert shown.title == "Local command execution"
    assert shown.action_summary == "Run: pytest -q"
    assert shown.risk_level is RiskLevel.MEDIUM
    assert shown.details.command == "pytest -q"
    assert shown.details.cwd == "/home/user/project"
    assert shown.timeout_seconds == 300
    assert shown.expires_at == NOW + timedelta(seconds=300)
    assert gate.pending == [shown]

    result = gate.decide(answer(shown.approval_id, reason="looks fine"))
    assert result.accepted
    assert result.approval_id == shown.approval_id

    record = await asyncio.wait_for(waiter, WAIT_S)
    assert record.decision is ApprovalDecision.APPROVED
    assert (record.approval_id, record.reason, record.decided_at) == (shown.approval_id, "looks fine", NOW)
    assert record.scope is ApprovalScope.ONCE
    assert not record.timed_out
    assert gate.records == [record]
    assert gate.pending == []
    (resolved,) = emitter.of(EventType.APPROVAL_RESOLVED)
    payload = ApprovalResolvedPayload.model_validate_json(json.dumps(resolved.payload))
    assert payload.decision is ApprovalDecision.APPROVED
    assert payload.scope is ApprovalScope.ONCE
    assert payload.latency_ms >= 0
    assert resolved.step_id == "step_1"


async def test_a_denied_request_returns_the_denial_with_the_users_reason() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiter = ask(gate)
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)

    assert gate.decide(
        answer(requested.payload["approvalId"], ApprovalDecision.DENIED, reason="not now")
    ).accepted

    record = await asyncio.wait_for(waiter, WAIT_S)
    assert record.decision is ApprovalDecision.DENIED
    assert record.reason == "not now"
    assert emitter.of(EventType.APPROVAL_RESOLVED)[0].payload["decision"] == "denied"


async def test_no_answer_within_the_timeout_is_a_denial_announced_as_a_timeout() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter, timeout_s=0.05)

    record = await asyncio.wait_for(ask(gate), WAIT_S)

    assert record.decision is ApprovalDecision.DENIED
    assert record.timed_out
    assert record.reason == "No answer within 0.05 s"
    assert [event.event_type for event in emitter.events] == [
        EventType.APPROVAL_REQUESTED,
        EventType.APPROVAL_TIMEOUT,
        EventType.APPROVAL_RESOLVED,
    ]
    requested, timeout, resolved = emitter.events
    assert requested.payload["timeoutSeconds"] == 1  # a fraction of a second still shows as 1 s
    assert timeout.payload == {"approvalId": record.approval_id}
    assert resolved.payload["decision"] == "denied"
    assert resolved.payload["approvalId"] == record.approval_id
    assert gate.pending == []
    assert gate.records == [record]


async def test_an_answer_that_arrives_after_the_timeout_is_not_accepted() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter, timeout_s=0.05)
    record = await asyncio.wait_for(ask(gate), WAIT_S)

    late = gate.decide(answer(record.approval_id))

    assert not late.accepted
    assert gate.records == [record]
    assert record.decision is ApprovalDecision.DENIED
    assert len(emitter.of(EventType.APPROVAL_RESOLVED)) == 1


async def test_parallel_requests_each_get_their_own_answer_in_any_order() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiters = [ask(gate, f"make target{n}", step_id="step_7") for n in range(3)]
    requested = await emitter.wait_for(EventType.APPROVAL_REQUESTED, 3)
    ids = {event.payload["details"]["command"]: event.payload["approvalId"] for event in requested}
    assert len(set(ids.values())) == 3
    assert len(gate.pending) == 3

    assert gate.decide(answer(ids["make target2"], ApprovalDecision.DENIED, reason="no")).accepted
    assert not waiters[0].done()
    assert not waiters[1].done()
    assert gate.decide(answer(ids["make target0"])).accepted
    assert gate.decide(answer(ids["make target1"], ApprovalDecision.DENIED)).accepted

    records = await asyncio.wait_for(asyncio.gather(*waiters), WAIT_S)
    assert [r.approval_id for r in records] == [ids[f"make target{n}"] for n in range(3)]
    assert [r.decision for r in records] == [
        ApprovalDecision.APPROVED,
        ApprovalDecision.DENIED,
        ApprovalDecision.DENIED,
    ]
    assert [r.approval_id for r in gate.records] == [
        ids["make target2"],
        ids["make target0"],
        ids["make target1"],
    ]


async def test_one_request_timing_out_leaves_the_others_waiting() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter, timeout_s=0.2)
    first = ask(gate, "make a")
    second = ask(gate, "make b")
    requested = await emitter.wait_for(EventType.APPROVAL_REQUESTED, 2)
    gate.decide(answer(requested[0].payload["approvalId"]))

    a, b = await asyncio.wait_for(asyncio.gather(first, second), WAIT_S)

    assert a.decision is ApprovalDecision.APPROVED
    assert not a.timed_out
    assert b.decision is ApprovalDecision.DENIED
    assert b.timed_out


async def test_a_decision_for_another_session_is_refused_as_session_not_found() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiter = ask(gate)
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)
    approval_id = requested.payload["approvalId"]

    with pytest.raises(WrongSession) as caught:
        gate.decide(answer(approval_id, session_id="sess_someone_else"))

    assert caught.value.code is ErrorCode.SESSION_NOT_FOUND
    assert caught.value.shape.details == {"sessionId": "sess_someone_else"}
    assert [r.approval_id for r in gate.pending] == [approval_id]  # still waiting for its own session
    gate.decide(answer(approval_id, ApprovalDecision.DENIED))
    assert (await asyncio.wait_for(waiter, WAIT_S)).decision is ApprovalDecision.DENIED


async def test_an_unknown_or_already_answered_approval_is_not_accepted_and_changes_nothing() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    assert not gate.decide(answer("appr_never_asked")).accepted

    waiter = ask(gate)
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)
    approval_id = requested.payload["approvalId"]
    assert gate.decide(answer(approval_id, ApprovalDecision.DENIED)).accepted
    # A second click (or a replayed message) cannot turn the denial into an approval.
    assert not gate.decide(
        answer(approval_id, ApprovalDecision.APPROVED, scope=ApprovalScope.SESSION)
    ).accepted

    record = await asyncio.wait_for(waiter, WAIT_S)
    assert record.decision is ApprovalDecision.DENIED
    assert gate.records == [record]
    assert gate.grants == []


async def test_cancelling_the_waiting_call_withdraws_its_request_cleanly() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiter = ask(gate)
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)
    approval_id = requested.payload["approvalId"]

    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(waiter, WAIT_S)

    assert gate.pending == []
    (record,) = gate.records
    assert record.approval_id == approval_id
    assert record.decision is ApprovalDecision.DENIED
    assert "withdrawn" in (record.reason or "")
    # The desktop hears that the dialog is moot.
    assert emitter.of(EventType.APPROVAL_RESOLVED)[0].payload["approvalId"] == approval_id
    assert not gate.decide(answer(approval_id)).accepted


async def test_deny_pending_denies_every_waiting_request_with_the_reason_given() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiters = [ask(gate, "make a"), ask(gate, "make b")]
    await emitter.wait_for(EventType.APPROVAL_REQUESTED, 2)

    gate.deny_pending("The task was cancelled.")

    records = await asyncio.wait_for(asyncio.gather(*waiters), WAIT_S)
    assert all(r.decision is ApprovalDecision.DENIED for r in records)
    assert {r.reason for r in records} == {"The task was cancelled."}
    assert gate.pending == []
    assert len(emitter.of(EventType.APPROVAL_RESOLVED)) == 2
    # The gate keeps working for the next task.
    waiter = ask(gate, "make c")
    (_, _, third) = await emitter.wait_for(EventType.APPROVAL_REQUESTED, 3)
    assert gate.decide(answer(third.payload["approvalId"])).accepted
    assert (await asyncio.wait_for(waiter, WAIT_S)).decision is ApprovalDecision.APPROVED


async def test_after_aclose_nothing_waits_and_new_requests_are_denied_without_asking() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    waiter = ask(gate)
    await emitter.wait_for(EventType.APPROVAL_REQUESTED)

    await asyncio.wait_for(gate.aclose(), WAIT_S)

    assert (await asyncio.wait_for(waiter, WAIT_S)).decision is ApprovalDecision.DENIED
    late = await asyncio.wait_for(ask(gate, "make later"), WAIT_S)
    assert late.decision is ApprovalDecision.DENIED
    assert len(emitter.of(EventType.APPROVAL_REQUESTED)) == 1


async def test_empty_texts_in_the_outcome_still_make_a_valid_request() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    outcome = shell_outcome()
    blank = type(outcome)(
        rule_id=None,
        risk_level=RiskLevel.HIGH,
        title="",
        description="",
        action_summary="",
        details=outcome.details,
    )
    waiter = asyncio.create_task(
        gate.request(blank, capability=Capability.SHELL_EXEC, grant_key=None, task_id="t", step_id="s")
    )
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)
    assert requested.payload["title"] == "RunCommand"
    assert requested.payload["actionSummary"] == "RunCommand"
    gate.decide(answer(requested.payload["approvalId"], ApprovalDecision.DENIED))
    await asyncio.wait_for(waiter, WAIT_S)


def test_a_timeout_that_is_not_a_positive_number_is_refused() -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timeout_s"):
            ApprovalGate(session_id=SESSION_ID, emit=RecordingEmitter(), persist=None, timeout_s=bad)


async def test_a_failing_event_sink_cannot_leave_the_tool_call_waiting() -> None:
    emitter = RecordingEmitter()

    def flaky_emit(event_type: EventType, payload: object = None, **ids: str | None) -> None:
        if event_type is EventType.APPROVAL_RESOLVED:
            raise RuntimeError("sink broke")
        emitter(event_type, payload, **ids)  # type: ignore[arg-type]

    gate = ApprovalGate(session_id=SESSION_ID, emit=flaky_emit, persist=None, timeout_s=60, clock=fixed_clock)
    waiter = ask(gate)
    (requested,) = await emitter.wait_for(EventType.APPROVAL_REQUESTED)

    with pytest.raises(RuntimeError):
        gate.decide(answer(requested.payload["approvalId"]))

    record = await asyncio.wait_for(waiter, WAIT_S)
    assert record.decision is ApprovalDecision.APPROVED
