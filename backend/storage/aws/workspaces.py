"""Workspaces (``{env}-workspaces``) and artifact metadata (``{env}-artifacts``) in DynamoDB.

Both are stored attribute by attribute (not as one document) because their writes are partial and
conditional: resolving a workspace sets ``lastActiveAt`` but keeps ``createdAt`` (``if_not_exists``),
and a session_history snapshot replaces the stored one only if ``orderKey`` is lower — returning the
replaced item atomically (``ReturnValues=ALL_OLD``) so its content can be deleted.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from backend.common.errors import StorageError
from backend.common.ids import parse_timestamp, timestamp
from backend.storage.aws.calls import code_of, epoch, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings
from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.repository import HistoryWrite, check_inline
from contracts.enums import ArtifactType, WorkspaceScope

__all__ = ["DynamoWorkspaceRepository"]

_ARTIFACT_FIELDS = {
    "tenantId": "tenant_id",
    "userId": "user_id",
    "sessionId": "session_id",
    "taskId": "task_id",
    "stepId": "step_id",
    "artifactType": "artifact_type",
    "artifactName": "artifact_name",
    "contentType": "content_type",
    "sizeBytes": "size_bytes",
    "sha256": "sha256",
    "contentKey": "content_key",
    "updatedAt": "updated_at",
    "snapshotAt": "snapshot_at",
    "orderKey": "order_key",
}


def _owner_key(tenant_id: str, user_id: str) -> str:
    # Tenant IDs cannot contain "/", so the split point is unambiguous.
    return f"{tenant_id}/{user_id}"


def _workspace(item: dict[str, Any]) -> WorkspaceRecord:
    return WorkspaceRecord(
        workspace_id=item["workspaceId"]["S"],
        tenant_id=item["tenantId"]["S"],
        user_id=item["userId"]["S"],
        scope=WorkspaceScope(item["workspaceScope"]["S"]),
        local_paths=tuple(value["S"] for value in item.get("localPaths", {}).get("L", [])),
        created_at=parse_timestamp(item["createdAt"]["S"]),
        last_active_at=parse_timestamp(item["lastActiveAt"]["S"]),
    )


def _artifact_values(record: ArtifactRecord) -> dict[str, dict[str, str]]:
    values: dict[str, dict[str, str]] = {}
    for attribute, name in _ARTIFACT_FIELDS.items():
        value = getattr(record, name)
        if value is None:
            continue
        if isinstance(value, datetime):
            values[attribute] = s(timestamp(value))
        elif isinstance(value, ArtifactType):
            values[attribute] = s(value.value)
        elif isinstance(value, int):
            values[attribute] = n(value)
        else:
            values[attribute] = s(value)
    return values


def _artifact(item: dict[str, Any]) -> ArtifactRecord:
    def text(name: str) -> str | None:
        value = item.get(name)
        return None if value is None else str(value["S"])

    snapshot = text("snapshotAt")
    return ArtifactRecord(
        artifact_id=item["artifactId"]["S"],
        workspace_id=item["workspaceId"]["S"],
        tenant_id=item["tenantId"]["S"],
        user_id=item["userId"]["S"],
        session_id=item["sessionId"]["S"],
        task_id=text("taskId"),
        step_id=text("stepId"),
        artifact_type=ArtifactType(item["artifactType"]["S"]),
        artifact_name=item["artifactName"]["S"],
        content_type=item["contentType"]["S"],
        size_bytes=int(item["sizeBytes"]["N"]),
        sha256=item["sha256"]["S"],
        content_key=item["contentKey"]["S"],
        created_at=parse_timestamp(item["createdAt"]["S"]),
        updated_at=parse_timestamp(item["updatedAt"]["S"]),
        snapshot_at=None if snapshot is None else parse_timestamp(snapshot),
    )


class DynamoWorkspaceRepository:
    # Every artifact's bytes are in S3: a DynamoDB item holds at most 400 KB, and reads of the
    # metadata would pay for the content's read capacity.
    inline_content_limit = 0

    def __init__(self, dynamodb: Any, settings: AwsSettings) -> None:
        self._db = dynamodb
        self._workspaces = settings.table("workspaces")
        self._artifacts = settings.table("artifacts")
        self._inactivity = settings.workspace_inactivity

    # ------------------------------------------------------------------ workspaces

    def touch_or_create(self, record: WorkspaceRecord) -> WorkspaceRecord:
        now = timestamp(record.last_active_at)
        values = {
            ":tenant": s(record.tenant_id),
            ":user": s(record.user_id),
            ":owner": s(_owner_key(record.tenant_id, record.user_id)),
            ":scope": s(record.scope.value),
            ":created": s(timestamp(record.created_at)),
            ":paths": {"L": [s(path) for path in record.local_paths]},
            ":now": s(now),
            ":ttl": n(epoch(record.last_active_at, self._inactivity)),
        }
        with failing_as_storage_error("resolving the workspace"):
            try:
                item = self._db.update_item(
                    TableName=self._workspaces,
                    Key={"workspaceId": s(record.workspace_id)},
                    UpdateExpression=(
                        "SET #tenant = if_not_exists(#tenant, :tenant),"
                        " userId = if_not_exists(userId, :user),"
                        " ownerKey = if_not_exists(ownerKey, :owner),"
                        " workspaceScope = if_not_exists(workspaceScope, :scope),"
                        " createdAt = if_not_exists(createdAt, :created), localPaths = :paths,"
                        " lastActiveAt = :now, updatedAt = :now, #ttl = :ttl"
                    ),
                    # lastActiveAt only moves forward, even if two servers' clocks disagree.
                    ConditionExpression=(
                        "attribute_not_exists(workspaceId) OR (#tenant = :tenant AND lastActiveAt < :now)"
                    ),
                    ExpressionAttributeNames={"#tenant": "tenantId", "#ttl": "ttl"},
                    ExpressionAttributeValues=values,
                    ReturnValues="ALL_NEW",
                )["Attributes"]
            except ClientError as exc:
                if code_of(exc) != "ConditionalCheckFailedException":
                    raise
                item = self._db.get_item(
                    TableName=self._workspaces,
                    Key={"workspaceId": s(record.workspace_id)},
                    ConsistentRead=True,
                )["Item"]
        return _workspace(item)

    def get(self, tenant_id: str, workspace_id: str) -> WorkspaceRecord | None:
        with failing_as_storage_error("reading the workspace"):
            item = self._db.get_item(
                TableName=self._workspaces, Key={"workspaceId": s(workspace_id)}, ConsistentRead=True
            ).get("Item")
        if item is None or item["tenantId"]["S"] != tenant_id:
            return None
        return _workspace(item)

    def list_for_owner(self, tenant_id: str, user_id: str) -> list[WorkspaceRecord]:
        with failing_as_storage_error("listing workspaces"):
            items = list(
                paginate(
                    self._db.query,
                    TableName=self._workspaces,
                    IndexName="byOwner",
                    KeyConditionExpression="ownerKey = :owner",
                    ExpressionAttributeValues={":owner": s(_owner_key(tenant_id, user_id))},
                    ScanIndexForward=False,
                )
            )
        return [_workspace(item) for item in items]

    def delete(
        self, tenant_id: str, workspace_id: str, *, inactive_before: datetime | None = None
    ) -> list[ArtifactRecord] | None:
        condition = "#tenant = :tenant"
        values = {":tenant": s(tenant_id)}
        if inactive_before is not None:
            condition += " AND lastActiveAt < :before"
            values[":before"] = s(timestamp(inactive_before))
        with failing_as_storage_error("deleting the workspace"):
            try:
                self._db.delete_item(
                    TableName=self._workspaces,
                    Key={"workspaceId": s(workspace_id)},
                    ConditionExpression=condition,
                    ExpressionAttributeNames={"#tenant": "tenantId"},
                    ExpressionAttributeValues=values,
                )
            except ClientError as exc:
                if code_of(exc) == "ConditionalCheckFailedException":
                    return None
                raise
            removed = [_artifact(item) for item in self._query_artifacts(workspace_id)]
        self.delete_artifacts(removed)
        return removed

    def list_inactive(self, before: datetime, limit: int) -> list[WorkspaceRecord]:
        found: list[WorkspaceRecord] = []
        with failing_as_storage_error("scanning for inactive workspaces"):
            for item in paginate(
                self._db.scan,
                TableName=self._workspaces,
                FilterExpression="lastActiveAt < :before",
                ExpressionAttributeValues={":before": s(timestamp(before))},
            ):
                found.append(_workspace(item))
                if len(found) >= limit:
                    break
        return found

    # ------------------------------------------------------------------ artifacts

    def _query_artifacts(self, workspace_id: str, **extra: Any) -> Iterator[dict[str, Any]]:
        values = {":workspace": s(workspace_id), **extra.pop("ExpressionAttributeValues", {})}
        return paginate(
            self._db.query,
            TableName=self._artifacts,
            KeyConditionExpression="workspaceId = :workspace",
            ExpressionAttributeValues=values,
            ConsistentRead=True,
            **extra,
        )

    def _get_item(self, workspace_id: str, artifact_id: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._db.get_item(
            TableName=self._artifacts,
            Key={"workspaceId": s(workspace_id), "artifactId": s(artifact_id)},
            ConsistentRead=True,
        ).get("Item")
        return found

    def put_artifact(self, record: ArtifactRecord, content: bytes | None = None) -> ArtifactRecord | None:
        check_inline(record, content, self.inline_content_limit)
        item = {
            "workspaceId": s(record.workspace_id),
            "artifactId": s(record.artifact_id),
            "createdAt": s(timestamp(record.created_at)),
            **_artifact_values(record),
        }
        with failing_as_storage_error("storing the artifact"):
            try:
                self._db.put_item(
                    TableName=self._artifacts,
                    Item=item,
                    ConditionExpression="attribute_not_exists(artifactId)",
                )
                return None
            except ClientError as exc:
                if code_of(exc) != "ConditionalCheckFailedException":
                    raise
            existing = self._get_item(record.workspace_id, record.artifact_id)
        return None if existing is None else _artifact(existing)

    def put_history(self, record: ArtifactRecord, content: bytes | None = None) -> HistoryWrite:
        check_inline(record, content, self.inline_content_limit)
        values = _artifact_values(record)
        names = {f"#a{i}": attribute for i, attribute in enumerate(values)}
        assignments = [f"#a{i} = :a{i}" for i in range(len(values))]
        expression_values = {f":a{i}": value for i, value in enumerate(values.values())}
        absent = [attribute for attribute in ("taskId", "stepId") if attribute not in values]
        update = "SET " + ", ".join([*assignments, "createdAt = if_not_exists(createdAt, :created)"])
        if absent:
            update += " REMOVE " + ", ".join(absent)
        with failing_as_storage_error("storing the session history"):
            try:
                old = self._db.update_item(
                    TableName=self._artifacts,
                    Key={"workspaceId": s(record.workspace_id), "artifactId": s(record.artifact_id)},
                    UpdateExpression=update,
                    ConditionExpression="attribute_not_exists(artifactId) OR orderKey < :order",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues={
                        **expression_values,
                        ":created": s(timestamp(record.created_at)),
                        ":order": s(record.order_key),
                    },
                    ReturnValues="ALL_OLD",
                ).get("Attributes")
            except ClientError as exc:
                if code_of(exc) != "ConditionalCheckFailedException":
                    raise
                current = self._get_item(record.workspace_id, record.artifact_id)
                if current is None:  # deleted in between: the workspace is going away
                    return HistoryWrite(stored=record, replaced=None, written=False)
                return HistoryWrite(stored=_artifact(current), replaced=None, written=False)
        replaced = None if not old else _artifact(old)
        stored = record if replaced is None else dataclasses.replace(record, created_at=replaced.created_at)
        return HistoryWrite(stored=stored, replaced=replaced, written=True)

    def get_artifact(self, tenant_id: str, workspace_id: str, artifact_id: str) -> ArtifactRecord | None:
        with failing_as_storage_error("reading the artifact"):
            item = self._get_item(workspace_id, artifact_id)
        if item is None or item["tenantId"]["S"] != tenant_id:
            return None
        return _artifact(item)

    def get_artifact_content(
        self, tenant_id: str, workspace_id: str, artifact_id: str
    ) -> tuple[ArtifactRecord, bytes | None] | None:
        record = self.get_artifact(tenant_id, workspace_id, artifact_id)
        return None if record is None else (record, None)

    def list_artifacts(
        self,
        tenant_id: str,
        workspace_id: str,
        *,
        session_id: str | None = None,
        task_id: str | None = None,
        artifact_type: str | None = None,
    ) -> list[ArtifactRecord]:
        conditions = ["#tenantId = :tenantId"]
        names = {"#tenantId": "tenantId"}
        values = {":tenantId": s(tenant_id)}
        for attribute, value in (
            ("sessionId", session_id),
            ("taskId", task_id),
            ("artifactType", artifact_type),
        ):
            if value is not None:
                conditions.append(f"#{attribute} = :{attribute}")
                names[f"#{attribute}"] = attribute
                values[f":{attribute}"] = s(value)
        with failing_as_storage_error("listing artifacts"):
            items = list(
                self._query_artifacts(
                    workspace_id,
                    FilterExpression=" AND ".join(conditions),
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            )
        records = [_artifact(item) for item in items]
        return sorted(records, key=lambda r: (r.created_at, r.artifact_id))

    def find_artifact(self, workspace_id: str, artifact_id: str) -> ArtifactRecord | None:
        with failing_as_storage_error("reading the artifact"):
            item = self._get_item(workspace_id, artifact_id)
        return None if item is None else _artifact(item)

    def orphaned_artifacts(self, limit: int) -> list[ArtifactRecord]:
        found: list[ArtifactRecord] = []
        known: dict[str, bool] = {}
        with failing_as_storage_error("scanning for orphaned artifacts"):
            for item in paginate(self._db.scan, TableName=self._artifacts):
                workspace_id = item["workspaceId"]["S"]
                if workspace_id not in known:
                    known[workspace_id] = "Item" in self._db.get_item(
                        TableName=self._workspaces, Key={"workspaceId": s(workspace_id)}, ConsistentRead=True
                    )
                if not known[workspace_id]:
                    found.append(_artifact(item))
                    if len(found) >= limit:
                        break
        return found

    def delete_artifacts(self, records: list[ArtifactRecord]) -> None:
        requests = [
            {"DeleteRequest": {"Key": {"workspaceId": s(r.workspace_id), "artifactId": s(r.artifact_id)}}}
            for r in records
        ]
        with failing_as_storage_error("deleting artifacts"):
            for start in range(0, len(requests), 25):
                pending: dict[str, Any] = {self._artifacts: requests[start : start + 25]}
                # Throttled writes come back as UnprocessedItems, which boto3 does not retry itself.
                for attempt in range(8):
                    pending = self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                    if not pending:
                        break
                    time.sleep(min(2.0, 0.05 * 2**attempt))
                if pending:
                    raise StorageError("deleting artifacts was throttled; retry")
