"""An approval decision as stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.common.ids import parse_timestamp, timestamp
from contracts.approvals import ApprovalDecisionRecord
from contracts.rest.approvals import ApprovalResource
from contracts.validation import validate_json_value

__all__ = ["ApprovalRecord"]


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    tenant_id: str
    user_id: str
    workspace_id: str
    decision: ApprovalDecisionRecord
    recorded_at: datetime

    @property
    def session_id(self) -> str:
        return self.decision.session_id

    @property
    def approval_id(self) -> str:
        return self.decision.approval_id

    def to_document(self) -> dict[str, Any]:
        return {
            "tenantId": self.tenant_id,
            "userId": self.user_id,
            "workspaceId": self.workspace_id,
            "sessionId": self.session_id,
            "approvalId": self.approval_id,
            "decidedAt": timestamp(self.decision.decided_at),
            "decision": self.decision.to_wire(),
            "recordedAt": timestamp(self.recorded_at),
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> ApprovalRecord:
        return cls(
            tenant_id=document["tenantId"],
            user_id=document["userId"],
            workspace_id=document["workspaceId"],
            decision=validate_json_value(ApprovalDecisionRecord, document["decision"]),
            recorded_at=parse_timestamp(document["recordedAt"]),
        )

    def resource(self) -> ApprovalResource:
        return ApprovalResource(
            **self.decision.model_dump(), workspace_id=self.workspace_id, recorded_at=self.recorded_at
        )
