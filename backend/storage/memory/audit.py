"""The audit chains in lists, one per tenant."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from backend.audit.chain import AuditRecord
from backend.audit.repository import AppendResult

__all__ = ["MemoryAuditRepository"]


class MemoryAuditRepository:
    def __init__(self) -> None:
        self._chains: dict[str, list[AuditRecord]] = {}
        self._events: dict[tuple[str, str], AuditRecord] = {}
        self._lock = threading.Lock()

    def head(self, tenant_id: str) -> AuditRecord | None:
        with self._lock:
            chain = self._chains.get(tenant_id)
            return chain[-1] if chain else None

    def append(self, record: AuditRecord) -> AppendResult:
        with self._lock:
            chain = self._chains.setdefault(record.tenant_id, [])
            if (record.tenant_id, record.event_id) in self._events:
                return AppendResult.DUPLICATE_EVENT
            if record.sequence != len(chain) + 1:
                return AppendResult.SEQUENCE_TAKEN
            chain.append(record)
            self._events[(record.tenant_id, record.event_id)] = record
            return AppendResult.APPENDED

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None:
        return self._events.get((tenant_id, event_id))

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        with self._lock:
            chain = list(self._chains.get(tenant_id, []))
        yield from chain[after_sequence:]
