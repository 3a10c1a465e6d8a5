"""A telemetry event as stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from backend.common.ids import parse_timestamp, timestamp

__all__ = ["TelemetryRecord"]


@dataclass(frozen=True, slots=True)
class TelemetryRecord:
    tenant_id: str
    event_id: str
    occurred_at: datetime
    received_at: datetime
    event: dict[str, Any]

    def to_document(self) -> dict[str, Any]:
        return {
            "tenantId": self.tenant_id,
            "eventId": self.event_id,
            "occurredAt": timestamp(self.occurred_at),
            "receivedAt": timestamp(self.received_at),
            "event": self.event,
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> TelemetryRecord:
        return cls(
            tenant_id=document["tenantId"],
            event_id=document["eventId"],
            occurred_at=parse_timestamp(document["occurredAt"]),
            received_at=parse_timestamp(document["receivedAt"]),
            event=document["event"],
        )
