"""The Audit Service's storage interface: append and read, never update or delete."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Protocol

from backend.audit.chain import AuditRecord
from backend.common.errors import StorageError
from backend.common.ids import parse_timestamp, timestamp

__all__ = [
    "AppendResult",
    "Appended",
    "AuditFilter",
    "AuditPage",
    "AuditRepository",
    "Entry",
    "IndexedFields",
    "append_one_at_a_time",
]

# Concurrent appends race for the next sequence number; each loser re-reads the head. Bounded so a
# pathological store cannot spin a request forever.
_MAX_ATTEMPTS = 200


class AppendResult(Enum):
    APPENDED = "appended"
    SEQUENCE_TAKEN = "sequence_taken"
    """Another append got this sequence number first: re-read the head and try again."""
    DUPLICATE_EVENT = "duplicate_event"
    """This tenant's log already holds the eventId."""


@dataclass(frozen=True, slots=True)
class Entry:
    """An event to append: its ID, when the service received it, and the envelope in wire form."""

    event_id: str
    received_at: datetime
    event: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Appended:
    record: AuditRecord
    """The record now in the chain: the one written, or the one that already held the eventId."""
    duplicate: bool


@dataclass(frozen=True, slots=True)
class IndexedFields:
    """What the read side filters records by, taken from the event as recorded."""

    workspace_id: str | None
    session_id: str | None
    user_id: str | None
    event_type: str | None
    occurred_at: str | None
    """The event's ``timestamp`` in the stores' sortable form (:func:`backend.common.ids.timestamp`)."""

    @classmethod
    def of(cls, record: AuditRecord) -> IndexedFields:
        event = record.event

        def text(name: str) -> str | None:
            value = event.get(name)
            return value if isinstance(value, str) else None

        moment = text("timestamp")
        try:
            occurred = None if moment is None else timestamp(parse_timestamp(moment))
        except ValueError:
            occurred = None
        return cls(text("workspaceId"), text("sessionId"), text("userId"), text("eventType"), occurred)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which records a query wants; every condition given must hold."""

    workspace_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    event_types: frozenset[str] = frozenset()
    since: datetime | None = None
    """The event's ``timestamp`` at or after this."""
    until: datetime | None = None
    """The event's ``timestamp`` before this."""

    def matches(self, fields: IndexedFields) -> bool:
        if self.workspace_id is not None and fields.workspace_id != self.workspace_id:
            return False
        if self.session_id is not None and fields.session_id != self.session_id:
            return False
        if self.user_id is not None and fields.user_id != self.user_id:
            return False
        if self.event_types and fields.event_type not in self.event_types:
            return False
        if self.since is not None and (
            fields.occurred_at is None or fields.occurred_at < timestamp(self.since)
        ):
            return False
        return self.until is None or (
            fields.occurred_at is not None and fields.occurred_at < timestamp(self.until)
        )


@dataclass(frozen=True, slots=True)
class AuditPage:
    records: list[AuditRecord]
    """Matching records in the order asked for."""
    last_examined: int | None
    """The sequence number of the last record the query looked at (matching or not), where the next
    page continues; None when it looked at none."""
    more: bool
    """Whether records beyond ``last_examined`` (in the order asked for) exist and were not looked at."""


class AuditRepository(Protocol):
    def head(self, tenant_id: str) -> AuditRecord | None:
        """The tenant's latest record (highest sequence)."""
        ...

    def append(self, record: AuditRecord) -> AppendResult:
        """Write ``record`` only if its sequence number and its eventId are both unused in the tenant
        (one conditional write: the chain can never fork)."""
        ...

    def append_many(self, tenant_id: str, entries: Sequence[Entry]) -> list[Appended]:
        """Link ``entries`` onto the chain in order, each unless its eventId is already in the log
        (an entry repeated within ``entries`` included). A store that can hold the chain's head for
        the whole batch does it in one step; the others use :func:`append_one_at_a_time`."""
        ...

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None: ...

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        """The tenant's records in sequence order, from ``after_sequence + 1``."""
        ...

    def query(
        self, tenant_id: str, where: AuditFilter, *, position: int | None, descending: bool, limit: int
    ) -> AuditPage:
        """Up to ``limit`` of the tenant's records matching ``where``, in sequence order (``descending``:
        newest first), strictly after ``position`` (before it when descending; None: from the start,
        or from the newest). A store may look at a bounded number of records per call and return fewer
        than ``limit`` with ``more`` set; callers continue from ``last_examined``."""
        ...


def append_one_at_a_time(
    repository: AuditRepository, tenant_id: str, entries: Sequence[Entry]
) -> list[Appended]:
    """Each entry its own conditional write, re-reading the head whenever another append took the
    sequence number first (the chain never forks: :meth:`AuditRepository.append`)."""
    appended: list[Appended] = []
    for entry in entries:
        for _ in range(_MAX_ATTEMPTS):
            existing = repository.find_event(tenant_id, entry.event_id)
            if existing is not None:
                appended.append(Appended(existing, duplicate=True))
                break
            record = AuditRecord.next(
                tenant_id, repository.head(tenant_id), entry.event_id, entry.received_at, entry.event
            )
            if repository.append(record) is AppendResult.APPENDED:
                appended.append(Appended(record, duplicate=False))
                break
        else:
            raise StorageError("The audit log is too busy; retry")
    return appended
