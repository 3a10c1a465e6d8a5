"""The Audit Service's storage interface: append and read, never update or delete."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Protocol

from backend.audit.chain import AuditRecord

__all__ = ["AppendResult", "AuditRepository"]


class AppendResult(Enum):
    APPENDED = "appended"
    SEQUENCE_TAKEN = "sequence_taken"
    """Another append got this sequence number first: re-read the head and try again."""
    DUPLICATE_EVENT = "duplicate_event"
    """This tenant's log already holds the eventId."""


class AuditRepository(Protocol):
    def head(self, tenant_id: str) -> AuditRecord | None:
        """The tenant's latest record (highest sequence)."""
        ...

    def append(self, record: AuditRecord) -> AppendResult:
        """Write ``record`` only if its sequence number and its eventId are both unused in the tenant
        (one conditional write: the chain can never fork)."""
        ...

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None: ...

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        """The tenant's records in sequence order, from ``after_sequence + 1``."""
        ...
