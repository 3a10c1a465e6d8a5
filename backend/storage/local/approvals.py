"""Approval decisions in SQLite."""

from __future__ import annotations

import json

from backend.approval.records import ApprovalRecord
from backend.common.ids import timestamp
from backend.storage.local.db import Database, dumps

__all__ = ["LocalApprovalRepository"]


class LocalApprovalRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def put_if_absent(self, record: ApprovalRecord) -> ApprovalRecord | None:
        with self._db.write() as connection:
            inserted = connection.execute(
                "INSERT INTO approvals (session_id, approval_id, tenant_id, decided_at, document)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    record.session_id,
                    record.approval_id,
                    record.tenant_id,
                    timestamp(record.decision.decided_at),
                    dumps(record.to_document()),
                ),
            )
            if inserted.rowcount == 1:
                return None
            row = connection.execute(
                "SELECT document FROM approvals WHERE session_id = ? AND approval_id = ?",
                (record.session_id, record.approval_id),
            ).fetchone()
        return ApprovalRecord.from_document(json.loads(row[0]))

    def list_by_session(self, tenant_id: str, session_id: str) -> list[ApprovalRecord]:
        rows = self._db.query(
            "SELECT document FROM approvals WHERE session_id = ? AND tenant_id = ?"
            " ORDER BY decided_at, approval_id",
            (session_id, tenant_id),
        )
        return [ApprovalRecord.from_document(json.loads(row[0])) for row in rows]
