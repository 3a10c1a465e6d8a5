"""Sessions in SQLite."""

from __future__ import annotations

from datetime import datetime

from backend.common.ids import timestamp
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionOwnership
from backend.storage.local.db import Database, dumps, loads

__all__ = ["LocalSessionRepository"]


class LocalSessionRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def create(self, record: SessionRecord) -> None:
        self._db.write_one(
            "INSERT INTO sessions (session_id, tenant_id, workspace_id, created_at, revision, document,"
            " user_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.session_id,
                record.tenant_id,
                record.workspace_id,
                timestamp(record.created_at),
                record.revision,
                dumps(record.to_document()),
                record.user_id,
                timestamp(record.expires_at),
            ),
        )

    def get(self, tenant_id: str, session_id: str) -> SessionRecord | None:
        rows = self._db.query(
            "SELECT document FROM sessions WHERE session_id = ? AND tenant_id = ?", (session_id, tenant_id)
        )
        return SessionRecord.from_document(loads(rows[0][0])) if rows else None

    def ownership(self, tenant_id: str, session_id: str) -> SessionOwnership | None:
        rows = self._db.query(
            "SELECT json_extract(document, '$.userId'), workspace_id FROM sessions"
            " WHERE session_id = ? AND tenant_id = ?",
            (session_id, tenant_id),
        )
        return SessionOwnership(rows[0][0], rows[0][1]) if rows else None

    def replace(self, record: SessionRecord, expected_revision: int) -> bool:
        with self._db.write() as connection:
            cursor = connection.execute(
                "UPDATE sessions SET revision = ?, document = ?, expires_at = ?"
                " WHERE session_id = ? AND tenant_id = ? AND revision = ?",
                (
                    record.revision,
                    dumps(record.to_document()),
                    timestamp(record.expires_at),
                    record.session_id,
                    record.tenant_id,
                    expected_revision,
                ),
            )
            return cursor.rowcount == 1

    def list_by_workspace(self, tenant_id: str, workspace_id: str, limit: int) -> list[SessionRecord]:
        rows = self._db.query(
            "SELECT document FROM sessions WHERE workspace_id = ? AND tenant_id = ?"
            " ORDER BY created_at DESC LIMIT ?",
            (workspace_id, tenant_id, limit),
        )
        return [SessionRecord.from_document(loads(row[0])) for row in rows]

    def prune_expired(self, expired_before: datetime, *, dry_run: bool = False) -> int:
        cutoff = (timestamp(expired_before),)
        if dry_run:
            return int(self._db.query("SELECT COUNT(*) FROM sessions WHERE expires_at < ?", cutoff)[0][0])
        with self._db.write() as connection:
            return connection.execute("DELETE FROM sessions WHERE expires_at < ?", cutoff).rowcount

    def active_for_user(self, tenant_id: str, user_id: str, now: datetime) -> list[SessionRecord]:
        rows = self._db.query(
            "SELECT document FROM sessions WHERE tenant_id = ? AND user_id = ? AND expires_at > ?",
            (tenant_id, user_id, timestamp(now)),
        )
        records = [SessionRecord.from_document(loads(row[0])) for row in rows]
        return [r for r in records if r.status not in TERMINAL]
