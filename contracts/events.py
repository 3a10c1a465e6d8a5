"""Events: ``SessionEvent`` notifications to the desktop (seed 000 §12, 001 §6.1) and the audit and
telemetry envelope (seed 001 §6.3).

Every event type has a payload model; a ``SessionEvent`` whose payload does not fit its type is
refused, naming the payload's field. Types beyond the seeds' two lists are marked with the section
that implies them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator
from pydantic_core.core_schema import ValidationInfo

from contracts._base import UtcDatetime, WireModel
from contracts.approvals import ApprovalRequest
from contracts.checklist import TaskListEventPayload
from contracts.compaction import ContextCompactedPayload
from contracts.enums import (
    ApprovalDecision,
    ApprovalMode,
    ApprovalScope,
    ArtifactType,
    BoundedContext,
    Capability,
    Component,
    ExecutionEnvironment,
    Severity,
    ToolStatus,
)
from contracts.errors import ErrorCode, ErrorShape
from contracts.instructions import InstructionFile
from contracts.mcp import ElicitationAction, McpServerSource, McpServerState
from contracts.observability import (
    ApprovalShownPayload,
    PolicyDecisionPayload,
    PolicyLoadedPayload,
    RuntimeStartedPayload,
    UpdateInstalledPayload,
    UpdateRolledBackPayload,
)
from contracts.validation import FieldProblem, describe, field_path


class EventType(StrEnum):
    SESSION_CREATED = "session_created"
    SESSION_STARTED = "session_started"
    SESSION_COMPLETED = "session_completed"
    SESSION_FAILED = "session_failed"
    SESSION_CANCELLED = "session_cancelled"  # 000 §3.4 step 4
    SESSION_PAUSED = "session_paused"  # 000 §3.3 RUNNING → PAUSED "notify Desktop App"
    SESSION_RESUMED = "session_resumed"  # 000 §3.3 PAUSED → RUNNING, §9.5
    TASK_STARTED = "task_started"  # 000 §4.1: the desktop must see a task begin …
    TASK_COMPLETED = "task_completed"  # … and how it ended (runTask's return values)
    TASK_FAILED = "task_failed"
    TASK_CANCELLED = "task_cancelled"
    STEP_STARTED = "step_started"
    STEP_COMPLETED = "step_completed"
    STEP_LIMIT_APPROACHING = "step_limit_approaching"
    TEXT_CHUNK = "text_chunk"
    LLM_REQUEST_STARTED = "llm_request_started"
    LLM_REQUEST_COMPLETED = "llm_request_completed"
    TOOL_REQUESTED = "tool_requested"
    TOOL_COMPLETED = "tool_completed"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_RESOLVED = "approval_resolved"
    APPROVAL_TIMEOUT = "approval_timeout"  # 000 §10.3
    POLICY_EXPIRED = "policy_expired"
    POLICY_UPDATED = "policy_updated"  # 001 Phase 3 server push: a changed policy swapped in between steps
    POLICY_REVOKED = "policy_revoked"  # 001 Phase 3 policy revocation: the session pauses
    SESSION_STOP_REQUESTED = "session_stop_requested"  # 001 §1 "remote admin stop": then it is cancelled
    CHECKPOINT_RECOVERY_FAILED = "checkpoint_recovery_failed"  # 000 §9.7 "notify the Desktop App"
    ARTIFACT_UPLOAD_FAILED = "artifact_upload_failed"  # 000 §11 "warn Desktop App"
    REDACTION_APPLIED = "redaction_applied"  # 000 §8.7
    CONTEXT_COMPACTED = "context_compacted"  # 000 §5.4: the user sees where the thread was compacted
    TASK_LIST_CREATED = "task_list_created"  # 002 "Session Checklist Primitive"
    TASK_LIST_UPDATED = "task_list_updated"
    TASK_LIST_VERIFICATION_NUDGED = "task_list_verification_nudged"
    CONVERSATION_SNAPSHOT = "conversation_snapshot"  # 002: the session_runtime_v2 snapshot (local log only)
    MCP_SERVER_STATE_CHANGED = "mcp_server_state_changed"  # 003 §9.2, §9.3 "notify": contracts.mcp
    MCP_PROGRESS = "mcp_progress"  # MCP progress notifications of a running tool call
    MCP_AUTHORIZATION_REQUIRED = "mcp_authorization_required"  # MCP authorization: the user signs in
    MCP_CONFIG_WARNING = "mcp_config_warning"  # a server entry or .cowork/mcp.json that cannot be used
    ELICITATION_REQUESTED = "elicitation_requested"  # MCP elicitation: a server asks the user for input
    ELICITATION_RESOLVED = "elicitation_resolved"
    UPLOAD_SKIPPED = "upload_skipped"  # 001 §5: an upload Workspace.Upload does not allow (not sent)
    CHANGES_REVERTED = "changes_reverted"  # RevertChanges: files put back to before the agent changed them
    # Envelope only (seed 001 §6.3, Phase 3 audit and telemetry): contracts.observability.
    POLICY_DECISION = "policy_decision"
    POLICY_LOADED = "policy_loaded"
    RUNTIME_STARTED = "runtime_started"
    APPROVAL_SHOWN = "approval_shown"  # from the desktop, as the next three
    UPDATE_INSTALLED = "update_installed"
    UPDATE_ROLLED_BACK = "update_rolled_back"


class SessionCreatedPayload(WireModel):
    execution_environment: ExecutionEnvironment


class SessionStartedPayload(WireModel):
    execution_environment: ExecutionEnvironment
    instruction_files: list[InstructionFile] | None = None
    """The project instruction files the session's system prompt includes (``AGENTS.md``…), in the
    order they appear there; the runtime always sends the list, empty when it found none."""


class SessionCompletedPayload(WireModel):
    task_count: int = Field(ge=0)
    total_tokens: int = Field(ge=0)
    duration_ms: int = Field(ge=0)


class SessionEndedPayload(WireModel):
    """Why a session failed, was cancelled or paused; ``error`` when an error caused it."""

    reason: str = Field(min_length=1)
    error: ErrorShape | None = None


class SessionResumedPayload(WireModel):
    resumed_from_step_id: str | None = None


class TaskStartedPayload(WireModel):
    max_steps: int = Field(ge=1)
    approval_mode: ApprovalMode
    prompt: str | None = None
    """The task's prompt, so the event log alone can rebuild a readable conversation (seed 002 restore
    step 5); absent from runtimes before it was sent."""


class TaskEndedPayload(WireModel):
    """How a task ended. ``reason`` is set for failures (``max_steps_exceeded``, …) and cancels."""

    step_count: int = Field(ge=0)
    reason: str | None = None
    error: ErrorShape | None = None


class StepPayload(WireModel):
    step_id: str = Field(min_length=1)
    step_count: int | None = Field(default=None, ge=0)
    tool_name: str | None = None  # 001 §6.1's step_started example carries it
    # step_completed in the telemetry envelope (seed 001 §6.3) only: where the step's time went.
    duration_ms: float | None = Field(default=None, ge=0)
    """From ``step_started`` to ``step_completed``."""
    llm_ms: float | None = Field(default=None, ge=0)
    """In the step's LLM calls (first ``llm_request_started`` to the last ``llm_request_completed``)."""
    tools_ms: float | None = Field(default=None, ge=0)
    """In its tool calls, approvals included (first ``tool_requested`` to the last ``tool_completed``)."""
    overhead_ms: float | None = Field(default=None, ge=0)
    """The loop's own time: the rest (context, checks, thread, checkpoints, events)."""


