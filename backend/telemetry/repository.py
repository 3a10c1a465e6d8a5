"""The Telemetry Service's storage interface."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from backend.telemetry.records import TelemetryRecord

__all__ = ["TelemetryRepository"]


class TelemetryRepository(Protocol):
    def put_many(self, records: list[TelemetryRecord]) -> list[TelemetryRecord]:
        """Store the records, skipping eventIds the tenant already has (and repeats within
        ``records``); the ones that were new, in order."""
        ...

    def list(self, tenant_id: str, limit: int = 1000) -> list[TelemetryRecord]:
        """The tenant's most recent records, newest first."""
        ...

    def prune(self, received_before: datetime, max_rows: int) -> int:
        """Drop records received before ``received_before`` and the oldest beyond ``max_rows``
        (stores that expire items themselves, like DynamoDB's TTL, may do nothing); how many went."""
        ...
