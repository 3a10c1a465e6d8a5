"""Approval decisions in DynamoDB: ``{env}-approvals``, keyed by (sessionId, approvalId)."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from backend.approval.records import ApprovalRecord
from backend.common.ids import timestamp
from backend.storage.aws.calls import code_of, failing_as_storage_error, paginate, s
from backend.storage.aws.config import AwsSettings

__all__ = ["DynamoApprovalRepository"]


class DynamoApprovalRepository:
    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._table = settings.table("approvals")

    def put_if_absent(self, record: ApprovalRecord) -> ApprovalRecord | None:
        recorded = timestamp(record.recorded_at)
        item = {
            "sessionId": s(record.session_id),
            "approvalId": s(record.approval_id),
            "tenantId": s(record.tenant_id),
            "decidedAt": s(timestamp(record.decision.decided_at)),
            "createdAt": s(recorded),
            "updatedAt": s(recorded),
            "document": s(json.dumps(record.to_document(), separators=(",", ":"))),
        }
        with failing_as_storage_error("storing the approval"):
            try:
                self._db.put_item(
                    TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(approvalId)"
                )
                return None
            except ClientError as exc:
                if code_of(exc) != "ConditionalCheckFailedException":
                    raise
            existing = self._db.get_item(
                TableName=self._table,
                Key={"sessionId": s(record.session_id), "approvalId": s(record.approval_id)},
                ConsistentRead=True,
            ).get("Item")
        return (
            None if existing is None else ApprovalRecord.from_document(json.loads(existing["document"]["S"]))
        )

    def list_by_session(self, tenant_id: str, session_id: str) -> list[ApprovalRecord]:
        with failing_as_storage_error("listing approvals"):
            items = list(
                paginate(
                    self._db.query,
                    TableName=self._table,
                    KeyConditionExpression="sessionId = :session",
                    FilterExpression="tenantId = :tenant",
                    ExpressionAttributeValues={":session": s(session_id), ":tenant": s(tenant_id)},
                    ConsistentRead=True,
                )
            )
        records = [ApprovalRecord.from_document(json.loads(item["document"]["S"])) for item in items]
        return sorted(records, key=lambda r: (r.decision.decided_at, r.approval_id))
