"""The AWS store: DynamoDB tables ``{env}-…`` for metadata and an S3 bucket for artifact content,
through boto3 (seed 001 §8). The only place in the project that imports boto3."""

from __future__ import annotations

from backend.storage import Stores
from backend.storage.aws.approvals import DynamoApprovalRepository
from backend.storage.aws.audit import DynamoAuditRepository
from backend.storage.aws.config import AwsSettings
from backend.storage.aws.content import S3ContentStore
from backend.storage.aws.sessions import DynamoSessionRepository
from backend.storage.aws.tables import create_resources
from backend.storage.aws.telemetry import DynamoTelemetryRepository
from backend.storage.aws.usage import DynamoUsageRepository
from backend.storage.aws.workspaces import DynamoWorkspaceRepository

__all__ = ["AwsSettings", "create_resources", "open_aws_stores"]


def open_aws_stores(settings: AwsSettings) -> Stores:
    dynamodb, s3 = settings.clients()

    def close() -> None:
        dynamodb.close()
        s3.close()

    return Stores(
        sessions=DynamoSessionRepository(dynamodb, settings),
        workspaces=DynamoWorkspaceRepository(dynamodb, settings),
        content=S3ContentStore(s3, settings),
        approvals=DynamoApprovalRepository(dynamodb, settings),
        audit=DynamoAuditRepository(dynamodb, settings),
        telemetry=DynamoTelemetryRepository(dynamodb, settings),
        usage=DynamoUsageRepository(dynamodb, settings),
        blocking=True,
        close=close,
    )
