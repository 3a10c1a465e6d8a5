"""The embedded default policy and saved rules (issue: "leaves ordinary commands to the approval mode
(so rules can answer them) and keeps its own required approvals for destructive programs and writes
outside the project")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_runtime.agent_host.policy import ApprovalRequired, Denied, PolicyEnforcer, ToolCallFacts
from agent_runtime.agent_host.policy.saved_rules import SavedRules
from backend.policy.config import build_bundle, builtin_policy
from contracts.enums import ApprovalMode, Capability, OsFamily
from contracts.permissions import PermissionRule, PermissionRuleKind

ROOT = "/home/u/proj"
NOW = datetime(2026, 2, 21, 15, 0, tzinfo=UTC)
EVERYTHING = SavedRules(
    [
        PermissionRule(kind=PermissionRuleKind.COMMAND, pattern=pattern)
        for pattern in ("pytest *", "git *", "rm *", "find *", "ls *", "xargs *", "sudo *", "dd *")
    ]
    + [PermissionRule(kind=PermissionRuleKind.PATH, pattern="**")]
    + [PermissionRule(kind=PermissionRuleKind.DOMAIN, pattern="example.com")],
    os_family=OsFamily.LINUX,
    workspace_roots=[ROOT],
)


@pytest.fixture(scope="module")
def policy() -> PolicyEnforcer:
    bundle = build_bundle(
        builtin_policy().template, [ROOT], session_id="s", expires_at=NOW + timedelta(hours=1)
    )
    return PolicyEnforcer(bundle, os_family=OsFamily.LINUX)


def experience(
    policy: PolicyEnforcer, facts: ToolCallFacts, capability: Capability, mode: ApprovalMode
) -> str:
    outcome = policy.check(facts, capability, now=NOW, approval_mode=mode)
    if isinstance(outcome, Denied):
        return "denied"
    if isinstance(outcome, ApprovalRequired):
        return "rule" if EVERYTHING.answering(outcome, capability) is not None else "asked"
    return "allowed"


def run(line: str) -> ToolCallFacts:
    return ToolCallFacts("RunCommand", {"command": line, "cwd": ROOT})


def write(path: str) -> ToolCallFacts:
    return ToolCallFacts(
        "WriteFile", {"path": path, "content": "x"}, resolved_path=path, workspace_roots=(ROOT,)
    )


@pytest.mark.parametrize(
    ("line", "on_risky", "never"),
    [
        # ordinary commands: the approval mode decides, so a saved rule can answer
        ("pytest -q", "rule", "allowed"),
        ("git status", "rule", "allowed"),
        ("ls -la", "rule", "allowed"),
        # destructive programs: the policy's own approval, in every mode, whatever the rules
        ("rm -rf build", "asked", "asked"),
        ("git push --force origin main", "asked", "asked"),
        ("git reset --hard HEAD~3", "asked", "asked"),
        ("git clean -fdx", "asked", "asked"),
        ("find . -name '*.pyc' -delete", "asked", "asked"),
        ("ls | xargs rm", "asked", "asked"),
        ("pytest && rm -rf /", "asked", "asked"),
        ("dd if=/dev/zero of=x", "asked", "asked"),
        # blocked programs stay denied
        ("sudo pytest", "denied", "denied"),
    ],
)
def test_the_default_policy_leaves_ordinary_commands_to_the_mode_and_asks_for_destructive_ones(
    policy: PolicyEnforcer, line: str, on_risky: str, never: str
) -> None:
    assert experience(policy, run(line), Capability.SHELL_EXEC, ApprovalMode.ON_RISKY_ACTIONS) == on_risky
    assert experience(policy, run(line), Capability.SHELL_EXEC, ApprovalMode.NEVER) == never


def test_the_default_policy_keeps_writes_outside_the_project_and_into_git_from_rules(
    policy: PolicyEnforcer,
) -> None:
    always = ApprovalMode.ALWAYS
    assert experience(policy, write(f"{ROOT}/src/a.py"), Capability.FILE_WRITE, always) == "rule"
    assert experience(policy, write("/home/u/.bashrc"), Capability.FILE_WRITE, always) == "denied"
    assert (
        experience(policy, write(f"{ROOT}/.git/hooks/pre-commit"), Capability.FILE_WRITE, always) == "denied"
    )
    delete = ToolCallFacts(
        "DeleteFile", {"path": f"{ROOT}/a"}, resolved_path=f"{ROOT}/a", workspace_roots=(ROOT,)
    )
    assert experience(policy, delete, Capability.FILE_DELETE, ApprovalMode.ON_RISKY_ACTIONS) == "asked"
    # Web requests are left to the mode: an unknown host is high risk (§8.5), so on_risky_actions
    # asks, and a saved domain rule can answer for its own host only.
    fetch = ToolCallFacts("HttpRequest", {"url": "https://example.com/", "method": "GET"})
    assert experience(policy, fetch, Capability.NETWORK_HTTP, ApprovalMode.ON_RISKY_ACTIONS) == "rule"
    other = ToolCallFacts("HttpRequest", {"url": "https://example.org/", "method": "GET"})
    assert experience(policy, other, Capability.NETWORK_HTTP, ApprovalMode.ON_RISKY_ACTIONS) == "asked"
