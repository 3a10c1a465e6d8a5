"""Ingesting telemetry envelopes (seed 001 §6.3), idempotent on eventId, bounded in time and size."""

from __future__ import annotations

from collections.abc import Sequence

from backend.common.auth import Principal
from backend.common.clock import Clock
from backend.common.errors import forbidden
from backend.common.settings import Settings
from backend.telemetry.records import TelemetryRecord
from backend.telemetry.repository import TelemetryRepository
from contracts.events import EventEnvelope
from contracts.rest.observability import TelemetryReceipt

__all__ = ["TelemetryService"]

_PRUNE_EVERY = 5_000


class TelemetryService:
    def __init__(self, repository: TelemetryRepository, clock: Clock, settings: Settings) -> None:
        self._repository = repository
        self._clock = clock
        self._settings = settings
        self._since_prune = 0

    def ingest(self, principal: Principal, envelopes: Sequence[EventEnvelope]) -> TelemetryReceipt:
        for index, envelope in enumerate(envelopes):
            if envelope.tenant_id != principal.tenant_id or envelope.user_id != principal.user_id:
                field = "tenantId" if envelope.tenant_id != principal.tenant_id else "userId"
                raise forbidden(
                    "Events can only be recorded for the caller's own tenant and user",
                    field=f"[{index}].{field}",
                )
        now = self._clock.now()
        records = [
            TelemetryRecord(principal.tenant_id, e.event_id, e.timestamp, now, e.to_wire()) for e in envelopes
        ]
        accepted = self._repository.put_many(records)
        self._since_prune += accepted
        if self._since_prune >= _PRUNE_EVERY:
            self._since_prune = 0
            self.prune()
        return TelemetryReceipt(accepted=accepted)

    def prune(self) -> int:
        cutoff = self._clock.now() - self._settings.telemetry_retention
        return self._repository.prune(cutoff, self._settings.telemetry_max_rows)
