"""Uploads and remote tools under the policy (seed 001 §5, seed 000 §7.6, §8.2).

``Workspace.Upload``: UploadArtifact reads its file under the File.Read rules and sends it within the
upload grant's size limit; the runtime's own uploads (artifacts, history) pass ``check_upload``.
``BackendTool.Invoke``: the grant's ``allowedToolNames``, and approval rules naming a remote tool ask in
every approval mode, showing the arguments.
"""

from __future__ import annotations

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
    ToolCallFacts,
)
from contracts.enums import ApprovalMode, Capability
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

PROJECT = "/home/me/project"
READ = {"name": "File.Read", "allowedPaths": [PROJECT], "blockedPaths": [f"{PROJECT}/.env"]}
UPLOAD = {"name": "Workspace.Upload", "maxFileSizeBytes": 1000}
WEB_FETCH_RULE = {
    "approvalRuleId": "web-fetch",
    "title": "Fetch a web page",
    "riskLevel": "medium",
    "toolNames": ["WebFetch"],
}


def upload_call(path: str, size: int | None = 10) -> ToolCallFacts:
    return ToolCallFacts(
        "UploadArtifact", {"path": path}, resolved_path=path, file_size=size, workspace_roots=(PROJECT,)
    )


def check_upload_call(
    policy: PolicyEnforcer, facts: ToolCallFacts, mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS
) -> object:
    return policy.check(facts, Capability.WORKSPACE_UPLOAD, now=NOW, approval_mode=mode)


# ------------------------------------------------------------------ the runtime's own uploads


def test_an_upload_needs_the_grant_and_fits_its_size_limit() -> None:
    assert isinstance(enforcer(UPLOAD).check_upload(1000), Allowed)
    too_large = enforcer(UPLOAD).check_upload(1001)
    assert isinstance(too_large, Denied)
    assert too_large.code is ErrorCode.FILE_TOO_LARGE
    assert "1,000 bytes" in too_large.reason
    assert "1,001 bytes" in too_large.reason
    ungranted = enforcer(READ).check_upload(1)
    assert ungranted == Denied("Capability not granted: Workspace.Upload")
    assert isinstance(enforcer({"name": "Workspace.Upload"}).check_upload(10**12), Allowed)


def test_the_runtimes_own_uploads_never_ask_even_when_the_grant_requires_approval() -> None:
    """They record what the user already allowed and happen between steps, with nobody to ask."""
    policy = enforcer(
        {"name": "Workspace.Upload", "requiresApproval": True, "approvalRuleId": "r"},
        rules=[{"approvalRuleId": "r", "title": "Upload"}],
    )
    assert isinstance(policy.check_upload(5), Allowed)


# ------------------------------------------------------------------ UploadArtifact


def test_upload_artifact_reads_inside_the_file_read_paths_only() -> None:
    policy = enforcer(READ, UPLOAD)
    assert isinstance(check_upload_call(policy, upload_call(f"{PROJECT}/report.md")), Allowed)
    outside = check_upload_call(policy, upload_call("/etc/passwd"))
    assert outside == Denied("Path not in allowed paths: /etc/passwd")
    blocked = check_upload_call(policy, upload_call(f"{PROJECT}/.env"))
    assert blocked == Denied(f"Path is blocked: {PROJECT}/.env")


def test_upload_artifact_without_file_read_is_denied() -> None:
    outcome = check_upload_call(enforcer(UPLOAD), upload_call(f"{PROJECT}/report.md"))
    assert isinstance(outcome, Denied)
    assert "File.Read" in outcome.reason


def test_upload_artifact_without_workspace_upload_is_denied() -> None:
    outcome = check_upload_call(enforcer(READ), upload_call(f"{PROJECT}/report.md"))
    assert outcome == Denied("Capability not granted: Workspace.Upload")


@pytest.mark.parametrize(
    ("grants", "size"),
    [
        ((READ, UPLOAD), 1001),  # over the upload grant's maxFileSizeBytes
        (({**READ, "maxFileSizeBytes": 100}, {"name": "Workspace.Upload"}), 101),  # over File.Read's
    ],
    ids=["upload-limit", "read-limit"],
)
def test_upload_artifact_of_a_file_over_a_size_limit_is_denied(
    grants: tuple[dict[str, Any], ...], size: int
) -> None:
    outcome = check_upload_call(enforcer(*grants), upload_call(f"{PROJECT}/big.bin", size))
    assert isinstance(outcome, Denied)
    assert outcome.code is ErrorCode.FILE_TOO_LARGE


