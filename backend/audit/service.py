"""Appending events to the tenant's audit chain, and verifying it."""

from __future__ import annotations

from collections.abc import Sequence

from backend.audit.chain import AuditRecord, ChainVerdict, verify_chain
from backend.audit.repository import AppendResult, AuditRepository
from backend.common.auth import Principal
from backend.common.clock import Clock
from backend.common.errors import StorageError, forbidden
from contracts.events import EventEnvelope
from contracts.rest.observability import AuditReceipt, AuditReceipts

__all__ = ["AuditService", "check_envelopes"]

# Concurrent appends race for the next sequence number; each loser re-reads the head. Bounded so a
# pathological store cannot spin a request forever.
_MAX_ATTEMPTS = 200


def check_envelopes(principal: Principal, envelopes: Sequence[EventEnvelope]) -> None:
    """The envelope names its tenant and user (seed 001 §6.3); they must be the caller's."""
    for index, envelope in enumerate(envelopes):
        if envelope.tenant_id != principal.tenant_id:
            raise forbidden(
                "An event can only be recorded for the caller's own tenant", field=f"[{index}].tenantId"
            )
        if envelope.user_id != principal.user_id:
            raise forbidden(
                "An event can only be recorded for the caller's own user", field=f"[{index}].userId"
            )


class AuditService:
    def __init__(self, repository: AuditRepository, clock: Clock) -> None:
        self._repository = repository
        self._clock = clock

    def append(self, principal: Principal, envelopes: Sequence[EventEnvelope]) -> AuditReceipts:
        check_envelopes(principal, envelopes)
        receipts = [self._append_one(principal.tenant_id, envelope) for envelope in envelopes]
        return AuditReceipts(accepted=sum(not r.duplicate for r in receipts), records=receipts)

    def _append_one(self, tenant_id: str, envelope: EventEnvelope) -> AuditReceipt:
        event = envelope.to_wire()
        for _ in range(_MAX_ATTEMPTS):
            existing = self._repository.find_event(tenant_id, envelope.event_id)
            if existing is not None:
                return AuditReceipt(
                    event_id=existing.event_id, sequence=existing.sequence, hash=existing.hash, duplicate=True
                )
            record = AuditRecord.next(
                tenant_id, self._repository.head(tenant_id), envelope.event_id, self._clock.now(), event
            )
            result = self._repository.append(record)
            if result is AppendResult.APPENDED:
                return AuditReceipt(event_id=record.event_id, sequence=record.sequence, hash=record.hash)
        raise StorageError("The audit log is too busy; retry")

    def verify(self, tenant_id: str) -> ChainVerdict:
        return verify_chain(self._repository.records(tenant_id))
