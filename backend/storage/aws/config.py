"""Where the AWS store lives: table names from an environment prefix, the bucket, the region and the
endpoint (``AWS_ENDPOINT_URL`` for emulators such as moto, DynamoDB Local or LocalStack; seed 001 §8)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import boto3
from botocore.config import Config

__all__ = ["TABLES", "AwsSettings"]

TABLES = ("sessions", "workspaces", "artifacts", "approvals", "audit", "telemetry", "usage", "search")
_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,100}")


@dataclass(frozen=True, slots=True)
class AwsSettings:
    env_prefix: str = "dev"
    """Tables are ``{env}-sessions``, ``{env}-workspaces``, … (``dev``, ``staging``, ``prod``)."""
    region: str = "us-east-1"
    endpoint_url: str | None = None
    bucket: str | None = None
    """The artifact bucket; ``{env}-cowork-artifacts`` when not given."""
    session_retention: timedelta = timedelta(days=90)
    """Sessions are kept this long after their last possible resume, then expire (``ttl``)."""
    workspace_inactivity: timedelta = timedelta(days=90)
    telemetry_retention: timedelta = timedelta(days=30)

    def __post_init__(self) -> None:
        if not _PREFIX.fullmatch(self.env_prefix):
            raise ValueError("the environment prefix is 1-100 letters, digits, '_', '.' or '-'")

    @classmethod
    def from_environment(cls, **overrides: Any) -> AwsSettings:
        """Region from ``AWS_REGION``/``AWS_DEFAULT_REGION`` and endpoint from ``AWS_ENDPOINT_URL``
        unless given."""
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        values: dict[str, Any] = {
            "region": region,
            "endpoint_url": os.environ.get("AWS_ENDPOINT_URL") or None,
        }
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)

    def table(self, name: str) -> str:
        return f"{self.env_prefix}-{name}"

    @property
    def bucket_name(self) -> str:
        return self.bucket or f"{self.env_prefix.lower()}-cowork-artifacts"

    def clients(self) -> tuple[Any, Any]:
        """Thread-safe boto3 clients for DynamoDB and S3 (resources are not thread-safe)."""
        session = boto3.session.Session(region_name=self.region)
        config = Config(retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=64)
        s3_config = config.merge(Config(s3={"addressing_style": "path"})) if self.endpoint_url else config
        dynamodb = session.client("dynamodb", endpoint_url=self.endpoint_url, config=config)
        s3 = session.client("s3", endpoint_url=self.endpoint_url, config=s3_config)
        return dynamodb, s3
