"""Workspaces (``{env}-workspaces``) and artifact metadata (``{env}-artifacts``) in DynamoDB.

Both are stored attribute by attribute (not as one document) because their writes are partial and
conditional: resolving a workspace sets ``lastActiveAt`` but keeps ``createdAt`` (``if_not_exists``),
and a session_history snapshot replaces the stored one only if ``orderKey`` is lower (compare and
swap: the stored item is read, then replaced on condition that its ``orderKey`` is still the one read,
so the replaced record is known and its content can be deleted).

An artifact's search documents (``{env}-search``, :mod:`backend.storage.aws.search`) are written in the
same transaction as its record, and the record says so (``searchIndexed``); a record written without
them is found by :meth:`DynamoWorkspaceRepository.unindexed_artifacts` and indexed later.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Literal

from botocore.exceptions import ClientError

from backend.common.errors import StorageError
from backend.common.ids import parse_timestamp, timestamp
from backend.storage.aws.calls import code_of, epoch, failing_as_storage_error, n, paginate, s
from backend.storage.aws.config import AwsSettings
from backend.storage.aws.search import scope_of, search_item, search_key
from backend.storage.aws.search import search as search_workspace
from backend.workspace.records import ArtifactRecord, WorkspaceRecord
from backend.workspace.repository import HistoryWrite, check_inline
from backend.workspace.search import SearchDocument, SearchPage, SearchQuery
from contracts.enums import ArtifactType, WorkspaceScope

__all__ = ["DynamoWorkspaceRepository"]

_ATTEMPTS = 32
"""Compare-and-swap rounds of one write before giving up (each lost round means another write won)."""

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
        self._search = settings.table("search")
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
            leftover = [
                (self._search, {"scope": item["scope"], "artifactId": item["artifactId"]})
                for item in paginate(
                    self._db.query,
                    TableName=self._search,
                    KeyConditionExpression="#scope = :scope",
                    ExpressionAttributeNames={"#scope": "scope"},
                    ExpressionAttributeValues={":scope": s(scope_of(tenant_id, workspace_id))},
                    ProjectionExpression="#scope, artifactId",
                )
            ]
        self.delete_artifacts(removed)
        self._batch_delete(leftover)
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

    def _item(self, record: ArtifactRecord, indexed: bool) -> dict[str, Any]:
        item: dict[str, Any] = {
            "workspaceId": s(record.workspace_id),
            "artifactId": s(record.artifact_id),
            "createdAt": s(timestamp(record.created_at)),
            **_artifact_values(record),
        }
        if indexed:
            item["searchIndexed"] = {"BOOL": True}
        return item

    def _index_write(
        self, record: ArtifactRecord, documents: Sequence[SearchDocument] | None
    ) -> dict[str, Any]:
        """The write that makes the search item match ``documents`` (none: no item)."""
        if documents:
            return {"Put": {"TableName": self._search, "Item": search_item(record, documents)}}
        return {"Delete": {"TableName": self._search, "Key": search_key(record)}}

    def _transact(self, writes: list[dict[str, Any]]) -> Literal["done", "condition", "conflict"]:
        """Run ``writes`` atomically: ``condition`` when a condition failed, ``conflict`` when another
        transaction on the same items was in progress (try again)."""
        try:
            self._db.transact_write_items(TransactItems=writes)
            return "done"
        except ClientError as exc:
            if code_of(exc) == "TransactionConflictException":
                return "conflict"
            if code_of(exc) != "TransactionCanceledException":
                raise
            codes = {reason.get("Code") for reason in exc.response.get("CancellationReasons") or []}
            if "ConditionalCheckFailed" in codes:
                return "condition"
            if "TransactionConflict" in codes:
                return "conflict"
            raise

    def put_artifact(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> ArtifactRecord | None:
        check_inline(record, content, self.inline_content_limit)
        put = {
            "Put": {
                "TableName": self._artifacts,
                "Item": self._item(record, documents is not None),
                "ConditionExpression": "attribute_not_exists(artifactId)",
            }
        }
        with failing_as_storage_error("storing the artifact"):
            if documents:
                for attempt in range(_ATTEMPTS):
                    outcome = self._transact([put, self._index_write(record, documents)])
                    if outcome != "conflict":
                        break
                    time.sleep(min(0.5, 0.01 * 2**attempt))
                else:
                    raise StorageError("the artifact is being changed concurrently; retry")
                if outcome == "done":
                    return None
            else:
                try:
                    self._db.put_item(**put["Put"])
                    return None
                except ClientError as exc:
                    if code_of(exc) != "ConditionalCheckFailedException":
                        raise
            existing = self._get_item(record.workspace_id, record.artifact_id)
        return None if existing is None else _artifact(existing)

    def put_history(
        self,
        record: ArtifactRecord,
        content: bytes | None = None,
        *,
        documents: Sequence[SearchDocument] | None = None,
    ) -> HistoryWrite:
        check_inline(record, content, self.inline_content_limit)
        with failing_as_storage_error("storing the session history"):
            for attempt in range(_ATTEMPTS):
                item = self._get_item(record.workspace_id, record.artifact_id)
                current = None if item is None else _artifact(item)
                if current is not None and current.order_key >= record.order_key:
                    return HistoryWrite(stored=current, replaced=None, written=False)
                stored = (
                    record if current is None else dataclasses.replace(record, created_at=current.created_at)
                )
                put: dict[str, Any] = {
                    "TableName": self._artifacts,
                    "Item": self._item(stored, documents is not None),
                }
                if current is None:
                    put["ConditionExpression"] = "attribute_not_exists(artifactId)"
                else:
                    put["ConditionExpression"] = "orderKey = :seen"
                    put["ExpressionAttributeValues"] = {":seen": s(current.order_key)}
                if self._transact([{"Put": put}, self._index_write(stored, documents)]) == "done":
                    return HistoryWrite(stored=stored, replaced=current, written=True)
                # Another snapshot was stored in between: look again (it may be newer than this one).
                time.sleep(min(0.2, 0.005 * 2**attempt))
        raise StorageError("the session history is being changed concurrently; retry")

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
        keys: list[tuple[str, dict[str, Any]]] = []
        for r in records:
            keys.append((self._artifacts, {"workspaceId": s(r.workspace_id), "artifactId": s(r.artifact_id)}))
            keys.append((self._search, search_key(r)))
        self._batch_delete(keys)

    def _batch_delete(self, keys: list[tuple[str, dict[str, Any]]]) -> None:
        """Delete items by (table, key), 25 to a request."""
        with failing_as_storage_error("deleting artifacts"):
            for start in range(0, len(keys), 25):
                pending: dict[str, Any] = {}
                for table, key in keys[start : start + 25]:
                    pending.setdefault(table, []).append({"DeleteRequest": {"Key": key}})
                # Throttled writes come back as UnprocessedItems, which boto3 does not retry itself.
                for attempt in range(8):
                    pending = self._db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                    if not pending:
                        break
                    time.sleep(min(2.0, 0.05 * 2**attempt))
                if pending:
                    raise StorageError("deleting artifacts was throttled; retry")

    # ------------------------------------------------------------------ search

    def search(self, tenant_id: str, workspace_id: str, query: SearchQuery) -> SearchPage:
        if not query.terms:
            return SearchPage()
        return search_workspace(self._db, self._search, tenant_id, workspace_id, query)

    def unindexed_artifacts(self, limit: int) -> list[ArtifactRecord]:
        found: list[ArtifactRecord] = []
        with failing_as_storage_error("scanning for unindexed artifacts"):
            for item in paginate(
                self._db.scan,
                TableName=self._artifacts,
                FilterExpression="attribute_not_exists(searchIndexed)",
            ):
                found.append(_artifact(item))
                if len(found) >= limit:
                    break
        return found

    def index_artifact(self, record: ArtifactRecord, documents: Sequence[SearchDocument]) -> bool:
        mark = {
            "Update": {
                "TableName": self._artifacts,
                "Key": {"workspaceId": s(record.workspace_id), "artifactId": s(record.artifact_id)},
                "UpdateExpression": "SET searchIndexed = :yes",
                # The order key ends with the content's hash: the same key is the same content.
                "ConditionExpression": "orderKey = :order",
                "ExpressionAttributeValues": {":yes": {"BOOL": True}, ":order": s(record.order_key)},
            }
        }
        with failing_as_storage_error("indexing the artifact"):
            for attempt in range(_ATTEMPTS):
                outcome = self._transact([mark, self._index_write(record, documents)])
                if outcome != "conflict":
                    return outcome == "done"
                time.sleep(min(0.5, 0.01 * 2**attempt))
        raise StorageError("the artifact is being changed concurrently; retry")
