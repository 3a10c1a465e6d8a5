"""The DynamoDB tables and S3 bucket of the AWS store, and creating them for development
(``cowork-backend aws-setup``). Production creates the same shapes with its infrastructure code.

=============  ====================  ===========  =========================================  ==========
table          key                   sort key     GSIs (access pattern)                      ``ttl``
=============  ====================  ===========  =========================================  ==========
sessions       sessionId             —            byWorkspace (workspaceId, createdAt);       expiry+90d
                                                  byOwner (ownerKey = tenant/user,
                                                  expiresAt): a user's active sessions
workspaces     workspaceId           —            byOwner (ownerKey = tenant/user,           lastActive
                                                  lastActiveAt): a user's workspaces         +90d
artifacts      workspaceId           artifactId   —  (listing is a consistent Query)         —
approvals      sessionId             approvalId   —                                          —
audit          tenantId              sk           byWorkspace, bySession, byUser, byType     none
                                                  (``<tenant>#<value>``, sk): the read side's
                                                  filters in chain order (``seq#…`` records,
                                                  ``evt#…`` markers)
telemetry      tenantId              eventId      —                                          +30d
usage          tenantId              counter      —  (quota counters: ``tokens/<day>``,       day+36d
                                                  ``storageBytes``)                          (tokens)
search         scope = tenant/       artifactId   byRecency (scope, updatedAt): a workspace's —
               workspace                          search documents, newest first
=============  ====================  ===========  =========================================  ==========

Every item has ``createdAt`` and ``updatedAt``. Audit records carry no ``ttl``: a hash chain whose
oldest records silently expire can no longer be verified; archive the log instead.

``aws-setup`` on tables that already exist adds the GSIs they lack (one at a time: DynamoDB creates
one index per table update). Items written before an index existed are not in it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from botocore.exceptions import ClientError

from backend.storage.aws.audit import AUDIT_INDEXES
from backend.storage.aws.calls import code_of, failing_as_storage_error
from backend.storage.aws.config import AwsSettings

__all__ = ["TABLE_SPECS", "create_resources"]

logger = logging.getLogger(__name__)


def _key(hash_key: str, range_key: str | None = None) -> list[dict[str, str]]:
    schema = [{"AttributeName": hash_key, "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    return schema


TABLE_SPECS: dict[str, dict[str, Any]] = {
    "sessions": {
        "KeySchema": _key("sessionId"),
        "AttributeDefinitions": ["sessionId", "workspaceId", "createdAt", "ownerKey", "expiresAt"],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "byWorkspace",
                "KeySchema": _key("workspaceId", "createdAt"),
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "byOwner",
                "KeySchema": _key("ownerKey", "expiresAt"),
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
        "ttl": True,
    },
    "workspaces": {
        "KeySchema": _key("workspaceId"),
        "AttributeDefinitions": ["workspaceId", "ownerKey", "lastActiveAt"],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "byOwner",
                "KeySchema": _key("ownerKey", "lastActiveAt"),
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "ttl": True,
    },
    "artifacts": {
        "KeySchema": _key("workspaceId", "artifactId"),
        "AttributeDefinitions": ["workspaceId", "artifactId"],
    },
    "approvals": {
        "KeySchema": _key("sessionId", "approvalId"),
        "AttributeDefinitions": ["sessionId", "approvalId"],
    },
    "audit": {
        "KeySchema": _key("tenantId", "sk"),
        "AttributeDefinitions": ["tenantId", "sk", *AUDIT_INDEXES.values()],
        "GlobalSecondaryIndexes": [
            {"IndexName": name, "KeySchema": _key(key, "sk"), "Projection": {"ProjectionType": "ALL"}}
            for name, key in AUDIT_INDEXES.items()
        ],
    },
    "telemetry": {
        "KeySchema": _key("tenantId", "eventId"),
        "AttributeDefinitions": ["tenantId", "eventId"],
        "ttl": True,
    },
    "usage": {
        "KeySchema": _key("tenantId", "counter"),
        "AttributeDefinitions": ["tenantId", "counter"],
        "ttl": True,
    },
    "search": {
        "KeySchema": _key("scope", "artifactId"),
        "AttributeDefinitions": ["scope", "artifactId", "updatedAt"],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "byRecency",
                "KeySchema": _key("scope", "updatedAt"),
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    },
}


def create_resources(settings: AwsSettings) -> list[str]:
    """Create every table (with its GSIs and TTL) and the bucket if missing; what was created."""
    dynamodb, s3 = settings.clients()
    created: list[str] = []
    for name, spec in TABLE_SPECS.items():
        table = settings.table(name)
        request: dict[str, Any] = {
            "TableName": table,
            "KeySchema": spec["KeySchema"],
            "AttributeDefinitions": [
                {"AttributeName": a, "AttributeType": "S"} for a in spec["AttributeDefinitions"]
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if "GlobalSecondaryIndexes" in spec:
            request["GlobalSecondaryIndexes"] = spec["GlobalSecondaryIndexes"]
        with failing_as_storage_error(f"creating table {table}"):
            try:
                dynamodb.create_table(**request)
                created.append(table)
            except ClientError as exc:
                if code_of(exc) != "ResourceInUseException":
                    raise
            dynamodb.get_waiter("table_exists").wait(
                TableName=table, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
            )
            if table not in created:
                _add_missing_indexes(dynamodb, table, spec)
            if spec.get("ttl"):
                status = dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
                if status.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
                    dynamodb.update_time_to_live(
                        TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"}
                    )
    bucket = settings.bucket_name
    with failing_as_storage_error(f"creating bucket {bucket}"):
        try:
            s3.head_bucket(Bucket=bucket)
        except ClientError as exc:
            # us-east-1 answers a second CreateBucket with success, so ask first.
            if code_of(exc) not in ("404", "NoSuchBucket", "NotFound"):
                raise
            if settings.region == "us-east-1":
                s3.create_bucket(Bucket=bucket)
            else:
                s3.create_bucket(
                    Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": settings.region}
                )
            created.append(bucket)
    return created


def _add_missing_indexes(dynamodb: Any, table: str, spec: dict[str, Any]) -> None:
    """A table made by an older release gains the GSIs added since (one per update, each waited for)."""
    for index in spec.get("GlobalSecondaryIndexes", []):
        described = dynamodb.describe_table(TableName=table)["Table"]
        if index["IndexName"] in {i["IndexName"] for i in described.get("GlobalSecondaryIndexes", [])}:
            continue
        names = {part["AttributeName"] for part in index["KeySchema"]}
        logger.info("adding index %s to table %s", index["IndexName"], table)
        dynamodb.update_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in sorted(names)],
            GlobalSecondaryIndexUpdates=[{"Create": index}],
        )
        for _ in range(300):
            described = dynamodb.describe_table(TableName=table)["Table"]
            statuses = [i.get("IndexStatus") for i in described.get("GlobalSecondaryIndexes", [])]
            if all(status in (None, "ACTIVE") for status in statuses):
                break
            time.sleep(1)