class StepLimitApproachingPayload(WireModel):
    step_count: int = Field(ge=0)
    max_steps: int = Field(ge=1)


class TextChunkPayload(WireModel):
    text: str


class LlmRequestStartedPayload(WireModel):
    model: str = Field(min_length=1)
    estimated_input_tokens: int = Field(ge=0)
    # Seed 002 (output budgets, prompt caching); absent from runtimes before they existed.
    request_kind: str | None = None
    """``agentic_main``, ``tool_followup`` or ``continuation``."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """The output limit the request asks for."""
    stable_prefix_hash: str | None = None
    """SHA-256 of the request's stable prefix (provider family, model, system prompt, tools)."""


class LlmRequestCompletedPayload(WireModel):
    model: str = Field(min_length=1)
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    latency_ms: int = Field(ge=0)
    session_tokens_used: int | None = Field(default=None, ge=0)
    max_session_tokens: int | None = Field(default=None, ge=0)
    """The session's tokens after this call and its budget, for the desktop's token meter."""
    cache_read_tokens: int | None = Field(default=None, ge=0)
    """Input read from the provider's prompt cache; not part of ``inputTokens``."""
    cache_write_tokens: int | None = Field(default=None, ge=0)
    """Input written to the provider's prompt cache; not part of ``inputTokens``."""
    truncation: str | None = None
    """The answer hit its output limit: ``visible_partial_output`` or ``reasoning_exhausted``."""
    time_to_first_token_ms: int | None = Field(default=None, ge=0)
    """From sending the attempt that answered to the first bytes of its stream (time to first token)."""
    retries: int | None = Field(default=None, ge=0)
    """Attempts before the one that answered (seed 000 §6.4)."""


