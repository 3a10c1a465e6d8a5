"""The audit chains in lists, one per tenant."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from backend.audit.chain import AuditRecord
from backend.audit.repository import Appended, AppendResult, AuditFilter, AuditPage, Entry, IndexedFields

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

    def append_many(self, tenant_id: str, entries: Sequence[Entry]) -> list[Appended]:
        appended: list[Appended] = []
        with self._lock:
            chain = self._chains.setdefault(tenant_id, [])
            for entry in entries:
                existing = self._events.get((tenant_id, entry.event_id))
                if existing is not None:
                    appended.append(Appended(existing, duplicate=True))
                    continue
                record = AuditRecord.next(
                    tenant_id, chain[-1] if chain else None, entry.event_id, entry.received_at, entry.event
                )
                chain.append(record)
                self._events[(tenant_id, entry.event_id)] = record
                appended.append(Appended(record, duplicate=False))
        return appended

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None:
        return self._events.get((tenant_id, event_id))

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        with self._lock:
            chain = list(self._chains.get(tenant_id, []))
        yield from chain[after_sequence:]

    def query(
        self, tenant_id: str, where: AuditFilter, *, position: int | None, descending: bool, limit: int
    ) -> AuditPage:
        with self._lock:
            chain = list(self._chains.get(tenant_id, []))
        if descending:
            end = len(chain) if position is None else max(0, min(position - 1, len(chain)))
            candidates = reversed(chain[:end])
        else:
            candidates = iter(chain[position or 0 :])
        found: list[AuditRecord] = []
        for record in candidates:
            if where.matches(IndexedFields.of(record)):
                if len(found) == limit:
                    return AuditPage(found, found[-1].sequence, more=True)
                found.append(record)
        return AuditPage(found, found[-1].sequence if found else None, more=False)
