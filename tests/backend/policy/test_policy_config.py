"""Per-tenant policy files over the built-in default (the issue's Policy Service section)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from backend.common.auth import Principal
from backend.common.errors import BackendError
from backend.policy.config import PolicyConfigError, PolicyDirectory, builtin_policy, expand_workspace
from backend.policy.service import PolicyService
from contracts.enums import Capability
from contracts.errors import ErrorCode
from contracts.signing import public_key_from_text, verify_bundle
from tests.backend.helpers import ManualClock

ACME = Principal("acme", "alice")


def _write(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _service(directory: Path | None, clock: ManualClock | None = None) -> PolicyService:
    return PolicyService(
        PolicyDirectory(directory, builtin_policy()), Ed25519PrivateKey.generate(), clock or ManualClock()
    )


def test_without_configuration_every_tenant_gets_the_builtin_default() -> None:
    issued = _service(None).issue(ACME, "sess_1", ["/p"], None)
    names = [grant.name for grant in issued.policy_bundle.capabilities]
    # MCP servers need an administrator's allowlist: no MCP tool by default.
    assert sorted(names) == sorted(c for c in Capability if c is not Capability.MCP_INVOKE)
    assert issued.feature_flags == {"approvalService": True, "auditService": True, "telemetryService": True}


def test_a_tenant_file_replaces_the_keys_it_names_and_keeps_the_rest(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "tenants/acme.toml",
        """
bundleTtlSeconds = 3600
featureFlags = { approvalService = false }

[[capabilities]]
name = "File.Read"
allowedPaths = ["${workspace}/src", "/shared/docs"]

