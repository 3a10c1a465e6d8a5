"""A resumed session takes its decisions back from the checkpoint (seed 000 §9.2, §9.5)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from agent_runtime.agent_host.approval import RECORDS_CARRY_GRANTS, ApprovalGate
from contracts.approvals import ApprovalDecisionRecord
from contracts.checkpoint import Checkpoint
from contracts.enums import ApprovalDecision, ApprovalScope, Capability, SessionStatus
from contracts.events import EventType
from contracts.methods import ApproveActionParams

from .approval_fakes import NOW, SESSION_ID, WAIT_S, RecordingEmitter, ask, decide_next, make_gate


class RecordWithGrant(ApprovalDecisionRecord):
    """A decision record that names what it approved, as the checkpoint needs it to for grants."""

    capability: Capability | None = None
    grant_key: str | None = None


def record_fields(approval_id: str) -> dict[str, object]:
    """An approval of this session decided five minutes before ``NOW``."""
    return {
        "approval_id": approval_id,
        "session_id": SESSION_ID,
        "task_id": "task_0",
        "step_id": "step_0",
        "decision": ApprovalDecision.APPROVED,
        "decided_at": NOW - timedelta(minutes=5),
    }


def record(approval_id: str, **changes: object) -> ApprovalDecisionRecord:
    return ApprovalDecisionRecord.model_validate({**record_fields(approval_id), **changes})


def grant_record(approval_id: str, capability: Capability, key: str, **changes: object) -> RecordWithGrant:
    grant = {"scope": ApprovalScope.SESSION, "capability": capability, "grant_key": key}
    return RecordWithGrant.model_validate({**record_fields(approval_id), **grant, **changes})


async def gate_with_a_session_grant(
    emitter: RecordingEmitter, key: str, *, reason: str | None = None
) -> ApprovalGate:
    """A gate on which the user approved the shell command ``key`` for the rest of the session."""
    gate = make_gate(emitter)
    waiter = ask(gate, key)
    await decide_next(gate, emitter, ApprovalDecision.APPROVED, ApprovalScope.SESSION, waiter, reason=reason)
    return gate


async def test_restored_decisions_come_first_in_the_records_and_are_not_decided_again() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    old = [record("appr_old1"), record("appr_old2", decision=ApprovalDecision.DENIED, reason="no")]

    gate.restore(old)
    gate.restore(old)  # restoring twice changes nothing

    assert gate.records == old
    # An answer for an approval that was settled before the crash is refused, not applied.
    late = ApproveActionParams(
        session_id=SESSION_ID, approval_id="appr_old2", decision=ApprovalDecision.APPROVED
    )
    assert not gate.decide(late).accepted
    assert emitter.events == []


async def test_records_of_another_session_are_ignored_on_restore() -> None:
    gate = make_gate(RecordingEmitter())
    foreign = grant_record("appr_foreign", Capability.SHELL_EXEC, "pytest -q", session_id="sess_other")

    gate.restore([foreign])

    assert gate.records == []
    assert gate.grants == []


async def test_a_restored_session_grant_covers_its_exact_action_again() -> None:
    emitter = RecordingEmitter()
    gate = make_gate(emitter)
    gate.restore(
        [
            grant_record("appr_grant", Capability.SHELL_EXEC, "pytest -q"),
            grant_record("appr_denied", Capability.SHELL_EXEC, "make", decision=ApprovalDecision.DENIED),
            grant_record("appr_once", Capability.SHELL_EXEC, "ls", scope=ApprovalScope.ONCE),
        ]
    )
    assert [(g.capability, g.grant_key, g.approval_id) for g in gate.grants] == [
        (Capability.SHELL_EXEC, "pytest -q", "appr_grant")
    ]

    covered = await asyncio.wait_for(ask(gate, "pytest -q"), WAIT_S)
    assert covered.decision is ApprovalDecision.APPROVED
    assert "appr_grant" in (covered.reason or "")

    for key in ("make", "ls", "pytest -q "):
        denied = await decide_next(gate, emitter, ApprovalDecision.DENIED, ApprovalScope.ONCE, ask(gate, key))
        assert denied.decision is ApprovalDecision.DENIED


async def test_records_fit_the_checkpoint_and_read_back_from_its_json() -> None:
    gate = await gate_with_a_session_grant(RecordingEmitter(), "pytest -q", reason="fine")

    checkpoint = Checkpoint(
        checkpoint_version="1.0",
        session_id=SESSION_ID,
        workspace_id="ws_1",
        tenant_id="tenant_1",
        user_id="user_1",
        session_status=SessionStatus.SESSION_RUNNING,
        thread=[],
        session_tokens_used=0,
        policy_bundle_version="1",
        checkpointed_at=NOW,
        approval_decisions=gate.records,
    )
    loaded = Checkpoint.model_validate_json(checkpoint.model_dump_json(by_alias=True))

    resumed = make_gate(RecordingEmitter())
    resumed.restore(loaded.approval_decisions)
    assert resumed.records == gate.records


@pytest.mark.skipif(
    not RECORDS_CARRY_GRANTS,
    reason="contracts.approvals.ApprovalDecisionRecord has no capability/grantKey fields yet",
)
async def test_a_session_grant_survives_a_checkpoint_round_trip() -> None:
    gate = await gate_with_a_session_grant(RecordingEmitter(), "pytest -q")
    wire = [
        ApprovalDecisionRecord.model_validate_json(r.model_dump_json(by_alias=True)) for r in gate.records
    ]

    resumed_emitter = RecordingEmitter()
    resumed = make_gate(resumed_emitter)
    resumed.restore(wire)

    covered = await asyncio.wait_for(ask(resumed, "pytest -q"), WAIT_S)
    assert covered.decision is ApprovalDecision.APPROVED
    assert resumed_emitter.of(EventType.APPROVAL_REQUESTED) == []
