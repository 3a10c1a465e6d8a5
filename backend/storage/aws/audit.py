"""The audit chains in DynamoDB: ``{env}-audit``, partition per tenant.

A record is item ``seq#<20-digit sequence>``; beside it a marker ``evt#<eventId>`` names the sequence
that holds the event. An append writes both in one transaction, each conditional on not existing yet:
two appends racing for one sequence number cannot both win (the chain never forks), and one eventId
can never be recorded twice.

The read side's filters are attributes of the record items only (the markers have none, so the
indexes are sparse): ``workspaceKey``, ``sessionKey``, ``userKey`` and ``typeKey`` (``<tenant>#<value>``;
a tenant ID holds no ``#``) are the partition keys of the GSIs ``byWorkspace``, ``bySession``,
``byUser`` and ``byType``, each sorted by ``sk`` — chain order — and ``occurredAt`` (the event's
time) is filtered on. A query uses the index of its most selective filter and filters on the rest,
looking at no more than :data:`SCAN_BUDGET` items per call. Records written before these attributes
existed are found by unfiltered queries only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from botocore.exceptions import ClientError

from backend.audit.chain import AuditRecord
from backend.audit.repository import (
    Appended,
    AppendResult,
    AuditFilter,
    AuditPage,
    Entry,
    IndexedFields,
    append_one_at_a_time,
)
from backend.common.ids import timestamp
from backend.storage.aws.calls import code_of, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings

__all__ = ["AUDIT_INDEXES", "SCAN_BUDGET", "DynamoAuditRepository"]

SCAN_BUDGET = 5_000
"""Items one query call may look at (DynamoDB reads, and bills, the items a filter drops too)."""
AUDIT_INDEXES = {
    "bySession": "sessionKey",
    "byWorkspace": "workspaceKey",
    "byUser": "userKey",
    "byType": "typeKey",
}
"""GSI → its partition key, in the order a query prefers them (most selective first)."""
_LAST_SEQUENCE = 10**20 - 1


def _sequence_key(sequence: int) -> str:
    return f"seq#{sequence:020d}"


def _record(item: dict[str, Any]) -> AuditRecord:
    sequence = int(item["sk"]["S"].removeprefix("seq#"))
    return AuditRecord.from_stored(
        item["document"]["S"], item["tenantId"]["S"], sequence, item["eventId"]["S"]
    )


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
        fields = IndexedFields.of(record)
        for attribute, value in (
            ("workspaceKey", fields.workspace_id),
            ("sessionKey", fields.session_id),
            ("userKey", fields.user_id),
            ("typeKey", fields.event_type),
        ):
            if value is not None:
                entry[attribute] = s(f"{record.tenant_id}#{value}")
        if fields.occurred_at is not None:
            entry["occurredAt"] = s(fields.occurred_at)
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

    def append_many(self, tenant_id: str, entries: Sequence[Entry]) -> list[Appended]:
        # A DynamoDB transaction holds at most 100 items; each record is two (it and its marker),
        # and a batch is up to 500 events: one conditional transaction per event.
        return append_one_at_a_time(self, tenant_id, entries)

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
                    ":high": s(_sequence_key(_LAST_SEQUENCE)),
                },
                ConsistentRead=True,
            ):
                yield _record(item)

    def query(
        self, tenant_id: str, where: AuditFilter, *, position: int | None, descending: bool, limit: int
    ) -> AuditPage:
        keys = {
            "sessionKey": where.session_id,
            "workspaceKey": where.workspace_id,
            "userKey": where.user_id,
            "typeKey": next(iter(where.event_types)) if len(where.event_types) == 1 else None,
        }
        values: dict[str, Any] = {}
        names: dict[str, str] = {}
        index = next((name for name, key in AUDIT_INDEXES.items() if keys[key] is not None), None)
        if index is None:
            condition = "tenantId = :partition"
            values[":partition"] = s(tenant_id)
        else:
            partition_key = AUDIT_INDEXES[index]
            condition = f"{partition_key} = :partition"
            values[":partition"] = s(f"{tenant_id}#{keys[partition_key]}")
        low, high = 1, _LAST_SEQUENCE
        if position is not None:
            if descending:
                high = position - 1
            else:
                low = position + 1
        if low > high:
            return AuditPage([], None, more=False)
        condition += " AND sk BETWEEN :low AND :high"
        values[":low"] = s(_sequence_key(low))
        values[":high"] = s(_sequence_key(high))
        filters: list[str] = []
        for key, value in keys.items():
            if value is not None and (index is None or AUDIT_INDEXES[index] != key):
                filters.append(f"{key} = :{key}")
                values[f":{key}"] = s(f"{tenant_id}#{value}")
        if len(where.event_types) > 1:
            placeholders = []
            for number, event_type in enumerate(sorted(where.event_types)):
                placeholders.append(f":type{number}")
                values[f":type{number}"] = s(f"{tenant_id}#{event_type}")
            filters.append(f"typeKey IN ({', '.join(placeholders)})")
        if where.since is not None:
            filters.append("#occurred >= :since")
            values[":since"] = s(timestamp(where.since))
        if where.until is not None:
            filters.append("#occurred < :until")
            values[":until"] = s(timestamp(where.until))
        if where.since is not None or where.until is not None:
            names["#occurred"] = "occurredAt"
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": not descending,
        }
        if index is None:
            request["ConsistentRead"] = True  # GSIs offer eventually consistent reads only
        else:
            request["IndexName"] = index
        if filters:
            request["FilterExpression"] = " AND ".join(filters)
        if names:
            request["ExpressionAttributeNames"] = names
        found: list[AuditRecord] = []
        examined = 0
        with failing_as_storage_error("reading the audit log"):
            while True:
                # Without filters every item read is a match, so one more than asked says whether
                # there are more; with filters, pages as large as the budget left allows.
                request["Limit"] = min(SCAN_BUDGET - examined, 1000) if filters else limit + 1 - len(found)
                page = self._db.query(**request)
                examined += int(page.get("ScannedCount", 0))
                for item in page.get("Items", []):
                    if len(found) == limit:
                        return AuditPage(found, found[-1].sequence, more=True)
                    found.append(_record(item))
                last = page.get("LastEvaluatedKey")
                if not last:
                    return AuditPage(found, found[-1].sequence if found else None, more=False)
                if examined >= SCAN_BUDGET:
                    return AuditPage(found, int(last["sk"]["S"].removeprefix("seq#")), more=True)
                request["ExclusiveStartKey"] = last