[[capabilities]]
name = "LLM.Call"
""",
    )
    clock = ManualClock()
    acme = _service(tmp_path, clock).issue(ACME, "sess_1", ["/home/a/proj"], None)
    assert [g.name for g in acme.policy_bundle.capabilities] == [Capability.FILE_READ, Capability.LLM_CALL]
    assert acme.policy_bundle.capabilities[0].allowed_paths == ["/home/a/proj/src", "/shared/docs"]
    assert acme.policy_bundle.expires_at == clock.now() + timedelta(hours=1)
    assert acme.feature_flags == {"approvalService": False}
    assert acme.policy_bundle.llm_policy.allowed_models == ["*"]
    other = _service(tmp_path).issue(Principal("globex", "bob"), "sess_2", ["/p"], None)
    assert len(other.policy_bundle.capabilities) == 8


def test_a_default_file_applies_to_every_tenant_under_their_own(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "default.json",
        json.dumps(
            {
                "llmPolicy": {
                    "allowedModels": ["gpt-4.1"],
                    "maxInputTokens": 9,
                    "maxOutputTokens": 9,
                    "maxSessionTokens": 99,
                }
            }
        ),
    )
    _write(tmp_path, "tenants/acme.json", json.dumps({"featureFlags": {}}))
    bundle = _service(tmp_path).issue(ACME, "s", [], None).policy_bundle
    assert bundle.llm_policy.allowed_models == ["gpt-4.1"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('sessionId = "x"', "sessionId is set by the service"),
        ("bundleTtlSeconds = 5", "bundleTtlSeconds must be"),
        ('[[capabilities]]\nname = "File.Teleport"', "capabilities[0].name"),
        ('[[capabilities]]\nname = "File.Read"\nallowedPaths = ["${home}"]', "${home} is not allowed"),
        (
            '[[capabilities]]\nname = "Shell.Exec"\nrequiresApproval = true\napprovalRuleId = "nope"',
            "approval rule",
        ),
        ("surprise = 1", "surprise is not a known field"),
        ("not toml at all [", "cannot be read"),
    ],
)
def test_a_bad_policy_file_is_refused_with_a_message_naming_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    _write(tmp_path, "tenants/acme.toml", text)
    directory = PolicyDirectory(tmp_path, builtin_policy())
    assert any(problem in message for message in directory.check()), directory.check()
    with pytest.raises(PolicyConfigError):
        directory.for_tenant("acme")
    with pytest.raises(BackendError) as raised:
        PolicyService(directory, Ed25519PrivateKey.generate(), ManualClock()).issue(ACME, "s", [], None)
    assert raised.value.code is ErrorCode.POLICY_BUNDLE_INVALID
    assert directory.for_tenant("globex") is not None


def test_both_a_toml_and_a_json_file_for_one_tenant_is_ambiguous(tmp_path: Path) -> None:
    _write(tmp_path, "tenants/acme.toml", "")
    _write(tmp_path, "tenants/acme.json", "{}")
    assert PolicyDirectory(tmp_path, builtin_policy()).check()


def test_a_changed_file_is_picked_up_and_changes_the_version(tmp_path: Path) -> None:
    directory = PolicyDirectory(tmp_path, builtin_policy())
    service = PolicyService(directory, Ed25519PrivateKey.generate(), ManualClock())
    before = service.issue(ACME, "s", ["/p"], None).policy_bundle.version
    assert service.issue(ACME, "s2", ["/p"], None).policy_bundle.version == before
    _write(tmp_path, "tenants/acme.toml", '[[capabilities]]\nname = "LLM.Call"\n')
    directory._resolved.clear()  # skip the once-a-second re-check instead of waiting for it
    assert service.issue(ACME, "s3", ["/p"], None).policy_bundle.version != before


def test_bundles_are_signed_and_the_version_ignores_who_and_when(clock: ManualClock) -> None:
    service = _service(None, clock)
    first = service.issue(ACME, "sess_1", ["/p"], None).policy_bundle
    clock.advance(hours=1)
    second = service.issue(Principal("acme", "bob"), "sess_2", ["/p"], None).policy_bundle
    assert first.version == second.version
    assert first.expires_at != second.expires_at
    keys = {k.key_id: public_key_from_text(k.public_key) for k in service.key_set().keys}
    assert verify_bundle(first, keys)
    assert verify_bundle(second, keys)
    assert service.issue(ACME, "s", ["/other"], None).policy_bundle.version != first.version


@pytest.mark.parametrize(
    ("entries", "paths", "expected"),
    [
        (["${workspace}"], ["/a", "/b"], ["/a", "/b"]),
        (["${workspace}/.git"], ["/a/"], ["/a/.git"]),
        (["${workspace}/x/y"], ["C:\\Users\\A\\p"], ["C:\\Users\\A\\p\\x\\y"]),
        (["${workspace}", "/etc"], [], ["/etc"]),
        (["${workspace}", "${workspace}"], ["/a"], ["/a"]),
    ],
)
def test_the_workspace_placeholder_expands_to_each_project_path(
    entries: list[str], paths: list[str], expected: list[str]
) -> None:
    assert expand_workspace(entries, paths) == expected


def test_a_policy_whose_ttl_is_short_expires_bundles_sooner(tmp_path: Path) -> None:
    _write(tmp_path, "tenants/acme.toml", "bundleTtlSeconds = 600\n")
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    bundle = _service(tmp_path, clock).issue(ACME, "s", [], None).policy_bundle
    assert bundle.expires_at == datetime(2026, 1, 1, 0, 10, tzinfo=UTC)


def test_retired_signing_keys_stay_published_so_their_bundles_still_verify() -> None:
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    directory = PolicyDirectory(None, builtin_policy())
    before = PolicyService(directory, old, ManualClock()).issue(ACME, "s", [], None).policy_bundle
    rotated = PolicyService(directory, new, ManualClock(), retired_keys=[old.public_key()])
    keys = {k.key_id: public_key_from_text(k.public_key) for k in rotated.key_set().keys}
    assert len(keys) == 2
    assert verify_bundle(before, keys)
    assert verify_bundle(rotated.issue(ACME, "s", [], None).policy_bundle, keys)


def test_the_builtin_default_offers_both_remote_tools_and_asks_before_every_web_fetch() -> None:
    """WorkspaceSearch only reads the user's own workspace: granted without a question. WebFetch makes
    the backend fetch a page the model chose: granted, under an approval rule that asks in every mode."""
    bundle = _service(None).issue(ACME, "sess_1", ["/p"], None).policy_bundle
    grant = bundle.grant(Capability.BACKEND_TOOL_INVOKE)
    assert grant is not None
    assert grant.allowed_tool_names == ["WorkspaceSearch", "WebFetch"]
    assert not grant.requires_approval
    asking = [rule for rule in bundle.approval_rules if rule.tool_names]
    assert [(rule.approval_rule_id, rule.tool_names) for rule in asking] == [("web-fetch", ["WebFetch"])]


def test_a_client_that_does_not_support_remote_tools_gets_no_grant_for_them() -> None:
    supported = [c for c in Capability if c is not Capability.BACKEND_TOOL_INVOKE]
    bundle = _service(None).issue(ACME, "sess_1", ["/p"], supported).policy_bundle
    assert bundle.grant(Capability.BACKEND_TOOL_INVOKE) is None
