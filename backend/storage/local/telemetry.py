"""Telemetry in SQLite, bounded by age and row count."""

from __future__ import annotations

import json
from datetime import datetime

from backend.common.ids import timestamp
from backend.storage.local.db import Database, dumps
from backend.telemetry.records import TelemetryRecord

__all__ = ["LocalTelemetryRepository"]


class LocalTelemetryRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def put_many(self, records: list[TelemetryRecord]) -> list[TelemetryRecord]:
        added: list[TelemetryRecord] = []
        with self._db.write() as connection:
            for r in records:
                before = connection.total_changes
                connection.execute(
                    "INSERT INTO telemetry (tenant_id, event_id, received_at, document) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT DO NOTHING",
                    (r.tenant_id, r.event_id, timestamp(r.received_at), dumps(r.to_document())),
                )
                if connection.total_changes > before:
                    added.append(r)
        return added

    def list(self, tenant_id: str, limit: int = 1000) -> list[TelemetryRecord]:
        rows = self._db.query(
            "SELECT document FROM telemetry WHERE tenant_id = ?"
            " ORDER BY received_at DESC, rowid DESC LIMIT ?",
            (tenant_id, limit),
        )
        return [TelemetryRecord.from_document(json.loads(row[0])) for row in rows]

    def prune(self, received_before: datetime, max_rows: int) -> int:
        with self._db.write() as connection:
            removed = connection.execute(
                "DELETE FROM telemetry WHERE received_at < ?", (timestamp(received_before),)
            ).rowcount
            excess = connection.execute("SELECT COUNT(*) FROM telemetry").fetchone()[0] - max_rows
            if excess > 0:
                removed += connection.execute(
                    "DELETE FROM telemetry WHERE rowid IN"
                    " (SELECT rowid FROM telemetry ORDER BY received_at, rowid LIMIT ?)",
                    (excess,),
                ).rowcount
        return removed
