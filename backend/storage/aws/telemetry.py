"""Telemetry in DynamoDB: ``{env}-telemetry``, keyed by (tenantId, eventId), expired by ``ttl``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from backend.common.ids import timestamp
from backend.storage.aws.calls import code_of, epoch, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings
from backend.telemetry.records import TelemetryRecord

__all__ = ["DynamoTelemetryRepository"]


class DynamoTelemetryRepository:
    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._table = settings.table("telemetry")
        self._retention = settings.telemetry_retention

    def put_many(self, records: list[TelemetryRecord]) -> list[TelemetryRecord]:
        added: list[TelemetryRecord] = []
        with failing_as_storage_error("storing telemetry"):
            for record in records:
                received = s(timestamp(record.received_at))
                item = {
                    "tenantId": s(record.tenant_id),
                    "eventId": s(record.event_id),
                    "createdAt": received,
                    "updatedAt": received,
                    "document": s(json.dumps(record.to_document(), separators=(",", ":"))),
                    "ttl": n(epoch(record.received_at, self._retention)),
                }
                try:
                    self._db.put_item(
                        TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(eventId)"
                    )
                    added.append(record)
                except ClientError as exc:
                    if code_of(exc) != "ConditionalCheckFailedException":
                        raise
        return added

    def list(self, tenant_id: str, limit: int = 1000) -> list[TelemetryRecord]:
        with failing_as_storage_error("reading telemetry"):
            items = list(
                paginate(
                    self._db.query,
                    TableName=self._table,
                    KeyConditionExpression="tenantId = :tenant",
                    ExpressionAttributeValues={":tenant": s(tenant_id)},
                )
            )
        records = [TelemetryRecord.from_document(json.loads(item["document"]["S"])) for item in items]
        return sorted(records, key=lambda r: (r.received_at, r.occurred_at), reverse=True)[:limit]

    def prune(self, received_before: datetime, max_rows: int) -> int:
        # DynamoDB's TTL removes expired items itself.
        return 0
