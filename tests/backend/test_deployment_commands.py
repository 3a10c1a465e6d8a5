"""``cowork-backend migrate``, ``tenant create``, ``keys rotate`` and ``purge --dry-run``: against
the local store, moto's DynamoDB and S3 server, and a real ``serve`` process for the rotated keys."""

from __future__ import annotations

import json
import os
import stat
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backend.cli import main
from backend.common.auth import ADMIN_SCOPE, TokenIssuer, TokenVerifier
from backend.common.clock import SystemClock
from backend.common.keys import load_private_key, load_public_key
from backend.storage.aws import AwsSettings
from backend.storage.aws.tables import TABLE_SPECS
from backend.storage.local import open_local_stores
from backend.workspace.records import WorkspaceRecord
from contracts.enums import WorkspaceScope
from tests.support.backend import start_backend


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    out = captured.out.strip().splitlines()
    return code, json.loads(out[-1]) if out else None, captured.err


# ---------------------------------------------------------------------------------------------- migrate


def test_migrate_brings_the_local_database_to_the_latest_schema_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first, _ = _run(capsys, "migrate", "--store", "local", "--data-dir", str(tmp_path))
    assert code == 0
    assert first is not None
    assert first["store"] == "local"
    assert isinstance(first["schemaVersion"], int)
    assert first["schemaVersion"] >= 1
    code, again, _ = _run(capsys, "migrate", "--store", "local", "--data-dir", str(tmp_path))
    assert (code, again) == (0, first)
    # The migrated database is the one the store opens.
    open_local_stores(tmp_path).close()


def test_migrate_creates_the_aws_tables_as_specified_and_is_idempotent(
    moto_endpoint: str,
    aws_credentials: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    prefix = f"m{uuid.uuid4().hex[:10]}"
    code, first, _ = _run(capsys, "migrate", "--store", "aws", "--env-prefix", prefix)
    assert code == 0
    assert first is not None
    assert sorted(first["created"]) == sorted(
        [f"{prefix}-{t}" for t in TABLE_SPECS] + [f"{prefix}-cowork-artifacts"]
    )
    code, again, _ = _run(capsys, "migrate", "--store", "aws", "--env-prefix", prefix)
    assert (code, again) == (0, {"store": "aws", "created": []})
    dynamodb, _ = AwsSettings.from_environment(env_prefix=prefix).clients()
    for name, spec in TABLE_SPECS.items():
        table = dynamodb.describe_table(TableName=f"{prefix}-{name}")["Table"]
        assert table["KeySchema"] == spec["KeySchema"]
        indexes = {i["IndexName"] for i in table.get("GlobalSecondaryIndexes", [])}
        assert indexes == {i["IndexName"] for i in spec.get("GlobalSecondaryIndexes", [])}
        ttl = dynamodb.describe_time_to_live(TableName=f"{prefix}-{name}")["TimeToLiveDescription"]
        assert (ttl["TimeToLiveStatus"] == "ENABLED") == bool(spec.get("ttl")), name


def test_migrate_on_an_unreachable_aws_endpoint_fails_with_one_clear_line(
    aws_credentials: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    code, _, err = _run(capsys, "migrate", "--store", "aws", "--env-prefix", "nowhere")
    assert code == 2
    assert err.startswith("cowork-backend: ")
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------- tenant


def test_tenant_create_records_the_tenant_and_prints_a_working_admin_token_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, data = tmp_path / "config", tmp_path / "data"
    config.mkdir()
    code, created, _ = _run(
        capsys, "tenant", "create", "acme", "--admin-user", "root@acme", "--config-dir", str(config),
        "--data-dir", str(data),
    )  # fmt: skip
    assert code == 0
    assert created is not None
    record = json.loads((config / "tenant-registry" / "acme.json").read_text())
    assert record["tenantId"] == "acme"
    assert record["firstAdmin"] == "root@acme"
    assert str(created["adminToken"]) not in (config / "tenant-registry" / "acme.json").read_text()
    # The token is the tenant administrator's, signed by the key the server verifies with; the
    # record beside the policy files is no policy file (the server starts on that directory).
    with start_backend(data, config_dir=config) as backend:
        answer = httpx.get(
            f"{backend.url}/audit/verify", headers={"Authorization": f"Bearer {created['adminToken']}"}
        )
    assert answer.status_code == 200, answer.text
    verifier = TokenVerifier([load_public_key(data / "keys" / "auth_ed25519.pem.pub")], SystemClock())
    principal = verifier.verify(str(created["adminToken"]))
    assert (principal.tenant_id, principal.user_id) == ("acme", "root@acme")
    assert ADMIN_SCOPE in principal.scopes

    code, _, err = _run(
        capsys,
        "tenant",
        "create",
        "acme",
        "--admin-user",
        "x",
        "--config-dir",
        str(config),
        "--data-dir",
        str(data),
    )
    assert code == 2
    assert "exists already" in err


@pytest.mark.parametrize(
    ("tenant", "user", "problem"),
    [("a/b", "root", "tenant ID"), ("acme", "", "admin user ID")],
)
def test_tenant_create_refuses_bad_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tenant: str, user: str, problem: str
) -> None:
    code, _, err = _run(
        capsys, "tenant", "create", tenant, "--admin-user", user, "--config-dir", str(tmp_path),
        "--data-dir", str(tmp_path / "data"),
    )  # fmt: skip
    assert code == 2
    assert problem in err
    assert not (tmp_path / "tenant-registry").exists()


def test_tenant_create_needs_an_existing_config_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "tenant", "create", "acme", "--admin-user", "root", "--config-dir", str(tmp_path / "missing"),
        "--data-dir", str(tmp_path / "data"),
    )  # fmt: skip
    assert code == 2
    assert "no such directory" in err


