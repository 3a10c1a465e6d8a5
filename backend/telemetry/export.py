"""Telemetry to an OpenTelemetry collector: each envelope (seed 001 §6.3) one OTLP log record, sent
over OTLP/HTTP (protobuf) by the OpenTelemetry SDK's batching processor and exporter.

Why log records and not metrics or spans: an envelope is one event at one moment — OpenTelemetry's
*event* is exactly a log record with an ``event_name`` — and logs carry it whole. The record keeps the
event's own time (a metric point is stamped when the SDK collects it, not when the LLM call happened),
its IDs (a session or task ID as a metric attribute would be a new time series per session), and its
payload whatever the producer put in it, so a new payload field reaches the collector without a
change here; the collector can still derive metrics from the records (its count and sum connectors,
or a transform). Spans would need a start, an end and a parent the envelopes do not have.

Mapping: ``event_name`` = ``eventType``; timestamp = ``timestamp``, observed = when the service
received it; severity from ``severity``; body = ``payload`` (a map, nested values kept, nulls left
out); attributes ``cowork.event_id``, ``cowork.tenant_id``, ``cowork.user_id``,
``cowork.workspace_id``, ``cowork.session_id``, ``cowork.task_id``, ``cowork.step_id``,
``cowork.component``, ``cowork.bounded_context``; resource ``service.name=cowork-telemetry``.

The SDK is imported only when an exporter is made (a configured endpoint): 30 ms measured (the SDK,
protobuf and requests, on top of what the backend imports anyway) that a backend without a collector
— the desktop's embedded one — never pays. Export never blocks ingest:
records queue in memory (bounded; the oldest beyond it are dropped and logged by the SDK) and leave in
batches from the SDK's thread. They are stored as well, so a collector that is down loses no record
the store keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from backend.telemetry.records import TelemetryRecord

__all__ = ["LOGS_PATH", "EventExporter", "OtlpLogExporter", "logs_endpoint"]

LOGS_PATH = "/v1/logs"
_SEVERITIES = {"debug": 5, "info": 9, "warning": 13, "error": 17, "critical": 21}
"""Seed severity → OpenTelemetry SeverityNumber (DEBUG, INFO, WARN, ERROR, FATAL)."""
_ATTRIBUTES = {
    "eventId": "cowork.event_id",
    "tenantId": "cowork.tenant_id",
    "userId": "cowork.user_id",
    "workspaceId": "cowork.workspace_id",
    "sessionId": "cowork.session_id",
    "taskId": "cowork.task_id",
    "stepId": "cowork.step_id",
    "component": "cowork.component",
    "boundedContext": "cowork.bounded_context",
}


class EventExporter(Protocol):
    def export(self, records: Sequence[TelemetryRecord]) -> None:
        """Hand the records over for sending; never blocks on the network."""
        ...

    def flush(self, timeout_s: float) -> bool:
        """Send what is queued; False if that did not finish within ``timeout_s``."""
        ...

    def close(self) -> None: ...


def logs_endpoint(base: str) -> str:
    """``COWORK_OTLP_ENDPOINT`` is the collector's base URL (``http://collector:4318``), as
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is; the logs signal goes to ``/v1/logs`` under it."""
    trimmed = base.rstrip("/")
    return trimmed if trimmed.endswith(LOGS_PATH) else trimmed + LOGS_PATH


def _any_value(value: Any) -> Any:
    """A JSON value as an OpenTelemetry AnyValue: nulls have no AnyValue, so they are left out."""
    if isinstance(value, Mapping):
        return {str(k): _any_value(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_any_value(v) for v in value if v is not None]
    return value


def _nanoseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000) * 1000


class OtlpLogExporter:
    """Envelopes → OTLP/HTTP log records at ``endpoint`` (the full ``…/v1/logs`` URL)."""

    def __init__(
        self,
        endpoint: str,
        *,
        timeout_s: float = 10.0,
        headers: Mapping[str, str] | None = None,
        schedule_delay_ms: int = 1000,
        max_queue_size: int = 20_000,
    ) -> None:
        # Imported here, not at the top: see the module's docstring.
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        self.endpoint = endpoint
        self._provider = LoggerProvider(resource=Resource.create({"service.name": "cowork-telemetry"}))
        exporter = OTLPLogExporter(endpoint=endpoint, timeout=timeout_s, headers=dict(headers or {}) or None)
        self._provider.add_log_record_processor(
            BatchLogRecordProcessor(
                exporter,
                schedule_delay_millis=schedule_delay_ms,
                max_queue_size=max_queue_size,
                max_export_batch_size=512,
            )
        )
        self._logger = self._provider.get_logger("cowork.telemetry")

    def export(self, records: Sequence[TelemetryRecord]) -> None:
        from opentelemetry._logs import SeverityNumber

        for record in records:
            event = record.event
            severity = str(event.get("severity", "info"))
            self._logger.emit(
                timestamp=_nanoseconds(record.occurred_at),
                observed_timestamp=_nanoseconds(record.received_at),
                severity_number=SeverityNumber(_SEVERITIES.get(severity, 9)),
                severity_text=severity.upper(),
                body=_any_value(event.get("payload") or {}),
                attributes={
                    name: str(event[field])
                    for field, name in _ATTRIBUTES.items()
                    if event.get(field) is not None
                },
                event_name=str(event.get("eventType", "")),
            )

    def flush(self, timeout_s: float) -> bool:
        return bool(self._provider.force_flush(int(timeout_s * 1000)))

    def close(self) -> None:
        self._provider.shutdown()
