"""The Approval Service's storage interface."""

from __future__ import annotations

from typing import Protocol

from backend.approval.records import ApprovalRecord

__all__ = ["ApprovalRepository"]


class ApprovalRepository(Protocol):
    def put_if_absent(self, record: ApprovalRecord) -> ApprovalRecord | None:
        """Insert unless the session already has this approvalId: None if inserted, else the stored one."""
        ...

    def list_by_session(self, tenant_id: str, session_id: str) -> list[ApprovalRecord]:
        """The tenant's decisions for one session, oldest ``decidedAt`` first."""
        ...