class ToolRequestedPayload(WireModel):
    tool_name: str = Field(min_length=1)
    capability: Capability | None = None
    tool_call_id: str | None = None
    target: str | None = None
    """What the tool acts on, for display: the path, the command or the URL."""


class ToolCompletedPayload(WireModel):
    tool_name: str = Field(min_length=1)
    status: ToolStatus
    latency_ms: int = Field(ge=0)
    tool_call_id: str | None = None
    output_preview: str | None = None
    error: ErrorShape | None = None


class ApprovalResolvedPayload(WireModel):
    approval_id: str = Field(min_length=1)
    decision: ApprovalDecision
    latency_ms: int = Field(ge=0)
    scope: ApprovalScope = ApprovalScope.ONCE
    saved_rule: str | None = None
    """The saved permission rule that answered, as it reads in Settings; the user was not asked."""


class ApprovalTimeoutPayload(WireModel):
    approval_id: str = Field(min_length=1)


class PolicyExpiredPayload(WireModel):
    expires_at: UtcDatetime | None = None


class PolicyUpdatedPayload(WireModel):
    """The organisation changed the policy and the session now runs under the new bundle (swapped in
    between steps, never during one)."""

    policy_bundle_version: str = Field(min_length=1)
    expires_at: UtcDatetime
    policy_version: int | None = Field(default=None, ge=0)
    """The tenant's policy version (one per administrator change)."""
    added: list[Capability] = Field(default_factory=list)
    """Capabilities granted now that were not before."""
    removed: list[Capability] = Field(default_factory=list)
    """Capabilities no longer granted."""


class PolicyRevokedPayload(WireModel):
    """The organisation revoked the policy: the session pauses (at once, or once the running tools
    finish) until a valid policy is in force; it can then be resumed, or cancelled."""

    reason: str = Field(min_length=1)
    policy_version: int | None = Field(default=None, ge=0)


class SessionStopRequestedPayload(WireModel):
    """An administrator stopped the session: its task is cancelled and it ends (``session_cancelled``)."""

    reason: str = Field(min_length=1)


class CheckpointRecoveryFailedPayload(WireModel):
    reason: str = Field(min_length=1)


class ConversationSnapshotPayload(WireModel):
    """Seed 002: the session runtime's snapshot, written to the session's local event log only (never
    sent to the desktop). The payload is a whole ``session_runtime_v2`` document
    (:class:`contracts.session_runtime.SessionRuntimeSnapshot`, checked when a restore reads it) or,
    from the legacy format, ``{"conversationHistory": [...messages]}``."""

    model_config = ConfigDict(extra="allow")

    schema_name: str | None = Field(default=None, alias="schema")
    version: int | None = None
    conversation_history: list[dict[str, Any]] | None = None


