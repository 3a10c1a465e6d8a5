"""Audit and Telemetry Service payloads (seed 001 §6.3).

Ingest — ``POST /audit/events`` (201 → :class:`AuditReceipts`) and ``POST /telemetry/events``
(202 → :class:`TelemetryReceipt`) take one :class:`contracts.events.EventEnvelope` or a JSON array of
1-500 of them, each at most 64 KiB serialised. The envelope's ``tenantId`` and ``userId`` must be the
caller's (403 naming ``[i].tenantId`` otherwise, and nothing of the batch is recorded). Both are
idempotent on ``eventId``: a retried batch records nothing twice (its audit receipts say
``duplicate: true`` with the first record's place in the chain). The audit log is append-only — no
route updates or deletes a record — and each tenant's records form a hash chain:
``hash = sha256(prevHash ‖ canonical record)``, so any change is detectable.

Read side, for a tenant's administrators (a token with the ``admin`` scope; others get 403
``PERMISSION_DENIED``); only the caller's own tenant is ever read:

* ``GET /audit/events`` → :class:`AuditEventPage`. Query: ``workspaceId``, ``sessionId``, ``userId``,
  ``eventType`` (repeatable: any of them), ``since`` (the event's ``timestamp`` at or after) and
  ``until`` (before), all optional and combined with AND; ``limit`` (1-500, default 100); ``order``
  ``desc`` (newest first, the default) or ``asc``; ``cursor`` from the previous page (with the same
  filters). A page may hold fewer than ``limit`` events and still have a ``nextCursor``: follow it
  while ``hasMore``. In ``asc`` order ``nextCursor`` is always given, so a client can poll it for
  events that arrive later.
* ``GET /audit/verify`` → :class:`AuditVerification`: the whole chain checked, the first broken link
  named.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from contracts._base import UtcDatetime, WireModel
from contracts.errors import ErrorShape

__all__ = [
    "AuditBrokenLink",
    "AuditEventPage",
    "AuditEventRecord",
    "AuditReceipt",
    "AuditReceipts",
    "AuditVerification",
    "TelemetryReceipt",
]


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
    """Events recorded by this request (a retried event is not counted again)."""
    quota_exceeded: ErrorShape | None = None
    """Present when the LLM tokens reported so far have used up the tenant's ``tokensPerDay``: the
    ``RATE_LIMITED`` refusal new sessions and resumes now get (``details``: ``quota``, ``limit``,
    ``used``, ``retryAfterSeconds``, ``retryAt``). The events were recorded all the same; a runtime
    should make no further LLM calls until ``retryAt``."""


class AuditEventRecord(WireModel):
    """One record of the chain: the event exactly as recorded, and its place in the chain."""

    sequence: int = Field(ge=1)
    event_id: str
    received_at: UtcDatetime
    prev_hash: str
    hash: str
    event: dict[str, Any]
    """The seed 001 §6.3 envelope as it was received (what the hash covers), unvalidated on the way
    out so that a record changed in the store is shown as it now is."""


class AuditEventPage(WireModel):
    events: list[AuditEventRecord]
    next_cursor: str | None = None
    """Opaque; pass it back as ``cursor`` (with the same filters) for the next page."""
    has_more: bool
    """Whether events past this page (in its order) already exist."""


class AuditBrokenLink(WireModel):
    """The first place where the chain does not link up."""

    sequence: int = Field(ge=1)
    """The position in the chain (1, 2, 3, …)."""
    event_id: str | None = None
    """The eventId of the record at that position; absent when the record is missing."""
    reason: Literal["missing", "out_of_order", "unreadable", "prev_hash", "hash"]
    problem: str
    expected: str | None = None
    """What the chain needed there: the sequence number, or the hash."""
    found: str | None = None
    """What the stored record holds instead."""


class AuditVerification(WireModel):
    tenant_id: str
    ok: bool
    checked: int = Field(ge=0)
    """Records that linked up (all of them when ``ok``; those before the broken link otherwise)."""
    broken_at: int | None = None
    """``brokenLink.sequence``, for a quick look."""
    broken_link: AuditBrokenLink | None = None
    head_sequence: int | None = None
    head_hash: str | None = None
    """The last record that linked up: keep it elsewhere to show later that no records were removed
    from the end (which a chain alone cannot show)."""
    verified_at: UtcDatetime
