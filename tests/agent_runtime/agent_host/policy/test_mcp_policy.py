"""MCP tools under the policy (seed 003 §9.4): ``Mcp.Invoke`` with its ``allowedToolNames``, approval
rules naming tools, the grant's ``requiresApproval``, risk from the server's hints, and the approval
request showing server, tool and arguments."""

from __future__ import annotations

from typing import Any

import pytest

from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    Denied,
    PolicyBundleInvalid,
    PolicyEnforcer,
    ToolCallFacts,
)
from contracts.enums import ApprovalMode, Capability, RiskLevel
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

DELETE_RULE = {
    "approvalRuleId": "docs-delete",
    "title": "Delete a documentation page",
    "description": "The page is removed for every reader.",
    "riskLevel": "high",
    "toolNames": ["docs/delete_page", "crm/*"],
}


def grant(*patterns: str, **extra: Any) -> dict[str, Any]:
    return {"name": "Mcp.Invoke", "allowedToolNames": list(patterns), **extra}


def mcp(tool: str, destructive: bool = False, **arguments: Any) -> ToolCallFacts:
    return ToolCallFacts(tool, arguments, destructive=destructive)


def check(policy: PolicyEnforcer, facts: ToolCallFacts, mode: ApprovalMode = ApprovalMode.NEVER) -> object:
    return policy.check(facts, Capability.MCP_INVOKE, now=NOW, approval_mode=mode)


def test_only_tools_the_allowlist_names_are_allowed() -> None:
    policy = enforcer(grant("docs/search", "org/*"))
    assert isinstance(check(policy, mcp("docs/search")), Allowed)
    assert isinstance(check(policy, mcp("org/anything")), Allowed)
    for refused in ("docs/delete_page", "docs/search2", "doc/search", "orgs/x", "evil/search"):
        outcome = check(policy, mcp(refused))
        assert isinstance(outcome, Denied), refused
        assert outcome.reason == f"MCP tool not allowed by the policy: {refused}"


@pytest.mark.parametrize(
    "name",
    ["search", "docs", "docs/", "/search", "do cs/search", "docs/a b", "server-name-longer-than-32-chars/x"],
)
def test_a_name_that_is_not_server_slash_tool_is_denied(name: str) -> None:
    outcome = check(enforcer(grant("docs/*")), mcp(name))
    assert isinstance(outcome, Denied), name


def test_without_the_grant_or_with_an_empty_allowlist_nothing_is_allowed() -> None:
    assert isinstance(check(enforcer({"name": "File.Read"}), mcp("docs/search")), Denied)
    assert isinstance(check(enforcer(grant()), mcp("docs/search")), Denied)
    assert isinstance(check(enforcer({"name": "Mcp.Invoke"}), mcp("docs/search")), Denied)


def test_an_approval_rule_naming_the_tool_asks_in_every_mode_with_its_texts_and_the_call() -> None:
    policy = enforcer(grant("docs/*", "crm/*"), rules=[DELETE_RULE])
    outcome = check(policy, mcp("docs/delete_page", page="old", force=True))
    assert isinstance(outcome, ApprovalRequired)
    assert outcome.rule_id == "docs-delete"
    assert outcome.title == "Delete a documentation page"
    assert outcome.description == "The page is removed for every reader."
    assert outcome.risk_level is RiskLevel.HIGH
    assert outcome.reasons == (ApprovalReason.BUNDLE_REQUIRES,)
    assert outcome.details.tool_name == "docs/delete_page"
    assert outcome.details.mcp_server == "docs"
    assert outcome.details.mcp_tool == "delete_page"
    assert outcome.details.arguments == {"page": "old", "force": True}
    assert outcome.action_summary == "Use delete_page of the MCP server docs"
    # A wildcard in the rule covers every tool of that server; other tools are not asked about.
    assert isinstance(check(policy, mcp("crm/export")), ApprovalRequired)
    assert isinstance(check(policy, mcp("docs/search")), Allowed)


def test_the_grants_requires_approval_asks_for_every_mcp_tool() -> None:
    policy = enforcer(
        grant("docs/*", requiresApproval=True, approvalRuleId="mcp"),
        rules=[{"approvalRuleId": "mcp", "title": "Use an MCP tool"}],
    )
    outcome = check(policy, mcp("docs/search", query="q"))
    assert isinstance(outcome, ApprovalRequired)
    assert outcome.title == "Use an MCP tool"
    assert ApprovalReason.BUNDLE_REQUIRES in outcome.reasons


def test_risk_is_medium_and_high_when_the_server_does_not_say_the_tool_is_harmless() -> None:
    policy = enforcer(grant("docs/*"))
    harmless = check(policy, mcp("docs/search"), ApprovalMode.ON_RISKY_ACTIONS)
    assert isinstance(harmless, Allowed)
    assert harmless.risk_level is RiskLevel.MEDIUM
    risky = check(policy, mcp("docs/drop", destructive=True), ApprovalMode.ON_RISKY_ACTIONS)
    assert isinstance(risky, ApprovalRequired)
    assert risky.risk_level is RiskLevel.HIGH
    assert risky.reasons == (ApprovalReason.RISKY_ACTION,)
    assert any("destroy" in note for note in risky.notes)
    # The approval modes apply as for built-in tools.
    assert isinstance(check(policy, mcp("docs/search"), ApprovalMode.ALWAYS), ApprovalRequired)
    assert isinstance(check(policy, mcp("docs/drop", destructive=True), ApprovalMode.NEVER), Allowed)


def test_a_bundle_with_malformed_tool_patterns_is_refused_at_load() -> None:
    with pytest.raises(PolicyBundleInvalid, match="allowedToolNames"):
        enforcer(grant("docs"))
    with pytest.raises(PolicyBundleInvalid, match="toolNames"):
        enforcer(grant("docs/*"), rules=[{**DELETE_RULE, "toolNames": ["*"]}])