class ArtifactUploadFailedPayload(WireModel):
    artifact_name: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class RevertedFileEntry(WireModel):
    path: str = Field(min_length=1)
    action: Literal["restored", "removed"]


class ChangesRevertedPayload(WireModel):
    """The user put files back to before the agent changed them (``RevertChanges``): a change of its
    own, shown in the conversation and kept in the audit trail."""

    change_session_id: str = Field(min_length=1)
    """The session whose changes were reverted (an earlier one of a continued conversation, or this)."""
    reverted_task_id: str | None = None
    files: list[RevertedFileEntry] = Field(min_length=1)


class UploadSkippedPayload(WireModel):
    """An artifact or history the policy's ``Workspace.Upload`` did not allow: not sent, and not kept
    for later; the task goes on."""

    artifact_name: str = Field(min_length=1)
    artifact_type: ArtifactType
    size_bytes: int = Field(ge=0)
    reason: str = Field(min_length=1)
    code: ErrorCode
    """``CAPABILITY_DENIED`` (no ``Workspace.Upload`` grant) or ``FILE_TOO_LARGE`` (over its
    ``maxFileSizeBytes``)."""


class RedactionAppliedPayload(WireModel):
    count: int = Field(ge=1)
    kinds: list[str] = Field(default_factory=list)


class McpProgressPayload(WireModel):
    """A ``notifications/progress`` of an MCP tool call."""

    server_name: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)
    """The tool as its server names it."""
    tool_call_id: str | None = None
    progress: float
    total: float | None = None
    message: str | None = None


class ElicitationRequestedPayload(WireModel):
    """An MCP server asks the user for input during a tool call; ``AnswerElicitation`` answers."""

    elicitation_id: str = Field(min_length=1)
    server_name: str = Field(min_length=1)
    tool_name: str | None = None
    message: str
    requested_schema: dict[str, Any]
    """The form, as the server sent it: an object schema of flat primitive properties."""
    timeout_seconds: int | None = Field(default=None, ge=1)
    """Unanswered after this long, the request is cancelled."""


class ElicitationResolvedPayload(WireModel):
    elicitation_id: str = Field(min_length=1)
    action: ElicitationAction
    timed_out: bool = False


class McpAuthorizationRequiredPayload(WireModel):
    """Open ``authorizationUrl`` in a browser to let Cowork use the server."""

    server_name: str = Field(min_length=1)
    authorization_url: str = Field(min_length=1)


class McpConfigWarningPayload(WireModel):
    """An MCP server configuration that was not used, and why; the session goes on without it."""

    message: str = Field(min_length=1)
    source: McpServerSource
    path: str | None = None
    """The file, for the project's ``.cowork/mcp.json``."""
    server_name: str | None = None


