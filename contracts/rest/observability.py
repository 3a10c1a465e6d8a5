"""Audit and Telemetry Service payloads (seed 001 §6.3).

``POST /audit/events`` and ``POST /telemetry/events`` take one
:class:`contracts.events.EventEnvelope` or a JSON array of them (at most 500). The envelope's
``tenantId`` and ``userId`` must be the caller's (403 otherwise). Both are idempotent on ``eventId``.
The audit log is append-only — no route updates or deletes a record — and each tenant's records form a
hash chain: ``hash = sha256(prevHash ‖ canonical record)``, so any change is detectable.
"""

from __future__ import annotations

from pydantic import Field

from contracts._base import WireModel

__all__ = ["AuditReceipt", "AuditReceipts", "TelemetryReceipt"]


class AuditReceipt(WireModel):
    event_id: str
    sequence: int = Field(ge=1)
    hash: str
    duplicate: bool = False
    """True when this ``eventId`` was already in the log; the first record's place is returned."""


class AuditReceipts(WireModel):
    accepted: int = Field(ge=0)
    records: list[AuditReceipt]


class TelemetryReceipt(WireModel):
    accepted: int = Field(ge=0)
