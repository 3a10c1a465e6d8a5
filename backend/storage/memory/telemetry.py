"""Telemetry events in a dictionary, bounded like the local store."""

from __future__ import annotations

import threading
from datetime import datetime

from backend.telemetry.records import TelemetryRecord

__all__ = ["MemoryTelemetryRepository"]


class MemoryTelemetryRepository:
    def __init__(self) -> None:
        self._records: dict[tuple[str, str], TelemetryRecord] = {}
        self._lock = threading.Lock()

    def put_many(self, records: list[TelemetryRecord]) -> list[TelemetryRecord]:
        added: list[TelemetryRecord] = []
        with self._lock:
            for record in records:
                key = (record.tenant_id, record.event_id)
                if key not in self._records:
                    self._records[key] = record
                    added.append(record)
        return added

    def list(self, tenant_id: str, limit: int = 1000) -> list[TelemetryRecord]:
        with self._lock:
            found = [r for (t, _), r in self._records.items() if t == tenant_id]
        return sorted(found, key=lambda r: (r.received_at, r.occurred_at), reverse=True)[:limit]

    def prune(self, received_before: datetime, max_rows: int) -> int:
        with self._lock:
            ordered = sorted(self._records.items(), key=lambda item: item[1].received_at)
            doomed = [key for key, r in ordered if r.received_at < received_before]
            survivors = len(ordered) - len(doomed)
            if survivors > max_rows:
                kept = [key for key, r in ordered if r.received_at >= received_before]
                doomed += kept[: survivors - max_rows]
            for key in doomed:
                del self._records[key]
            return len(doomed)