PAYLOADS: Mapping[EventType, type[WireModel]] = MappingProxyType(
    {
        EventType.SESSION_CREATED: SessionCreatedPayload,
        EventType.SESSION_STARTED: SessionStartedPayload,
        EventType.SESSION_COMPLETED: SessionCompletedPayload,
        EventType.SESSION_FAILED: SessionEndedPayload,
        EventType.SESSION_CANCELLED: SessionEndedPayload,
        EventType.SESSION_PAUSED: SessionEndedPayload,
        EventType.SESSION_RESUMED: SessionResumedPayload,
        EventType.TASK_STARTED: TaskStartedPayload,
        EventType.TASK_COMPLETED: TaskEndedPayload,
        EventType.TASK_FAILED: TaskEndedPayload,
        EventType.TASK_CANCELLED: TaskEndedPayload,
        EventType.STEP_STARTED: StepPayload,
        EventType.STEP_COMPLETED: StepPayload,
        EventType.STEP_LIMIT_APPROACHING: StepLimitApproachingPayload,
        EventType.TEXT_CHUNK: TextChunkPayload,
        EventType.LLM_REQUEST_STARTED: LlmRequestStartedPayload,
        EventType.LLM_REQUEST_COMPLETED: LlmRequestCompletedPayload,
        EventType.TOOL_REQUESTED: ToolRequestedPayload,
        EventType.TOOL_COMPLETED: ToolCompletedPayload,
        EventType.APPROVAL_REQUESTED: ApprovalRequest,
        EventType.APPROVAL_RESOLVED: ApprovalResolvedPayload,
        EventType.APPROVAL_TIMEOUT: ApprovalTimeoutPayload,
        EventType.POLICY_EXPIRED: PolicyExpiredPayload,
        EventType.POLICY_UPDATED: PolicyUpdatedPayload,
        EventType.POLICY_REVOKED: PolicyRevokedPayload,
        EventType.SESSION_STOP_REQUESTED: SessionStopRequestedPayload,
        EventType.CHECKPOINT_RECOVERY_FAILED: CheckpointRecoveryFailedPayload,
        EventType.ARTIFACT_UPLOAD_FAILED: ArtifactUploadFailedPayload,
        EventType.REDACTION_APPLIED: RedactionAppliedPayload,
        EventType.CONTEXT_COMPACTED: ContextCompactedPayload,
        EventType.TASK_LIST_CREATED: TaskListEventPayload,
        EventType.TASK_LIST_UPDATED: TaskListEventPayload,
        EventType.TASK_LIST_VERIFICATION_NUDGED: TaskListEventPayload,
        EventType.CONVERSATION_SNAPSHOT: ConversationSnapshotPayload,
        EventType.MCP_SERVER_STATE_CHANGED: McpServerState,
        EventType.MCP_PROGRESS: McpProgressPayload,
        EventType.MCP_AUTHORIZATION_REQUIRED: McpAuthorizationRequiredPayload,
        EventType.MCP_CONFIG_WARNING: McpConfigWarningPayload,
        EventType.ELICITATION_REQUESTED: ElicitationRequestedPayload,
        EventType.ELICITATION_RESOLVED: ElicitationResolvedPayload,
        EventType.POLICY_DECISION: PolicyDecisionPayload,
        EventType.POLICY_LOADED: PolicyLoadedPayload,
        EventType.RUNTIME_STARTED: RuntimeStartedPayload,
        EventType.APPROVAL_SHOWN: ApprovalShownPayload,
        EventType.UPDATE_INSTALLED: UpdateInstalledPayload,
        EventType.UPDATE_ROLLED_BACK: UpdateRolledBackPayload,
        EventType.UPLOAD_SKIPPED: UploadSkippedPayload,
        EventType.CHANGES_REVERTED: ChangesRevertedPayload,
    }
)


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def check_payload(event_type: EventType, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload in its wire form, validated against the model of ``event_type``."""
    model = PAYLOADS[event_type]
    try:
        validated = model.model_validate_json(json.dumps(payload, default=_json_default))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        raise FieldProblem(field_path(first["loc"]), describe(first)) from None
    return validated.to_wire()


class SessionEvent(WireModel):
    """The params of the ``SessionEvent`` notification, with the full ID chain (seed 000 §12)."""

    event_id: str = Field(min_length=1)
    event_type: EventType
    timestamp: UtcDatetime
    workspace_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str | None = None
    step_id: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)

    @field_validator("payload")
    @classmethod
    def _payload_fits_type(cls, payload: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        event_type = info.data.get("event_type")
        return payload if event_type is None else check_payload(event_type, payload)


class EventEnvelope(WireModel):
    """One audit or telemetry record, from any component (seed 001 §6.3)."""

    event_id: str = Field(min_length=1)
    event_type: EventType
    timestamp: UtcDatetime
    tenant_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    workspace_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str | None = None
    step_id: str | None = None
    component: Component
    bounded_context: BoundedContext
    severity: Severity = Severity.INFO
    payload: dict[str, Any] = Field(default_factory=dict)
