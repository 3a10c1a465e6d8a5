"""What only the AWS store has: the tables and bucket it creates, and the ``ttl`` attributes that let
DynamoDB expire items (seed 001 §8 table conventions)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from backend.audit.repository import AuditFilter, Entry
from backend.cli import main
from backend.storage.aws import AwsSettings, create_resources, open_aws_stores
from tests.backend.storage.test_repository_contract import T0, _session, _workspace


def test_setup_creates_every_table_with_its_indexes_and_ttl_and_is_repeatable(
    moto_endpoint: str, aws_credentials: None
) -> None:
    settings = AwsSettings(env_prefix="setup-test", endpoint_url=moto_endpoint)
    created = create_resources(settings)
    assert created == [
        "setup-test-sessions",
        "setup-test-workspaces",
        "setup-test-artifacts",
        "setup-test-approvals",
        "setup-test-audit",
        "setup-test-telemetry",
        "setup-test-usage",
        "setup-test-search",
        "setup-test-cowork-artifacts",
    ]
    assert create_resources(settings) == []
    dynamodb, s3 = settings.clients()
    workspaces = dynamodb.describe_table(TableName="setup-test-workspaces")["Table"]
    assert [index["IndexName"] for index in workspaces["GlobalSecondaryIndexes"]] == ["byOwner"]
    sessions = dynamodb.describe_table(TableName="setup-test-sessions")["Table"]
    assert [index["IndexName"] for index in sessions["GlobalSecondaryIndexes"]] == ["byWorkspace", "byOwner"]
    audit = dynamodb.describe_table(TableName="setup-test-audit")["Table"]
    assert [index["IndexName"] for index in audit["GlobalSecondaryIndexes"]] == [
        "bySession",
        "byWorkspace",
        "byUser",
        "byType",
    ]
    for table in ("sessions", "workspaces", "telemetry", "usage"):
        ttl = dynamodb.describe_time_to_live(TableName=f"setup-test-{table}")["TimeToLiveDescription"]
        assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "ttl")
    assert s3.head_bucket(Bucket="setup-test-cowork-artifacts")["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_items_carry_created_and_updated_times_and_expire_by_ttl(
    moto_endpoint: str, aws_credentials: None
) -> None:
    settings = AwsSettings(env_prefix="ttl-test", endpoint_url=moto_endpoint)
    create_resources(settings)
    stores = open_aws_stores(settings)
    try:
        workspace = _workspace("acme", active=T0)
        stores.workspaces.touch_or_create(workspace)
        session = _session("acme", workspace.workspace_id)
        stores.sessions.create(session)
    finally:
        stores.close()
    dynamodb, _ = settings.clients()
    item = dynamodb.get_item(
        TableName="ttl-test-workspaces", Key={"workspaceId": {"S": workspace.workspace_id}}
    )["Item"]
    assert int(item["ttl"]["N"]) == int((T0 + timedelta(days=90)).timestamp())
    assert item["createdAt"]["S"] == item["updatedAt"]["S"] == "2026-03-02T09:00:00.000000Z"
    stored = dynamodb.get_item(TableName="ttl-test-sessions", Key={"sessionId": {"S": session.session_id}})[
        "Item"
    ]
    assert int(stored["ttl"]["N"]) == int((session.expires_at + timedelta(days=90)).timestamp())
    assert "createdAt" in stored
    assert "updatedAt" in stored


def test_the_cli_sets_up_and_uses_the_aws_store_through_aws_endpoint_url(
    moto_endpoint: str,
    aws_credentials: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    assert main(["aws-setup", "--env-prefix", "cli-test"]) == 0
    assert "cli-test-sessions" in json.loads(capsys.readouterr().out)["created"]
    arguments = ["--store", "aws", "--env-prefix", "cli-test"]
    assert main(["audit-verify", *arguments, "--tenant", "acme"]) == 0
    assert json.loads(capsys.readouterr().out)["checked"] == 0
    assert main(["purge", *arguments]) == 0
    assert json.loads(capsys.readouterr().out)["purged"]["workspaces"] == 0


def test_setup_adds_the_indexes_a_table_of_an_older_release_lacks(
    moto_endpoint: str, aws_credentials: None
) -> None:
    settings = AwsSettings(env_prefix="older-test", endpoint_url=moto_endpoint)
    dynamodb, _ = settings.clients()
    # The audit table as the release before the audit read side made it: no GSIs.
    dynamodb.create_table(
        TableName="older-test-audit",
        KeySchema=[
            {"AttributeName": "tenantId", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "tenantId", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    created = create_resources(settings)
    assert "older-test-audit" not in created
    audit = dynamodb.describe_table(TableName="older-test-audit")["Table"]
    assert sorted(index["IndexName"] for index in audit["GlobalSecondaryIndexes"]) == [
        "bySession",
        "byType",
        "byUser",
        "byWorkspace",
    ]
    stores = open_aws_stores(settings)
    try:
        stores.audit.append_many(
            "acme", [Entry("e1", T0, {"sessionId": "sess_1", "eventType": "tool_completed"})]
        )
        page = stores.audit.query(
            "acme", AuditFilter(session_id="sess_1"), position=None, descending=False, limit=5
        )
        assert [record.event_id for record in page.records] == ["e1"]
    finally:
        stores.close()
