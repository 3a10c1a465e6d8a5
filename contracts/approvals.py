"""Approval requests and decisions (seed 000 §10; seed 001 §4.3)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts._base import UtcDatetime, WireModel
from contracts.enums import ApprovalDecision, ApprovalScope, Capability, RiskLevel
from contracts.permissions import PermissionRule


class ApprovalDetails(WireModel):
    """What exactly would happen: the desktop shows these so the user decides on facts."""

    tool_name: str = Field(min_length=1)
    command: str | None = None
    cwd: str | None = None
    path: str | None = None
    url: str | None = None
    method: str | None = None
    diff: str | None = None
    mcp_server: str | None = None
    """An MCP tool's server (``toolName`` is then ``"server/tool"``)."""
    mcp_tool: str | None = None
    """An MCP tool's name as its server calls it."""
    arguments: dict[str, Any] | None = None
    """An MCP tool's arguments, exactly as they would be sent to the server."""
    tool_call_id: str | None = None
    """The tool call the request is for: a step's calls are asked about concurrently, so a client ties
    the request to its call by this, not by the tool's name."""


class ApprovalRequest(WireModel):
    """Sent to the desktop in an ``approval_requested`` event (seed 000 §10.1–10.2)."""

    approval_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    step_id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    action_summary: str = Field(min_length=1)
    risk_level: RiskLevel
    details: ApprovalDetails
    description: str | None = None
    """The approval rule's description (seed 000 §10.1 step 2)."""
    notes: list[str] | None = None
    """Facts the user should weigh, e.g. why a command line could not be verified."""
    timeout_seconds: int | None = Field(default=None, ge=1)
    expires_at: UtcDatetime | None = None
    suggested_rules: list[PermissionRule] | None = None
    """What "Always allow in this project" would save; absent when no saved rule could answer this
    prompt (the policy bundle itself requires it, or the action cannot be described by a rule)."""


class ApprovalDecisionRecord(WireModel):
    """The decision, kept in the checkpoint and persisted to the Approval Service (seed 000 §10.4)."""

    approval_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    step_id: str = Field(min_length=1)
    decision: ApprovalDecision
    reason: str | None = None
    decided_at: UtcDatetime
    scope: ApprovalScope = ApprovalScope.ONCE
    timed_out: bool = False
    capability: Capability | None = None
    """What the decision was about; with ``grantKey``, what a session-wide approval covers."""
    grant_key: str | None = None
    """The normalised target the user saw (path, command, domain); a session grant covers exactly it."""