def test_upload_artifact_asks_where_reading_the_file_would_ask() -> None:
    anywhere = {"name": "File.Read"}
    policy = enforcer(anywhere, UPLOAD)
    # "always" leaves uploads of the project's own files alone, but not a file read from elsewhere.
    inside = check_upload_call(policy, upload_call(f"{PROJECT}/a.txt"), ApprovalMode.ALWAYS)
    assert isinstance(inside, Allowed)
    elsewhere = check_upload_call(policy, upload_call("/srv/data.csv"), ApprovalMode.ALWAYS)
    assert isinstance(elsewhere, ApprovalRequired)
    assert elsewhere.action_summary == "Upload: /srv/data.csv"
    assert elsewhere.details.path == "/srv/data.csv"
    asks_to_read = enforcer({**anywhere, "requiresApproval": True}, UPLOAD)
    asked = check_upload_call(asks_to_read, upload_call(f"{PROJECT}/a.txt"), ApprovalMode.NEVER)
    assert isinstance(asked, ApprovalRequired)
    assert asked.reasons == (ApprovalReason.BUNDLE_REQUIRES,)


def test_upload_artifact_on_an_expired_bundle_is_refused_as_expired() -> None:
    policy = enforcer(READ, UPLOAD)
    later = NOW + timedelta(hours=2)
    outcome = policy.check(
        upload_call(f"{PROJECT}/a.txt"),
        Capability.WORKSPACE_UPLOAD,
        now=later,
        approval_mode=ApprovalMode.NEVER,
    )
    assert isinstance(outcome, PolicyExpired)


# ------------------------------------------------------------------ remote tools


def remote(
    policy: PolicyEnforcer, tool: str, mode: ApprovalMode = ApprovalMode.NEVER, **arguments: Any
) -> object:
    return policy.check(
        ToolCallFacts(tool, arguments), Capability.BACKEND_TOOL_INVOKE, now=NOW, approval_mode=mode
    )


def test_a_remote_tool_named_by_an_approval_rule_asks_in_every_mode_and_shows_its_arguments() -> None:
    policy = enforcer(
        {"name": "BackendTool.Invoke", "allowedToolNames": ["WorkspaceSearch", "WebFetch"]},
        rules=[WEB_FETCH_RULE],
    )
    assert isinstance(remote(policy, "WorkspaceSearch", query="backup"), Allowed)
    for mode in ApprovalMode:
        asked = remote(policy, "WebFetch", mode, url="https://example.org/a")
        assert isinstance(asked, ApprovalRequired), mode
        assert ApprovalReason.BUNDLE_REQUIRES in asked.reasons
        assert asked.rule_id == "web-fetch"
        assert asked.title == "Fetch a web page"
        assert asked.action_summary == "Use remote tool: WebFetch on https://example.org/a"
        assert asked.details.arguments == {"url": "https://example.org/a"}
        # Not a host grant: the session approval of a remote tool covers the tool (or this call).
        assert asked.details.url is None


def test_a_remote_tool_off_the_allowlist_is_denied_whatever_the_approval_rules_say() -> None:
    policy = enforcer(
        {"name": "BackendTool.Invoke", "allowedToolNames": ["WorkspaceSearch"]}, rules=[WEB_FETCH_RULE]
    )
    assert remote(policy, "WebFetch", url="https://example.org") == Denied(
        "Remote tool not allowed: WebFetch"
    )
    assert remote(enforcer(READ), "WorkspaceSearch", query="x") == Denied(
        "Capability not granted: BackendTool.Invoke"
    )


def test_an_approval_rule_may_name_remote_tools_by_name_and_mcp_tools_by_pattern() -> None:
    rule = {**WEB_FETCH_RULE, "toolNames": ["WebFetch", "docs/*"]}
    assert enforcer({"name": "BackendTool.Invoke"}, rules=[rule]).remote_approval_rule("WebFetch") is not None
    for bad in ("Web Fetch", "docs/", "1tool", ""):
        with pytest.raises(PolicyBundleInvalid):
            enforcer({"name": "BackendTool.Invoke"}, rules=[{**WEB_FETCH_RULE, "toolNames": [bad]}])
