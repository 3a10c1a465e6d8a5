"""Appending events to the tenant's audit chain; reading and verifying it (the operators' side)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from backend.audit.chain import AuditRecord, ChainVerdict, verify_chain
from backend.audit.cursor import Cursor, filter_digest
from backend.audit.repository import AuditFilter, AuditRepository, Entry
from backend.common.auth import Principal, require_admin
from backend.common.clock import Clock
from backend.common.errors import forbidden, invalid
from contracts.events import EventEnvelope
from contracts.rest.observability import (
    AuditBrokenLink,
    AuditEventPage,
    AuditEventRecord,
    AuditReceipt,
    AuditReceipts,
    AuditVerification,
)

__all__ = ["AuditService", "check_envelopes"]


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


def _wire(record: AuditRecord) -> AuditEventRecord:
    return AuditEventRecord(
        sequence=record.sequence,
        event_id=record.event_id,
        received_at=record.received_at,
        prev_hash=record.prev_hash,
        hash=record.hash,
        event=record.event,
    )


class AuditService:
    def __init__(self, repository: AuditRepository, clock: Clock) -> None:
        self._repository = repository
        self._clock = clock

    def append(self, principal: Principal, envelopes: Sequence[EventEnvelope]) -> AuditReceipts:
        check_envelopes(principal, envelopes)
        received = self._clock.now()
        entries = [Entry(envelope.event_id, received, envelope.to_wire()) for envelope in envelopes]
        receipts = [
            AuditReceipt(
                event_id=done.record.event_id,
                sequence=done.record.sequence,
                hash=done.record.hash,
                duplicate=done.duplicate,
            )
            for done in self._repository.append_many(principal.tenant_id, entries)
        ]
        return AuditReceipts(accepted=sum(not r.duplicate for r in receipts), records=receipts)

    # ------------------------------------------------------------------ read side

    def events(
        self,
        principal: Principal,
        where: AuditFilter,
        *,
        limit: int,
        order: Literal["asc", "desc"] | None = None,
        cursor: str | None = None,
    ) -> AuditEventPage:
        """``GET /audit/events``: a page of the caller's tenant's records (administrators only)."""
        require_admin(principal, "read the audit log")
        return self.page(principal.tenant_id, where, limit=limit, order=order, cursor=cursor)

    def page(
        self,
        tenant_id: str,
        where: AuditFilter,
        *,
        limit: int,
        order: Literal["asc", "desc"] | None = None,
        cursor: str | None = None,
    ) -> AuditEventPage:
        """A page of ``tenant_id``'s records (for callers that already know who may read them)."""
        if where.since is not None and where.until is not None and where.since >= where.until:
            raise invalid("since must be before until", field="since")
        digest = filter_digest(where)
        descending = order != "asc"
        position: int | None = None
        if cursor is not None:
            given = Cursor.decode(cursor, digest)
            if order is not None and given.descending != descending:
                raise invalid("order differs from the order of the cursor's query", field="order")
            descending, position = given.descending, given.position
        page = self._repository.query(tenant_id, where, position=position, descending=descending, limit=limit)
        if descending:
            next_position = page.last_examined if page.more else None
        else:
            # In chain order a cursor is always given: it is where a poll for newer events starts.
            next_position = page.last_examined if page.last_examined is not None else (position or 0)
        return AuditEventPage(
            events=[_wire(record) for record in page.records],
            next_cursor=None if next_position is None else Cursor(descending, next_position, digest).encode(),
            has_more=page.more,
        )

    def newer(
        self, tenant_id: str, where: AuditFilter, after: int, limit: int
    ) -> tuple[list[AuditEventRecord], int, bool]:
        """Records matching ``where`` past sequence ``after`` (for following the log): the records,
        where the next call continues, and whether more are already there."""
        page = self._repository.query(tenant_id, where, position=after, descending=False, limit=limit)
        next_position = after if page.last_examined is None else page.last_examined
        return [_wire(record) for record in page.records], next_position, page.more

    def verify(self, tenant_id: str) -> ChainVerdict:
        return verify_chain(self._repository.records(tenant_id))

    def verification(self, tenant_id: str) -> AuditVerification:
        """The whole chain checked, in the wire form ``GET /audit/verify`` and the CLI answer with."""
        verdict = self.verify(tenant_id)
        broken = verdict.broken
        return AuditVerification(
            tenant_id=tenant_id,
            ok=verdict.ok,
            checked=verdict.checked,
            broken_at=verdict.broken_at,
            broken_link=None
            if broken is None
            else AuditBrokenLink(
                sequence=broken.sequence,
                event_id=broken.event_id,
                reason=broken.reason,
                problem=broken.problem,
                expected=broken.expected,
                found=broken.found,
            ),
            head_sequence=verdict.checked or None,
            head_hash=verdict.head_hash,
            verified_at=self._clock.now(),
        )

    def verify_for(self, principal: Principal) -> AuditVerification:
        """``GET /audit/verify``: the caller's tenant's chain (administrators only)."""
        require_admin(principal, "verify the audit log")
        return self.verification(principal.tenant_id)
