"""Sessions in a dictionary."""

from __future__ import annotations

import threading
from datetime import datetime

from backend.common.errors import StorageError
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionOwnership

__all__ = ["MemorySessionRepository"]


class MemorySessionRepository:
    def __init__(self) -> None:
        self._records: dict[str, SessionRecord] = {}
        self._lock = threading.Lock()

    def create(self, record: SessionRecord) -> None:
        with self._lock:
            if record.session_id in self._records:
                raise StorageError("session ID collision")
            self._records[record.session_id] = record

    def get(self, tenant_id: str, session_id: str) -> SessionRecord | None:
        record = self._records.get(session_id)
        return record if record is not None and record.tenant_id == tenant_id else None

    def ownership(self, tenant_id: str, session_id: str) -> SessionOwnership | None:
        record = self.get(tenant_id, session_id)
        return None if record is None else SessionOwnership(record.user_id, record.workspace_id)

    def replace(self, record: SessionRecord, expected_revision: int) -> bool:
        with self._lock:
            current = self._records.get(record.session_id)
            if (
                current is None
                or current.tenant_id != record.tenant_id
                or current.revision != expected_revision
            ):
                return False
            self._records[record.session_id] = record
            return True

    def list_by_workspace(self, tenant_id: str, workspace_id: str, limit: int) -> list[SessionRecord]:
        with self._lock:
            found = [
                r
                for r in self._records.values()
                if r.tenant_id == tenant_id and r.workspace_id == workspace_id
            ]
        return sorted(found, key=lambda r: r.created_at, reverse=True)[:limit]

    def prune_expired(self, expired_before: datetime, *, dry_run: bool = False) -> int:
        with self._lock:
            gone = [key for key, r in self._records.items() if r.expires_at < expired_before]
            if not dry_run:
                for key in gone:
                    del self._records[key]
        return len(gone)

    def active_for_user(self, tenant_id: str, user_id: str, now: datetime) -> list[SessionRecord]:
        with self._lock:
            return [
                r
                for r in self._records.values()
                if r.tenant_id == tenant_id
                and r.user_id == user_id
                and r.expires_at > now
                and r.status not in TERMINAL
            ]
