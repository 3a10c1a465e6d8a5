"""Usage counters in SQLite: one row per (tenant, counter), added to by one UPSERT."""

from __future__ import annotations

from datetime import datetime

from backend.common.ids import timestamp
from backend.storage.local.db import Database

__all__ = ["LocalUsageRepository"]


class LocalUsageRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, tenant_id: str, counter: str, amount: int, *, expires_at: datetime | None = None) -> int:
        _, rows = self._db.write_one(
            "INSERT INTO usage (tenant_id, counter, amount, expires_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (tenant_id, counter) DO UPDATE SET amount = amount + excluded.amount"
            " RETURNING amount",
            (tenant_id, counter, amount, None if expires_at is None else timestamp(expires_at)),
        )
        return int(rows[0][0])

    def get(self, tenant_id: str, counter: str) -> int:
        rows = self._db.query(
            "SELECT amount FROM usage WHERE tenant_id = ? AND counter = ?", (tenant_id, counter)
        )
        return int(rows[0][0]) if rows else 0
