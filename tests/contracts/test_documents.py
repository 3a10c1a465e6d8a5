"""Whole documents: the policy bundle, the checkpoint, messages, tools, approvals, the error shape."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from contracts.approvals import ApprovalRequest
from contracts.checkpoint import Checkpoint
from contracts.enums import Capability, ToolStatus
from contracts.errors import ErrorShape
from contracts.messages import ConversationMessage
from contracts.policy import PolicyBundle
from contracts.tools import ToolArtifact, ToolResult
from contracts.validation import invalid_request, validate_json_value

SEED_CHECKPOINT: dict[str, Any] = {
    "checkpointVersion": "1.0",
    "sessionId": "sess_789",
    "workspaceId": "ws_456",
    "tenantId": "tenant_abc",
    "userId": "user_123",
    "sessionStatus": "SESSION_RUNNING",
    "task": {
        "taskId": "task_001",
        "prompt": "Refactor the API client and add tests",
        "status": "running",
        "stepCount": 3,
        "maxSteps": 40,
    },
    "stepCursor": "step_003",
    "thread": [
        {
            "messageId": "msg_001",
            "sessionId": "sess_789",
            "role": "system",
            "content": "...",
            "tokenCount": 150,
            "timestamp": "2026-02-21T15:00:00Z",
        }
    ],
    "sessionTokensUsed": 12540,
    "policyBundleVersion": "2026-02-21.1",
    "checkpointedAt": "2026-02-21T15:10:00Z",
}

POLICY: dict[str, Any] = {
    "sessionId": "sess_789",
    "capabilities": [
        {"name": "File.Read", "allowedPaths": ["/Users/suman/projects/demo"], "maxFileSizeBytes": 1048576},
        {
            "name": "Shell.Exec",
            "blockedCommands": ["rm"],
            "requiresApproval": True,
            "approvalRuleId": "shell",
        },
        {"name": "LLM.Call"},
    ],
    "approvalRules": [{"approvalRuleId": "shell", "title": "Local command execution"}],
    "llmPolicy": {
        "allowedModels": ["claude-sonnet"],
        "maxInputTokens": 100000,
        "maxOutputTokens": 8000,
        "maxSessionTokens": 1000000,
    },
    "expiresAt": "2026-02-21T23:00:00Z",
    "schemaVersion": "1.0",
    "version": "2026-02-21.1",
}


def test_the_seeds_checkpoint_validates_and_round_trips() -> None:
    checkpoint = validate_json_value(Checkpoint, SEED_CHECKPOINT)
    assert checkpoint.to_wire() == {**SEED_CHECKPOINT, "approvalDecisions": []}


def test_a_checkpoint_of_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValidationError) as raised:
        validate_json_value(Checkpoint, {**SEED_CHECKPOINT, "checkpointVersion": "2.0"})
    assert invalid_request(raised.value).details["field"] == "checkpointVersion"


def test_a_policy_bundle_is_indexed_by_capability() -> None:
    bundle = validate_json_value(PolicyBundle, POLICY)
    grant = bundle.grant(Capability.SHELL_EXEC)
    assert grant is not None
    assert grant.requires_approval
    assert bundle.grant(Capability.FILE_DELETE) is None


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (
            lambda p: p["capabilities"].append({"name": "LLM.Call"}),
            "capability LLM.Call is granted more than once",
        ),
        (lambda p: p["capabilities"][1].update(approvalRuleId="missing"), "which the bundle does not define"),
        (lambda p: p["llmPolicy"].update(allowedModels=[]), "must have at least 1 items"),
        (lambda p: p.update(expiresAt="2026-02-21T23:00:00"), "must include a time zone"),
    ],
)
def test_an_inconsistent_policy_bundle_is_refused_with_a_reason(mutate: Any, problem: str) -> None:
    policy = copy.deepcopy(POLICY)
    mutate(policy)
    with pytest.raises(ValidationError) as raised:
        validate_json_value(PolicyBundle, policy)
    assert problem in invalid_request(raised.value).message


def test_tool_fields_belong_to_the_roles_that_use_them() -> None:
    base = {"messageId": "m", "sessionId": "s", "content": "x", "timestamp": "2026-02-21T15:00:00Z"}
    call = {"toolCallId": "c1", "toolName": "ReadFile", "arguments": {"path": "/a"}}
    validate_json_value(ConversationMessage, {**base, "role": "assistant", "toolCalls": [call]})
    validate_json_value(
        ConversationMessage, {**base, "role": "tool", "toolCallId": "c1", "toolStatus": "succeeded"}
    )
    for bad in (
        {**base, "role": "user", "toolCalls": [call]},
        {**base, "role": "tool"},
        {**base, "role": "assistant", "toolCallId": "c1"},
    ):
        with pytest.raises(ValidationError):
            validate_json_value(ConversationMessage, bad)


def test_a_tool_result_says_why_it_failed_and_a_success_carries_no_error() -> None:
    ids = {"toolName": "ReadFile", "sessionId": "s", "taskId": "t", "stepId": "p"}
    error = {"code": "FILE_NOT_FOUND", "message": "No such file: /a"}
    assert (
        validate_json_value(ToolResult, {**ids, "status": "failed", "error": error}).status
        is ToolStatus.FAILED
    )
    with pytest.raises(ValidationError):
        validate_json_value(ToolResult, {**ids, "status": "failed"})
    with pytest.raises(ValidationError):
        validate_json_value(ToolResult, {**ids, "status": "succeeded", "error": error})


def test_an_artifact_has_exactly_one_source() -> None:
    with pytest.raises(ValidationError, match="either dataPath or text"):
        validate_json_value(ToolArtifact, {"artifactType": "tool_output", "artifactName": "out.txt"})


def test_the_seeds_approval_request_validates() -> None:
    request = validate_json_value(
        ApprovalRequest,
        {
            "approvalId": "appr_001",
            "sessionId": "sess_789",
            "taskId": "task_001",
            "stepId": "step_003",
            "title": "Local command execution",
            "actionSummary": "Run: pytest tests/ --verbose",
            "riskLevel": "medium",
            "details": {
                "toolName": "Shell.Exec",
                "command": "pytest tests/ --verbose",
                "cwd": "/Users/suman/projects/demo",
            },
        },
    )
    assert request.details.command == "pytest tests/ --verbose"


def test_the_seeds_error_shape_validates_and_round_trips() -> None:
    seed = {
        "code": "CAPABILITY_DENIED",
        "message": "Shell.Exec is not allowed for this session",
        "retryable": False,
        "details": {"capability": "Shell.Exec", "sessionId": "sess_789"},
    }
    assert validate_json_value(ErrorShape, seed).to_wire() == seed


def test_an_error_shape_with_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValidationError):
        validate_json_value(ErrorShape, {"code": "OOPS", "message": "x"})
