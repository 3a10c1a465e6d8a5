"""Ingesting telemetry envelopes (seed 001 §6.3), idempotent on eventId, bounded in time and size;
exported to an OpenTelemetry collector when one is configured (:mod:`backend.telemetry.export`), and
the tokens runtimes report counted against the tenant's daily quota (:mod:`backend.common.quotas`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from backend.common.auth import Principal
from backend.common.clock import Clock
from backend.common.errors import forbidden
from backend.common.quotas import Quotas
from backend.common.settings import Settings
from backend.telemetry.export import EventExporter
from backend.telemetry.records import TelemetryRecord
from backend.telemetry.repository import TelemetryRepository
from contracts.events import EventEnvelope, EventType
from contracts.rest.observability import TelemetryReceipt

__all__ = ["TOKEN_FIELDS", "TelemetryService", "reported_tokens"]

logger = logging.getLogger(__name__)

_PRUNE_EVERY = 5_000
TOKEN_FIELDS = ("inputTokens", "outputTokens")
"""What an ``llm_request_completed`` payload reports that counts against ``tokensPerDay``: the
session budget's own measure (``sessionTokensUsed``: input + output of every call; prompt-cache
tokens are reported apart and not counted)."""
_MAX_TOKENS_PER_EVENT = 10**9
"""One LLM call cannot use more; a larger figure is not a count and is ignored."""


def reported_tokens(event: dict[str, Any]) -> int:
    """The tokens one stored envelope reports (0 for other event types or malformed figures)."""
    if event.get("eventType") != EventType.LLM_REQUEST_COMPLETED.value:
        return 0
    payload = event.get("payload")
    if not isinstance(payload, dict):
        return 0
    total = 0
    for field in TOKEN_FIELDS:
        value = payload.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_TOKENS_PER_EVENT:
            total += value
    return total


class TelemetryService:
    def __init__(
        self,
        repository: TelemetryRepository,
        clock: Clock,
        settings: Settings,
        *,
        quotas: Quotas | None = None,
        exporter: EventExporter | None = None,
    ) -> None:
        self._repository = repository
        self._clock = clock
        self._settings = settings
        self._quotas = quotas
        self._exporter = exporter
        self._since_prune = 0

    @property
    def exporter(self) -> EventExporter | None:
        return self._exporter

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
        # Only records new to the store are counted and exported: a retried batch is neither.
        added = self._repository.put_many(records)
        exceeded = None
        if self._quotas is not None:
            exceeded = self._quotas.record_tokens(
                principal.tenant_id, sum(reported_tokens(r.event) for r in added)
            )
        if self._exporter is not None and added:
            try:
                self._exporter.export(added)
            except Exception:  # a boundary: the events are stored, export must not fail the request
                logger.exception("telemetry export failed; the events are stored")
        self._since_prune += len(added)
        if self._since_prune >= _PRUNE_EVERY:
            self._since_prune = 0
            self.prune()
        return TelemetryReceipt(accepted=len(added), quota_exceeded=exceeded)

    def prune(self) -> int:
        cutoff = self._clock.now() - self._settings.telemetry_retention
        return self._repository.prune(cutoff, self._settings.telemetry_max_rows)

    def close(self) -> None:
        """Send what the exporter still holds and stop it."""
        if self._exporter is not None:
            self._exporter.close()
