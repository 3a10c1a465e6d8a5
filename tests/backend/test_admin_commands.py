"""``cowork-backend policy set|revoke|show`` and ``session stop`` as real processes (issue 22)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from backend.session.records import SessionRecord
from backend.storage.local import open_local_stores
from contracts.enums import ExecutionEnvironment, SessionStatus, WorkspaceScope
from contracts.methods import ClientInfo
from contracts.validation import validate_json_value
from tests.support.peers import REPO_ROOT

POLICY = """\
[[capabilities]]
name = "File.Read"
allowedPaths = ["${workspace}"]

[[capabilities]]
name = "LLM.Call"

[llmPolicy]
allowedModels = ["claude-sonnet"]
maxInputTokens = 100000
maxOutputTokens = 4096
maxSessionTokens = 1000000
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COWORK_")}
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


@pytest.fixture
def config(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    return directory


def test_policy_set_installs_a_valid_file_and_counts_each_change(config: Path, tmp_path: Path) -> None:
    source = tmp_path / "acme.toml"
    source.write_text(POLICY)
    shown_before = answer(run("policy", "show", "acme", "--config-dir", str(config)))
    installed = answer(run("policy", "set", "acme", str(source), "--config-dir", str(config)))
    written = (config / "tenants" / "acme.toml").read_text()
    shown = answer(run("policy", "show", "acme", "--full", "--config-dir", str(config)))
    as_json = tmp_path / "acme.json"
    as_json.write_text(json.dumps({"capabilities": [{"name": "LLM.Call"}]}))
    replaced = answer(run("policy", "set", "acme", str(as_json), "--config-dir", str(config)))

    assert shown_before["version"] == 0
    assert shown_before["file"] is None
    assert shown_before["revoked"] is False
    assert installed["version"] == 1
    assert installed["file"] == "tenants/acme.toml"
    assert written == POLICY
    assert shown["version"] == 1
    assert shown["revision"] == installed["revision"]
    assert [grant["name"] for grant in shown["policy"]["capabilities"]] == ["File.Read", "LLM.Call"]
    assert shown["policy"]["llmPolicy"]["allowedModels"] == ["claude-sonnet"]
    # One format at a time: the JSON file replaces the TOML one (both would be refused by the services).
    assert replaced["version"] == 2
    assert replaced["file"] == "tenants/acme.json"
    assert not (config / "tenants" / "acme.toml").exists()


def test_policy_revoke_then_set_lifts_the_revocation(config: Path, tmp_path: Path) -> None:
    source = tmp_path / "p.toml"
    source.write_text(POLICY)
    revoked = answer(run("policy", "revoke", "acme", "--reason", "leaked key", "--config-dir", str(config)))
    shown = answer(run("policy", "show", "acme", "--config-dir", str(config)))
    installed = answer(run("policy", "set", "acme", str(source), "--config-dir", str(config)))
    other = answer(run("policy", "show", "globex", "--config-dir", str(config)))

    assert (revoked["version"], revoked["revoked"], revoked["reason"]) == (1, True, "leaked key")
    assert (shown["version"], shown["revoked"]) == (1, True)
    assert (installed["version"], installed["revoked"], installed["reason"]) == (2, False, None)
    # A revocation is one tenant's.
    assert (other["version"], other["revoked"]) == (0, False)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('[[capabilities]]\nname = "File.Teleport"\n', "capabilities"),
        ('sessionId = "sess_1"\n', "sessionId is set by the service"),
        ("bundleTtlSeconds = 5\n", "bundleTtlSeconds"),
        ("this is = not [toml\n", "cannot be read as TOML"),
    ],
)
def test_policy_set_refuses_a_file_the_services_could_not_use_and_changes_nothing(
    config: Path, tmp_path: Path, content: str, says: str
) -> None:
    source = tmp_path / "bad.toml"
    source.write_text(content)
    done = run("policy", "set", "acme", str(source), "--config-dir", str(config))
    shown = answer(run("policy", "show", "acme", "--config-dir", str(config)))

    assert done.returncode == 2
    assert says in done.stderr
    assert done.stdout == ""
    assert not (config / "tenants").exists()
    assert shown["version"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["policy", "revoke", "../etc", "--config-dir", "{config}"],
        ["policy", "set", "acme", "{config}/missing.toml", "--config-dir", "{config}"],
        ["policy", "set", "acme", "{config}/policy.yaml", "--config-dir", "{config}"],
        ["policy", "show", "acme", "--config-dir", "{config}/nowhere"],
    ],
)
def test_policy_commands_refuse_bad_arguments_with_exit_2(config: Path, args: list[str]) -> None:
    (config / "policy.yaml").write_text("capabilities: []\n")
    done = run(*(arg.replace("{config}", str(config)) for arg in args))
    assert done.returncode == 2
    assert done.stderr.startswith("cowork-backend: ")


def _stored_session(data_dir: Path, status: SessionStatus = SessionStatus.SESSION_RUNNING) -> None:
    now = datetime.now(UTC)
    stores = open_local_stores(data_dir)
    try:
        stores.sessions.create(
            SessionRecord(
                session_id="sess_abc",
                tenant_id="local",
                user_id="alice",
                workspace_id="ws_1",
                workspace_scope=WorkspaceScope.GENERAL,
                workspace_paths=(),
                execution_environment=ExecutionEnvironment.DESKTOP,
                status=status,
                client_info=validate_json_value(
                    ClientInfo,
                    {"desktopAppVersion": "1.0.0", "localAgentHostVersion": "1.0.0", "osFamily": "Linux"},
                ),
                supported_capabilities=(),
                granted_capabilities=(),
                policy_bundle_version="v1",
                created_at=now,
                updated_at=now,
                expires_at=now,
            )
        )
    finally:
        stores.close()


def test_session_stop_ends_the_session_once_and_names_who_stopped_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _stored_session(data)
    stopped = answer(
        run("session", "stop", "sess_abc", "--reason", "left the company", "--data-dir", str(data))
    )
    again = answer(run("session", "stop", "sess_abc", "--reason", "twice", "--data-dir", str(data)))
    missing = run("session", "stop", "sess_nope", "--data-dir", str(data))
    other_tenant = run("session", "stop", "sess_abc", "--tenant", "acme", "--data-dir", str(data))

    assert stopped["status"] == "SESSION_CANCELLED"
    assert stopped["endReason"] == "Stopped by an administrator: left the company"
    assert stopped["stoppedBy"].startswith("operator:")
    assert again["endReason"] == stopped["endReason"]
    assert missing.returncode == 2
    assert "sess_nope" in missing.stderr
    assert other_tenant.returncode == 2
