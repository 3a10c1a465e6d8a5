"""Sessions in DynamoDB: ``{env}-sessions``, keyed by sessionId; GSIs byWorkspace and byOwner (a user's
sessions by ``expiresAt``, for the ``sessionsPerUser`` quota)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from backend.common.ids import timestamp
from backend.session.records import TERMINAL, SessionRecord
from backend.session.repository import SessionOwnership
from backend.storage.aws.calls import code_of, epoch, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings

__all__ = ["DynamoSessionRepository"]

_NAMES = {"#tenant": "tenantId", "#revision": "revision"}


def _owner_key(tenant_id: str, user_id: str) -> str:
    # Tenant IDs cannot contain "/", so the split point is unambiguous.
    return f"{tenant_id}/{user_id}"


class DynamoSessionRepository:
    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._table = settings.table("sessions")
        self._retention = settings.session_retention

    def _item(self, record: SessionRecord) -> dict[str, Any]:
        return {
            "sessionId": s(record.session_id),
            "tenantId": s(record.tenant_id),
            "workspaceId": s(record.workspace_id),
            "createdAt": s(timestamp(record.created_at)),
            "updatedAt": s(timestamp(record.updated_at)),
            "ownerKey": s(_owner_key(record.tenant_id, record.user_id)),
            "expiresAt": s(timestamp(record.expires_at)),
            "revision": n(record.revision),
            "document": s(json.dumps(record.to_document(), separators=(",", ":"))),
            "ttl": n(epoch(record.expires_at, self._retention)),
        }

    def create(self, record: SessionRecord) -> None:
        with failing_as_storage_error("storing the session"):
            self._db.put_item(
                TableName=self._table,
                Item=self._item(record),
                ConditionExpression="attribute_not_exists(sessionId)",
            )

    def _item_in(self, tenant_id: str, session_id: str) -> dict[str, Any] | None:
        with failing_as_storage_error("reading the session"):
            item: dict[str, Any] | None = self._db.get_item(
                TableName=self._table, Key={"sessionId": s(session_id)}, ConsistentRead=True
            ).get("Item")
        if item is None or item["tenantId"]["S"] != tenant_id:
            return None
        return item

    def get(self, tenant_id: str, session_id: str) -> SessionRecord | None:
        item = self._item_in(tenant_id, session_id)
        return None if item is None else SessionRecord.from_document(json.loads(item["document"]["S"]))

    def ownership(self, tenant_id: str, session_id: str) -> SessionOwnership | None:
        item = self._item_in(tenant_id, session_id)
        if item is None:
            return None
        return SessionOwnership(json.loads(item["document"]["S"])["userId"], item["workspaceId"]["S"])

    def replace(self, record: SessionRecord, expected_revision: int) -> bool:
        with failing_as_storage_error("updating the session"):
            try:
                self._db.put_item(
                    TableName=self._table,
                    Item=self._item(record),
                    ConditionExpression="#tenant = :tenant AND #revision = :revision",
                    ExpressionAttributeNames=_NAMES,
                    ExpressionAttributeValues={
                        ":tenant": s(record.tenant_id),
                        ":revision": n(expected_revision),
                    },
                )
            except ClientError as exc:
                if code_of(exc) == "ConditionalCheckFailedException":
                    return False
                raise
        return True

    def list_by_workspace(self, tenant_id: str, workspace_id: str, limit: int) -> list[SessionRecord]:
        found: list[SessionRecord] = []
        with failing_as_storage_error("listing sessions"):
            for item in paginate(
                self._db.query,
                TableName=self._table,
                IndexName="byWorkspace",
                KeyConditionExpression="workspaceId = :workspace",
                FilterExpression="#tenant = :tenant",
                ExpressionAttributeNames={"#tenant": "tenantId"},
                ExpressionAttributeValues={":workspace": s(workspace_id), ":tenant": s(tenant_id)},
                ScanIndexForward=False,
            ):
                found.append(SessionRecord.from_document(json.loads(item["document"]["S"])))
                if len(found) >= limit:
                    break
        return found

    def active_for_user(self, tenant_id: str, user_id: str, now: datetime) -> list[SessionRecord]:
        found: list[SessionRecord] = []
        with failing_as_storage_error("listing sessions"):
            for item in paginate(
                self._db.query,
                TableName=self._table,
                IndexName="byOwner",
                KeyConditionExpression="ownerKey = :owner AND expiresAt > :now",
                ExpressionAttributeValues={
                    ":owner": s(_owner_key(tenant_id, user_id)),
                    ":now": s(timestamp(now)),
                },
            ):
                record = SessionRecord.from_document(json.loads(item["document"]["S"]))
                if record.status not in TERMINAL:
                    found.append(record)
        return found

    def prune_expired(self, expired_before: datetime, *, dry_run: bool = False) -> int:
        # Each item's ``ttl`` is its expiry plus the same retention: DynamoDB deletes it itself.
        return 0