# ---------------------------------------------------------------------------------------------- keys


def test_rotated_keys_sign_from_now_on_and_the_former_ones_still_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert main(["keygen", "--data-dir", str(data)]) == 0
    old_auth = load_private_key(data / "keys" / "auth_ed25519.pem")
    old_policy = load_private_key(data / "keys" / "policy_ed25519.pem")
    old_token = TokenIssuer(old_auth, SystemClock()).mint("acme", "jane", timedelta(hours=1))
    capsys.readouterr()

    code, rotated, _ = _run(capsys, "keys", "rotate", "--data-dir", str(data), "--keep-days", "2")
    assert code == 0
    assert rotated is not None
    new_auth = load_private_key(data / "keys" / "auth_ed25519.pem")
    assert new_auth.public_key() != old_auth.public_key()
    assert load_private_key(data / "keys" / "policy_ed25519.pem").public_key() != old_policy.public_key()
    assert [r["key"] for r in rotated["rotated"]] == ["auth", "policy"]
    until = datetime.fromisoformat(rotated["rotated"][0]["formerKeyVerifiesUntil"])
    assert timedelta(days=2) - timedelta(minutes=1) < until - datetime.now(UTC) <= timedelta(days=2)
    # The secrets' values: both auth public keys, and the former policy key.
    assert str(rotated["authPublicKeys"]).count("BEGIN PUBLIC KEY") == 2
    assert str(rotated["retiredPolicyKeys"]).count("BEGIN PUBLIC KEY") == 1
    # Nothing private of the former keys is left.
    retired = sorted(p.name for p in (data / "keys" / "retired").iterdir())
    assert all(name.endswith(".pem.pub") for name in retired)
    if os.name != "nt":
        assert stat.S_IMODE((data / "keys" / "auth_ed25519.pem").stat().st_mode) == 0o600

    new_token = TokenIssuer(new_auth, SystemClock()).mint("acme", "jane", timedelta(hours=1))
    stranger = TokenIssuer(Ed25519PrivateKey.generate(), SystemClock()).mint(
        "acme", "jane", timedelta(hours=1)
    )
    with start_backend(data) as backend:
        for token in (old_token, new_token):
            answer = httpx.get(f"{backend.url}/workspaces", headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 200, answer.text
        refused = httpx.get(f"{backend.url}/workspaces", headers={"Authorization": f"Bearer {stranger}"})
        assert refused.status_code == 401
        keys = httpx.get(f"{backend.url}/policy/keys", headers={"Authorization": f"Bearer {new_token}"})
        assert keys.status_code == 200, keys.text
        assert len(keys.json()["keys"]) == 2


def test_a_former_key_stops_verifying_when_its_grace_period_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from backend.key_rotation import retired_public_keys, rotate_keys

    data = tmp_path / "data"
    now = datetime.now(UTC)
    rotate_keys(data, ("auth",), keep_for=timedelta(days=1), now=now)  # the first key: nothing retired
    assert retired_public_keys(data, "auth", now) == []
    rotate_keys(data, ("auth",), keep_for=timedelta(days=1), now=now)
    assert len(retired_public_keys(data, "auth", now + timedelta(hours=23))) == 1
    assert retired_public_keys(data, "auth", now + timedelta(days=1)) == []
    # The next rotation after the expiry removes the expired file.
    rotate_keys(data, ("auth",), keep_for=timedelta(days=1), now=now + timedelta(days=2))
    assert len(list((data / "keys" / "retired").iterdir())) == 1


def test_rotating_a_key_file_that_is_not_a_key_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys"
    keys.mkdir(parents=True)
    (keys / "auth_ed25519.pem").write_text("not a key")
    code, _, err = _run(capsys, "keys", "rotate", "--data-dir", str(tmp_path), "--key", "auth")
    assert code == 2
    assert "cannot rotate" in err
    assert (keys / "auth_ed25519.pem").read_text() == "not a key"


# ---------------------------------------------------------------------------------------------- purge


def test_purge_dry_run_lists_the_inactive_workspaces_and_removes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stores = open_local_stores(tmp_path)
    long_ago = datetime.now(UTC) - timedelta(days=91)
    recent = datetime.now(UTC) - timedelta(days=1)
    stores.workspaces.touch_or_create(
        WorkspaceRecord("ws_stale", "acme", "jane", WorkspaceScope.LOCAL, ("/old",), long_ago, long_ago)
    )
    stores.workspaces.touch_or_create(
        WorkspaceRecord("ws_recent", "acme", "jane", WorkspaceScope.LOCAL, ("/new",), recent, recent)
    )
    stores.close()
    code, report, _ = _run(capsys, "purge", "--store", "local", "--data-dir", str(tmp_path), "--dry-run")
    assert code == 0
    assert report is not None
    assert report["dryRun"] is True
    assert [w["workspaceId"] for w in report["workspaces"]] == ["ws_stale"]
    assert report["more"] is False
    assert report["expiredSessions"] == 0
    stores = open_local_stores(tmp_path)
    try:
        assert stores.workspaces.get("acme", "ws_stale") is not None
    finally:
        stores.close()


def test_purge_dry_run_on_aws_lists_without_removing(
    moto_endpoint: str,
    aws_credentials: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from backend.storage.aws import open_aws_stores
    from tests.backend.conftest import fresh_aws_settings

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    settings = fresh_aws_settings(moto_endpoint)
    stores = open_aws_stores(settings)
    long_ago = datetime.now(UTC) - timedelta(days=120)
    stores.workspaces.touch_or_create(
        WorkspaceRecord("ws_stale", "acme", "jane", WorkspaceScope.LOCAL, ("/old",), long_ago, long_ago)
    )
    code, report, _ = _run(
        capsys, "purge", "--store", "aws", "--env-prefix", settings.env_prefix, "--dry-run"
    )
    try:
        assert code == 0
        assert report is not None
        assert [w["workspaceId"] for w in report["workspaces"]] == ["ws_stale"]
        assert stores.workspaces.get("acme", "ws_stale") is not None
    finally:
        stores.close()
