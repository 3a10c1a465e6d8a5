"""Recording approval decisions (seed 000 §10.4): idempotent on ``approvalId``, scoped to the caller's
sessions — a decision for a session the caller does not own is ``SESSION_NOT_FOUND``."""

from __future__ import annotations

from datetime import timedelta

from backend.approval.ports import SessionDirectory
from backend.approval.records import ApprovalRecord
from backend.approval.repository import ApprovalRepository
from backend.common.auth import Principal
from backend.common.clock import Clock, not_in_future
from backend.common.errors import BackendError, session_not_found
from contracts.approvals import ApprovalDecisionRecord
from contracts.errors import ErrorCode
from contracts.rest.approvals import ApprovalList, ApprovalResource

__all__ = ["ApprovalService"]


class ApprovalService:
    def __init__(
        self,
        repository: ApprovalRepository,
        sessions: SessionDirectory,
        clock: Clock,
        max_clock_skew: timedelta,
    ) -> None:
        self._repository = repository
        self._sessions = sessions
        self._clock = clock
        self._max_clock_skew = max_clock_skew

    def record(self, principal: Principal, decision: ApprovalDecisionRecord) -> tuple[ApprovalResource, bool]:
        """The stored decision and whether it is new (201) or a retry of one already stored (200)."""
        now = self._clock.now()
        # Decisions are listed in decidedAt order; one "decided" in the future would sit after every
        # decision made later.
        not_in_future(decision.decided_at, now, self._max_clock_skew, "decidedAt")
        workspace_id = self._sessions.workspace_of(principal, decision.session_id)
        if workspace_id is None:
            raise session_not_found(decision.session_id)
        record = ApprovalRecord(principal.tenant_id, principal.user_id, workspace_id, decision, now)
        existing = self._repository.put_if_absent(record)
        if existing is None:
            return record.resource(), True
        if existing.decision != decision:
            raise BackendError(
                ErrorCode.INVALID_REQUEST,
                "A different decision was already recorded under this approvalId",
                status_code=409,
                details={"field": "approvalId", "approvalId": decision.approval_id},
            )
        return existing.resource(), False

    def list(self, principal: Principal, session_id: str) -> ApprovalList:
        if self._sessions.workspace_of(principal, session_id) is None:
            raise session_not_found(session_id)
        records = self._repository.list_by_session(principal.tenant_id, session_id)
        return ApprovalList(approvals=[r.resource() for r in records if r.user_id == principal.user_id])
