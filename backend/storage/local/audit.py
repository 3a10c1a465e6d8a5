"""The audit chains in SQLite: the primary key (tenant, sequence) and the unique (tenant, eventId)
make the conditional write; triggers refuse any UPDATE or DELETE."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from backend.audit.chain import AuditRecord
from backend.audit.repository import AppendResult
from backend.storage.local.db import Database, dumps

__all__ = ["LocalAuditRepository"]

_PAGE = 500


class LocalAuditRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def head(self, tenant_id: str) -> AuditRecord | None:
        rows = self._db.query(
            "SELECT document FROM audit WHERE tenant_id = ? ORDER BY sequence DESC LIMIT 1", (tenant_id,)
        )
        return AuditRecord.from_document(json.loads(rows[0][0])) if rows else None

    def append(self, record: AuditRecord) -> AppendResult:
        with self._db.write() as connection:
            if connection.execute(
                "SELECT 1 FROM audit WHERE tenant_id = ? AND event_id = ?",
                (record.tenant_id, record.event_id),
            ).fetchone():
                return AppendResult.DUPLICATE_EVENT
            try:
                connection.execute(
                    "INSERT INTO audit (tenant_id, sequence, event_id, document) VALUES (?, ?, ?, ?)",
                    (record.tenant_id, record.sequence, record.event_id, dumps(record.to_document())),
                )
            except sqlite3.IntegrityError:
                return AppendResult.SEQUENCE_TAKEN
        return AppendResult.APPENDED

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None:
        rows = self._db.query(
            "SELECT document FROM audit WHERE tenant_id = ? AND event_id = ?", (tenant_id, event_id)
        )
        return AuditRecord.from_document(json.loads(rows[0][0])) if rows else None

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        while True:
            rows = self._db.query(
                "SELECT sequence, document FROM audit WHERE tenant_id = ? AND sequence > ?"
                " ORDER BY sequence LIMIT ?",
                (tenant_id, after_sequence, _PAGE),
            )
            for row in rows:
                yield AuditRecord.from_document(json.loads(row[1]))
            if len(rows) < _PAGE:
                return
            after_sequence = rows[-1][0]
