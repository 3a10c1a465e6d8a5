"""Approval decisions in a dictionary."""

from __future__ import annotations

import threading

from backend.approval.records import ApprovalRecord

__all__ = ["MemoryApprovalRepository"]


class MemoryApprovalRepository:
    def __init__(self) -> None:
        self._records: dict[tuple[str, str], ApprovalRecord] = {}
        self._lock = threading.Lock()

    def put_if_absent(self, record: ApprovalRecord) -> ApprovalRecord | None:
        key = (record.session_id, record.approval_id)
        with self._lock:
            existing = self._records.get(key)
            if existing is None:
                self._records[key] = record
            return existing

    def list_by_session(self, tenant_id: str, session_id: str) -> list[ApprovalRecord]:
        with self._lock:
            found = [r for (s, _), r in self._records.items() if s == session_id and r.tenant_id == tenant_id]
        return sorted(found, key=lambda r: (r.decision.decided_at, r.approval_id))
