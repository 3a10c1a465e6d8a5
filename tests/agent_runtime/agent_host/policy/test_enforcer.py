"""The enforcer's check algorithm (seed 000 §8.2), approval modes, risk levels (§8.5), expiry (§8.6),
the LLM pre-check (§8.7) and loading a bundle (§3.2 step 5, §8.1)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    Denied,
    PolicyBundleInvalid,
    PolicyEnforcer,
    PolicyExpired,
    PolicyExpiredError,
    ToolCallFacts,
)
from agent_runtime.agent_host.thread import TokenBudget
from contracts.enums import ApprovalMode, Capability, OsFamily, RiskLevel
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.policy.bundles import EXPIRES, NOW, bundle_json, enforcer

ROOT = "/home/u/proj"


def read(path: str, size: int | None = None) -> ToolCallFacts:
    return ToolCallFacts(
        "ReadFile", {"path": path}, resolved_path=path, file_size=size, workspace_roots=(ROOT,)
    )


def write(path: str, content: str = "x") -> ToolCallFacts:
    return ToolCallFacts(
        "WriteFile", {"path": path, "content": content}, resolved_path=path, workspace_roots=(ROOT,)
    )


def run(command: str) -> ToolCallFacts:
    return ToolCallFacts("RunCommand", {"command": command, "cwd": ROOT})


def fetch(url: str) -> ToolCallFacts:
    return ToolCallFacts("HttpRequest", {"url": url, "method": "post"})


def check(policy: PolicyEnforcer, facts: ToolCallFacts, capability: Capability, **kwargs: Any) -> object:
    kwargs.setdefault("approval_mode", ApprovalMode.NEVER)
    return policy.check(facts, capability, now=NOW, **kwargs)


# ------------------------------------------------------------------ grants and scopes


def test_a_capability_that_is_not_granted_is_denied_with_capability_denied() -> None:
    outcome = check(enforcer({"name": "File.Read"}), run("ls"), Capability.SHELL_EXEC)
    assert isinstance(outcome, Denied)
    assert outcome.code is ErrorCode.CAPABILITY_DENIED
    assert "Shell.Exec" in outcome.reason
    assert outcome.to_error().code is ErrorCode.CAPABILITY_DENIED


def test_a_granted_read_inside_the_allowed_paths_is_allowed_at_low_risk() -> None:
    outcome = check(
        enforcer({"name": "File.Read", "allowedPaths": [ROOT]}), read(f"{ROOT}/a.py"), Capability.FILE_READ
    )
    assert outcome == Allowed(RiskLevel.LOW)


def test_a_path_that_is_both_allowed_and_blocked_is_blocked() -> None:
    policy = enforcer({"name": "File.Read", "allowedPaths": [ROOT], "blockedPaths": [f"{ROOT}/.env"]})
    outcome = check(policy, read(f"{ROOT}/.env"), Capability.FILE_READ)
    assert isinstance(outcome, Denied)
    assert outcome.reason.startswith("Path is blocked")


def test_a_file_tool_without_a_resolved_path_is_denied() -> None:
    facts = ToolCallFacts("ReadFile", {"path": "a.py"})
    assert isinstance(check(enforcer({"name": "File.Read"}), facts, Capability.FILE_READ), Denied)


def test_a_file_larger_than_the_limit_is_denied_with_file_too_large() -> None:
    policy = enforcer({"name": "File.Read", "maxFileSizeBytes": 10})
    assert isinstance(check(policy, read(f"{ROOT}/a", size=10), Capability.FILE_READ), Allowed)
    outcome = check(policy, read(f"{ROOT}/a", size=11), Capability.FILE_READ)
    assert isinstance(outcome, Denied)
    assert outcome.code is ErrorCode.FILE_TOO_LARGE


def test_writing_more_than_the_size_limit_is_denied_by_the_content_size() -> None:
    policy = enforcer({"name": "File.Write", "maxFileSizeBytes": 4})
    outcome = check(policy, write(f"{ROOT}/a", "héllo"), Capability.FILE_WRITE)
    assert isinstance(outcome, Denied)
    assert outcome.code is ErrorCode.FILE_TOO_LARGE


def test_a_remote_tool_must_be_on_the_tool_name_allowlist() -> None:
    policy = enforcer({"name": "BackendTool.Invoke", "allowedToolNames": ["search"]})
    assert isinstance(check(policy, ToolCallFacts("search", {}), Capability.BACKEND_TOOL_INVOKE), Allowed)
    assert isinstance(check(policy, ToolCallFacts("deploy", {}), Capability.BACKEND_TOOL_INVOKE), Denied)


def test_network_requests_are_denied_when_the_task_turns_the_network_off() -> None:
    policy = enforcer({"name": "Network.Http"})
    outcome = check(policy, fetch("https://example.com"), Capability.NETWORK_HTTP, allow_network=False)
    assert isinstance(outcome, Denied)


def test_a_command_without_a_command_string_is_an_invalid_request() -> None:
    outcome = check(enforcer({"name": "Shell.Exec"}), ToolCallFacts("RunCommand", {}), Capability.SHELL_EXEC)
    assert isinstance(outcome, Denied)
    assert outcome.code is ErrorCode.INVALID_REQUEST


def test_harmless_shell_builtins_need_no_entry_on_the_allowlist_but_obey_the_blocklist() -> None:
    allow = enforcer({"name": "Shell.Exec", "allowedCommands": ["make"]})
    assert isinstance(check(allow, run("cd src && echo building && make"), Capability.SHELL_EXEC), Allowed)
    block = enforcer({"name": "Shell.Exec", "blockedCommands": ["echo"]})
    assert isinstance(check(block, run("cd src && echo hi"), Capability.SHELL_EXEC), Denied)


def test_an_unverifiable_command_is_denied_without_an_approval_rule_and_names_the_problem() -> None:
    outcome = check(
        enforcer({"name": "Shell.Exec", "blockedCommands": ["rm"]}), run("eval x"), Capability.SHELL_EXEC
    )
    assert isinstance(outcome, Denied)
    assert "eval" in outcome.reason


def test_an_unverifiable_command_needs_approval_even_in_never_mode_when_the_grant_has_a_rule() -> None:
    rules = [{"approvalRuleId": "r", "title": "Local command execution", "description": "Runs a command"}]
    policy = enforcer({"name": "Shell.Exec", "blockedCommands": ["rm"], "approvalRuleId": "r"}, rules=rules)
    outcome = check(policy, run("$TOOL --version"), Capability.SHELL_EXEC)
    assert isinstance(outcome, ApprovalRequired)
    assert outcome.reasons == (ApprovalReason.UNVERIFIABLE_COMMAND,)
    assert outcome.risk_level is RiskLevel.HIGH
    assert outcome.rule_id == "r"
    assert outcome.title == "Local command execution"
    assert outcome.notes
    assert "command name" in outcome.notes[0]


# ------------------------------------------------------------------ approval modes and risk


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (ApprovalMode.NEVER, ApprovalRequired),
        (ApprovalMode.ON_RISKY_ACTIONS, ApprovalRequired),
        (ApprovalMode.ALWAYS, ApprovalRequired),
    ],
)
def test_the_bundle_requiring_approval_asks_in_every_mode(mode: ApprovalMode, expected: type) -> None:
    policy = enforcer({"name": "File.Read", "requiresApproval": True})
    outcome = check(policy, read(f"{ROOT}/a"), Capability.FILE_READ, approval_mode=mode)
    assert isinstance(outcome, expected)
    assert isinstance(outcome, ApprovalRequired)
    assert outcome.reasons[0] is ApprovalReason.BUNDLE_REQUIRES
    assert outcome.rule_id is None
    assert outcome.title == "Read a file"
    assert outcome.action_summary == f"Read: {ROOT}/a"


def test_a_denial_wins_over_any_approval() -> None:
    policy = enforcer({"name": "File.Read", "requiresApproval": True, "blockedPaths": [ROOT]})
    outcome = check(policy, read(f"{ROOT}/a"), Capability.FILE_READ, approval_mode=ApprovalMode.ALWAYS)
    assert isinstance(outcome, Denied)


@pytest.mark.parametrize(
    ("capability", "facts", "risk"),
    [
        (Capability.FILE_READ, read(f"{ROOT}/a"), RiskLevel.LOW),
        (Capability.FILE_WRITE, write(f"{ROOT}/a"), RiskLevel.MEDIUM),
        (Capability.FILE_WRITE, write("/etc/hosts"), RiskLevel.HIGH),
        (Capability.FILE_DELETE, read(f"{ROOT}/a"), RiskLevel.HIGH),
        (Capability.WORKSPACE_UPLOAD, ToolCallFacts("UploadArtifact", {}), RiskLevel.LOW),
    ],
)
def test_risk_levels_follow_the_seed_table(
    capability: Capability, facts: ToolCallFacts, risk: RiskLevel
) -> None:
    outcome = check(enforcer({"name": capability.value}), facts, capability)
    assert outcome == Allowed(risk)


def test_a_command_is_medium_risk_when_every_program_is_allowlisted_and_high_otherwise() -> None:
    listed = enforcer({"name": "Shell.Exec", "allowedCommands": ["pytest"]})
    assert check(listed, run("pytest -q"), Capability.SHELL_EXEC) == Allowed(RiskLevel.MEDIUM)
    unlisted = enforcer({"name": "Shell.Exec"})
    assert check(unlisted, run("pytest -q"), Capability.SHELL_EXEC) == Allowed(RiskLevel.HIGH)


def test_a_request_is_medium_risk_to_an_allowlisted_domain_and_high_without_a_list() -> None:
    listed = enforcer({"name": "Network.Http", "allowedDomains": ["example.com"]})
    assert check(listed, fetch("https://example.com"), Capability.NETWORK_HTTP) == Allowed(RiskLevel.MEDIUM)
    unlisted = enforcer({"name": "Network.Http"})
    assert check(unlisted, fetch("https://example.com"), Capability.NETWORK_HTTP) == Allowed(RiskLevel.HIGH)


def test_on_risky_actions_asks_for_high_risk_actions_only() -> None:
    policy = enforcer({"name": "File.Write"}, {"name": "File.Delete"})
    mode = ApprovalMode.ON_RISKY_ACTIONS
    assert isinstance(check(policy, write(f"{ROOT}/a"), Capability.FILE_WRITE, approval_mode=mode), Allowed)
    outside = check(policy, write("/etc/hosts"), Capability.FILE_WRITE, approval_mode=mode)
    assert isinstance(outside, ApprovalRequired)
    assert outside.reasons == (ApprovalReason.RISKY_ACTION,)
    assert outside.risk_level is RiskLevel.HIGH
    assert outside.notes == ("The file is outside the project folders.",)
    assert isinstance(
        check(policy, read(f"{ROOT}/a"), Capability.FILE_DELETE, approval_mode=mode), ApprovalRequired
    )


def test_always_asks_for_everything_except_reads_inside_the_project_and_uploads() -> None:
    policy = enforcer(
        {"name": "File.Read"}, {"name": "File.Write"}, {"name": "Workspace.Upload"}, {"name": "Shell.Exec"}
    )
    mode = ApprovalMode.ALWAYS
    assert isinstance(check(policy, read(f"{ROOT}/a"), Capability.FILE_READ, approval_mode=mode), Allowed)
    upload = ToolCallFacts("UploadArtifact", {})
    assert isinstance(check(policy, upload, Capability.WORKSPACE_UPLOAD, approval_mode=mode), Allowed)
    outside = check(policy, read("/etc/hosts"), Capability.FILE_READ, approval_mode=mode)
    assert isinstance(outside, ApprovalRequired)
    assert outside.reasons == (ApprovalReason.ALWAYS_MODE,)
    assert isinstance(
        check(policy, write(f"{ROOT}/a"), Capability.FILE_WRITE, approval_mode=mode), ApprovalRequired
    )
    command = check(policy, run("pytest"), Capability.SHELL_EXEC, approval_mode=mode)
    assert isinstance(command, ApprovalRequired)
    assert command.action_summary == "Run: pytest"
    assert command.details.command == "pytest"
    assert command.details.cwd == ROOT


def test_an_approval_rule_supplies_the_texts_and_can_raise_the_risk_level() -> None:
    rules = [
        {
            "approvalRuleId": "net",
            "title": "Outbound request",
            "description": "Leaves the machine",
            "riskLevel": "high",
        }
    ]
    policy = enforcer(
        {
            "name": "Network.Http",
            "allowedDomains": ["example.com"],
            "requiresApproval": True,
            "approvalRuleId": "net",
        },
        rules=rules,
    )
    outcome = check(policy, fetch("https://example.com/a"), Capability.NETWORK_HTTP)
    assert isinstance(outcome, ApprovalRequired)
    assert (outcome.rule_id, outcome.title, outcome.description) == (
        "net",
        "Outbound request",
        "Leaves the machine",
    )
    assert outcome.risk_level is RiskLevel.HIGH
    assert outcome.action_summary == "POST https://example.com/a"
    assert outcome.details.url == "https://example.com/a"


# ------------------------------------------------------------------ expiry and the LLM pre-check


def test_an_expired_policy_is_reported_before_any_tool_check() -> None:
    policy = enforcer({"name": "File.Read"})
    outcome = policy.check(
        read(f"{ROOT}/a"), Capability.FILE_READ, now=EXPIRES, approval_mode=ApprovalMode.NEVER
    )
    assert isinstance(outcome, PolicyExpired)
    assert outcome.code is ErrorCode.POLICY_EXPIRED
    assert outcome.expires_at == EXPIRES
    assert outcome.to_error().code is ErrorCode.POLICY_EXPIRED
    outcome = policy.check(
        read(f"{ROOT}/a"),
        Capability.FILE_READ,
        now=EXPIRES - timedelta(seconds=1),
        approval_mode=ApprovalMode.NEVER,
    )
    assert isinstance(outcome, Allowed)


def test_the_llm_precheck_checks_expiry_grant_model_and_budget() -> None:
    policy = enforcer({"name": "LLM.Call"})
    budget = TokenBudget(1_000)
    assert isinstance(
        policy.check_llm_call("model-a", now=NOW, budget=budget, estimated_tokens=1_000), Allowed
    )
    assert isinstance(policy.check_llm_call("model-a", now=EXPIRES, budget=budget), PolicyExpired)
    unknown = policy.check_llm_call("model-z", now=NOW, budget=budget)
    assert isinstance(unknown, Denied)
    assert unknown.code is ErrorCode.CAPABILITY_DENIED
    over = policy.check_llm_call("model-a", now=NOW, budget=budget, estimated_tokens=1_001)
    assert isinstance(over, Denied)
    assert over.code is ErrorCode.LLM_BUDGET_EXCEEDED
    not_granted = enforcer({"name": "File.Read"}).check_llm_call("model-a", now=NOW)
    assert isinstance(not_granted, Denied)
    assert "LLM.Call" in not_granted.reason


def test_a_policy_that_allows_any_model_admits_the_locally_configured_one() -> None:
    policy = enforcer({"name": "LLM.Call"}, allowedModels=["*"])
    assert isinstance(policy.check_llm_call("llama3.1", now=NOW), Allowed)


def test_a_naive_clock_reading_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        enforcer({"name": "LLM.Call"}).is_expired(NOW.replace(tzinfo=None))


# ------------------------------------------------------------------ loading (§3.2 step 5, §8.1)


def test_a_bundle_from_the_wire_is_loaded_from_json_text() -> None:
    text = json.dumps(bundle_json({"name": "File.Read"}))
    policy = PolicyEnforcer.load(text, session_id="sess_1", now=NOW, os_family=OsFamily.MACOS)
    assert policy.granted == frozenset({Capability.FILE_READ})
    assert policy.grant(Capability.FILE_READ) is not None
    assert policy.grant(Capability.SHELL_EXEC) is None


def test_another_sessions_bundle_is_refused() -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        PolicyEnforcer.load(bundle_json(), session_id="sess_2", now=NOW, os_family=OsFamily.LINUX)
    assert caught.value.code is ErrorCode.POLICY_BUNDLE_INVALID


def test_an_unsupported_schema_version_is_refused() -> None:
    data = {**bundle_json(), "schemaVersion": "9.9"}
    with pytest.raises(PolicyBundleInvalid) as caught:
        PolicyEnforcer.load(data, session_id="sess_1", now=NOW, os_family=OsFamily.LINUX)
    assert caught.value.shape.details["field"] == "policyBundle.schemaVersion"


def test_an_expired_bundle_is_refused_at_load() -> None:
    with pytest.raises(PolicyExpiredError) as caught:
        PolicyEnforcer.load(bundle_json(), session_id="sess_1", now=EXPIRES, os_family=OsFamily.LINUX)
    assert caught.value.code is ErrorCode.POLICY_EXPIRED


def test_a_malformed_bundle_is_refused_naming_the_field_without_library_text() -> None:
    data = bundle_json()
    data["llmPolicy"]["maxSessionTokens"] = "lots"
    with pytest.raises(PolicyBundleInvalid) as caught:
        PolicyEnforcer.load(data, session_id="sess_1", now=NOW, os_family=OsFamily.LINUX)
    assert caught.value.shape.details["field"] == "policyBundle.llmPolicy.maxSessionTokens"
    assert "pydantic" not in caught.value.shape.message


@pytest.mark.parametrize(
    "grant",
    [
        {"name": "File.Read", "allowedPaths": ["relative/dir"]},
        {"name": "File.Read", "blockedPaths": ["/a/../b"]},
        {"name": "File.Read", "blockedPaths": ["~/.ssh"]},
        {"name": "Shell.Exec", "blockedCommands": ["git push"]},
        {"name": "Shell.Exec", "allowedCommands": [""]},
        {"name": "Network.Http", "allowedDomains": ["https://example.com/path"]},
        {"name": "Network.Http", "allowedDomains": ["*"]},
        {"name": "Network.Http", "allowedDomains": ["*.10.0.0.1"]},
    ],
)
def test_a_bundle_entry_that_cannot_be_enforced_as_written_is_refused_at_load(grant: dict[str, Any]) -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer(grant)
    assert caught.value.code is ErrorCode.POLICY_BUNDLE_INVALID


def test_windows_path_entries_must_name_a_drive_or_share() -> None:
    with pytest.raises(PolicyBundleInvalid):
        enforcer({"name": "File.Read", "allowedPaths": ["\\Users\\u"]}, os_family=OsFamily.WINDOWS)
    policy = enforcer({"name": "File.Read", "allowedPaths": ["C:\\"]}, os_family=OsFamily.WINDOWS)
    facts = ToolCallFacts("ReadFile", {}, resolved_path="c:\\any\\file.txt")
    assert isinstance(check(policy, facts, Capability.FILE_READ), Allowed)


def test_an_invalid_redaction_pattern_in_the_bundle_is_refused_at_load() -> None:
    with pytest.raises(PolicyBundleInvalid) as caught:
        enforcer(redaction={"extraPatterns": [{"kind": "bad", "pattern": "(a)\\1"}]})
    assert caught.value.shape.details["field"] == "llmPolicy.redaction.extraPatterns"
