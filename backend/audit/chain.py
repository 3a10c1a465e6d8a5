"""The per-tenant hash chain that makes the audit log tamper-evident.

Each record stores its ``sequence`` (1, 2, 3, … per tenant), ``prevHash`` (the previous record's hash;
64 zeros for the first) and ``hash = sha256(prevHash ‖ canonical(record))`` where the canonical record
is the sorted-key, whitespace-free JSON of ``{sequence, eventId, receivedAt, event}``. Changing,
removing or reordering any record breaks the link at that point, which :func:`verify_chain` reports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.common.ids import parse_timestamp, timestamp

__all__ = ["GENESIS", "AuditRecord", "ChainVerdict", "record_hash", "verify_chain"]

GENESIS = "0" * 64


def record_hash(prev_hash: str, sequence: int, event_id: str, received_at: str, event: dict[str, Any]) -> str:
    canonical = json.dumps(
        {"sequence": sequence, "eventId": event_id, "receivedAt": received_at, "event": event},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(prev_hash.encode("ascii") + canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class AuditRecord:
    tenant_id: str
    sequence: int
    event_id: str
    received_at: datetime
    event: dict[str, Any]
    """The event envelope in wire form, as received."""
    prev_hash: str
    hash: str

    @classmethod
    def next(
        cls,
        tenant_id: str,
        previous: AuditRecord | None,
        event_id: str,
        received_at: datetime,
        event: dict[str, Any],
    ) -> AuditRecord:
        sequence = 1 if previous is None else previous.sequence + 1
        prev_hash = GENESIS if previous is None else previous.hash
        digest = record_hash(prev_hash, sequence, event_id, timestamp(received_at), event)
        return cls(tenant_id, sequence, event_id, received_at, event, prev_hash, digest)

    def to_document(self) -> dict[str, Any]:
        return {
            "tenantId": self.tenant_id,
            "sequence": self.sequence,
            "eventId": self.event_id,
            "receivedAt": timestamp(self.received_at),
            "event": self.event,
            "prevHash": self.prev_hash,
            "hash": self.hash,
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> AuditRecord:
        return cls(
            tenant_id=document["tenantId"],
            sequence=int(document["sequence"]),
            event_id=document["eventId"],
            received_at=parse_timestamp(document["receivedAt"]),
            event=document["event"],
            prev_hash=document["prevHash"],
            hash=document["hash"],
        )


@dataclass(frozen=True, slots=True)
class ChainVerdict:
    ok: bool
    checked: int
    broken_at: int | None = None
    """The sequence number of the first record that does not link up."""
    problem: str | None = None


def verify_chain(records: Iterable[AuditRecord]) -> ChainVerdict:
    """Walk records in sequence order; the first broken link (gap, wrong prevHash, wrong hash) wins."""
    expected_sequence = 1
    prev_hash = GENESIS
    checked = 0
    for record in records:
        if record.sequence != expected_sequence:
            return ChainVerdict(False, checked, expected_sequence, f"record {expected_sequence} is missing")
        if record.prev_hash != prev_hash:
            return ChainVerdict(
                False, checked, record.sequence, "prevHash does not match the previous record"
            )
        actual = record_hash(
            prev_hash, record.sequence, record.event_id, timestamp(record.received_at), record.event
        )
        if actual != record.hash:
            return ChainVerdict(
                False, checked, record.sequence, "the record was changed after it was written"
            )
        checked += 1
        expected_sequence += 1
        prev_hash = record.hash
    return ChainVerdict(True, checked)
