"""The audit chains in DynamoDB: ``{env}-audit``, partition per tenant.

A record is item ``seq#<20-digit sequence>``; beside it a marker ``evt#<eventId>`` names the sequence
that holds the event. An append writes both in one transaction, each conditional on not existing yet:
two appends racing for one sequence number cannot both win (the chain never forks), and one eventId
can never be recorded twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from backend.audit.chain import AuditRecord
from backend.audit.repository import AppendResult
from backend.common.ids import timestamp
from backend.storage.aws.calls import code_of, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings

__all__ = ["DynamoAuditRepository"]


def _sequence_key(sequence: int) -> str:
    return f"seq#{sequence:020d}"


def _record(item: dict[str, Any]) -> AuditRecord:
    return AuditRecord.from_document(json.loads(item["document"]["S"]))


class DynamoAuditRepository:
    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._table = settings.table("audit")

    def head(self, tenant_id: str) -> AuditRecord | None:
        with failing_as_storage_error("reading the audit log"):
            items = self._db.query(
                TableName=self._table,
                KeyConditionExpression="tenantId = :tenant AND begins_with(sk, :seq)",
                ExpressionAttributeValues={":tenant": s(tenant_id), ":seq": s("seq#")},
                ScanIndexForward=False,
                Limit=1,
                ConsistentRead=True,
            ).get("Items", [])
        return _record(items[0]) if items else None

    def append(self, record: AuditRecord) -> AppendResult:
        received = s(timestamp(record.received_at))
        condition = "attribute_not_exists(sk)"
        entry = {
            "tenantId": s(record.tenant_id),
            "sk": s(_sequence_key(record.sequence)),
            "eventId": s(record.event_id),
            "createdAt": received,
            "updatedAt": received,
            "document": s(json.dumps(record.to_document(), separators=(",", ":"))),
        }
        marker = {
            "tenantId": s(record.tenant_id),
            "sk": s(f"evt#{record.event_id}"),
            "sequence": n(record.sequence),
            "createdAt": received,
            "updatedAt": received,
        }
        with failing_as_storage_error("appending to the audit log"):
            try:
                self._db.transact_write_items(
                    TransactItems=[
                        {"Put": {"TableName": self._table, "Item": entry, "ConditionExpression": condition}},
                        {"Put": {"TableName": self._table, "Item": marker, "ConditionExpression": condition}},
                    ]
                )
            except ClientError as exc:
                if code_of(exc) != "TransactionCanceledException":
                    raise
                reasons = [reason.get("Code") for reason in exc.response.get("CancellationReasons", [])]
                if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                    return AppendResult.DUPLICATE_EVENT
                if reasons and reasons[0] == "ConditionalCheckFailed":
                    return AppendResult.SEQUENCE_TAKEN
                raise
        return AppendResult.APPENDED

    def find_event(self, tenant_id: str, event_id: str) -> AuditRecord | None:
        with failing_as_storage_error("reading the audit log"):
            marker = self._db.get_item(
                TableName=self._table,
                Key={"tenantId": s(tenant_id), "sk": s(f"evt#{event_id}")},
                ConsistentRead=True,
            ).get("Item")
            if marker is None:
                return None
            item = self._db.get_item(
                TableName=self._table,
                Key={"tenantId": s(tenant_id), "sk": s(_sequence_key(int(marker["sequence"]["N"])))},
                ConsistentRead=True,
            ).get("Item")
        return None if item is None else _record(item)

    def records(self, tenant_id: str, after_sequence: int = 0) -> Iterator[AuditRecord]:
        with failing_as_storage_error("reading the audit log"):
            for item in paginate(
                self._db.query,
                TableName=self._table,
                KeyConditionExpression="tenantId = :tenant AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={
                    ":tenant": s(tenant_id),
                    ":low": s(_sequence_key(after_sequence + 1)),
                    ":high": s(_sequence_key(10**20 - 1)),
                },
                ConsistentRead=True,
            ):
                yield _record(item)
