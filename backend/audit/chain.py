"""The per-tenant hash chain that makes the audit log tamper-evident.

Each record stores its ``sequence`` (1, 2, 3, … per tenant), ``prevHash`` (the previous record's hash;
64 zeros for the first) and ``hash = sha256(prevHash ‖ canonical(record))`` where the canonical record
is the sorted-key, whitespace-free JSON of ``{sequence, eventId, receivedAt, event}``. Changing,
removing or reordering any record breaks the link at that point, which :func:`verify_chain` reports.
Removing the newest records leaves a shorter chain that still verifies: only a copy of the head kept
elsewhere (an archive, a receipt's hash) can show that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from backend.common.ids import parse_timestamp, timestamp

__all__ = ["GENESIS", "AuditRecord", "BrokenLink", "ChainVerdict", "record_hash", "verify_chain"]

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
    readable: bool = True
    """False for a stored record whose document can no longer be read as one (damaged, or edited into
    something else): it never links up, and verification names it."""

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
    def from_stored(cls, text: str, tenant_id: str, sequence: int, event_id: str) -> AuditRecord:
        """The record a store keeps as ``text`` under (``tenant_id``, ``sequence``, ``event_id``); one
        whose text is not a record any more is returned unreadable, so that reading the log (and
        verifying it) goes on past it."""
        try:
            return cls.from_document(json.loads(text))
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls(
                tenant_id, sequence, event_id, datetime(1970, 1, 1, tzinfo=UTC), {}, "", "", readable=False
            )

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
class BrokenLink:
    """Where and how a chain first fails to link up."""

    sequence: int
    """The position in the chain (1, 2, 3, …) where the link breaks."""
    event_id: str | None
    """The eventId of the record found at that position; None when it is missing."""
    reason: Literal["missing", "out_of_order", "unreadable", "prev_hash", "hash"]
    """``missing`` (a gap), ``out_of_order`` (a sequence number again or backwards), ``unreadable``
    (what is stored is not a record any more), ``prev_hash`` (the record does not point at the one
    before it) or ``hash`` (its content no longer matches the hash it was written with)."""
    problem: str
    """The same, said in a sentence."""
    expected: str | None = None
    found: str | None = None
    """What the chain needed there and what the record holds (sequence numbers or hashes)."""


@dataclass(frozen=True, slots=True)
class ChainVerdict:
    ok: bool
    checked: int
    """Records that linked up before the first broken link (all of them when ``ok``)."""
    broken: BrokenLink | None = None
    head_hash: str | None = None
    """The hash of the last record that linked up (record ``checked``)."""

    @property
    def broken_at(self) -> int | None:
        """The sequence number of the first record that does not link up."""
        return None if self.broken is None else self.broken.sequence

    @property
    def problem(self) -> str | None:
        return None if self.broken is None else self.broken.problem


def verify_chain(records: Iterable[AuditRecord]) -> ChainVerdict:
    """Walk records in sequence order; the first broken link (gap, wrong prevHash, wrong hash) wins."""
    expected_sequence = 1
    prev_hash = GENESIS
    checked = 0
    for record in records:
        if not record.readable and record.sequence == expected_sequence:
            link = BrokenLink(
                record.sequence,
                record.event_id,
                "unreadable",
                "the stored record cannot be read: it was damaged or changed into something else",
            )
            return ChainVerdict(False, checked, link, _head(checked, prev_hash))
        if record.sequence != expected_sequence:
            if record.sequence > expected_sequence:
                link = BrokenLink(
                    expected_sequence,
                    None,
                    "missing",
                    f"record {expected_sequence} is missing: after record {expected_sequence - 1} comes "
                    f"record {record.sequence} (eventId {record.event_id})",
                    expected=str(expected_sequence),
                    found=str(record.sequence),
                )
            else:
                link = BrokenLink(
                    expected_sequence,
                    record.event_id,
                    "out_of_order",
                    f"the record at position {expected_sequence} says it is record {record.sequence}",
                    expected=str(expected_sequence),
                    found=str(record.sequence),
                )
            return ChainVerdict(False, checked, link, _head(checked, prev_hash))
        if record.prev_hash != prev_hash:
            link = BrokenLink(
                record.sequence,
                record.event_id,
                "prev_hash",
                "prevHash does not match the previous record's hash",
                expected=prev_hash,
                found=record.prev_hash,
            )
            return ChainVerdict(False, checked, link, _head(checked, prev_hash))
        actual = record_hash(
            prev_hash, record.sequence, record.event_id, timestamp(record.received_at), record.event
        )
        if actual != record.hash:
            link = BrokenLink(
                record.sequence,
                record.event_id,
                "hash",
                "the record was changed after it was written: its content no longer matches its hash",
                expected=actual,
                found=record.hash,
            )
            return ChainVerdict(False, checked, link, _head(checked, prev_hash))
        checked += 1
        expected_sequence += 1
        prev_hash = record.hash
    return ChainVerdict(True, checked, None, _head(checked, prev_hash))


def _head(checked: int, prev_hash: str) -> str | None:
    return prev_hash if checked else None
