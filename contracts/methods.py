"""Params and results of the JSON-RPC methods the runtime serves: the eight of seed 000 §3.1 and 001
§6.1, ``AnswerElicitation`` and ``GetMcpServers`` for MCP servers (seed 003 §9), and
``RevertChanges``, which puts files back to before the agent changed them.

``StartTask`` answers as soon as the task is accepted; the task's progress and its end arrive as
``SessionEvent`` notifications (:mod:`contracts.events`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.enums import (
    ApprovalDecision,
    ApprovalMode,
    ApprovalScope,
    Capability,
    CompatibilityStatus,
    ExecutionEnvironment,
    OsFamily,
    PatchFileStatus,
    SessionStatus,
    TaskStatus,
)
from contracts.images import MAX_IMAGES_PER_MESSAGE, MAX_PROMPT_CHARS, ImageContent
from contracts.mcp import ElicitationAction, McpServerState
from contracts.messages import SessionHistory
from contracts.permissions import MAX_PERMISSION_RULES, PermissionRule
from contracts.projection import TaskProjection

MAX_EARLIER_SESSIONS = 100
MAX_REVERT_PATHS = 1000

SESSION_EVENT = "SessionEvent"
"""The one notification the runtime sends (seed 000 §3.1)."""


class WorkspaceHint(WireModel):
    """The project folder(s) of a project session; a general chat sends none (seed 004)."""

    local_paths: list[str] = Field(min_length=1)


class ClientInfo(WireModel):
    desktop_app_version: str = Field(min_length=1)
    local_agent_host_version: str = Field(min_length=1)
    os_family: OsFamily


class CreateSessionParams(WireModel):
    user_id: str = Field(min_length=1)
    tenant_id: str = Field(min_length=1)
    execution_environment: ExecutionEnvironment = ExecutionEnvironment.DESKTOP
    workspace_hint: WorkspaceHint | None = None
    client_info: ClientInfo
    supported_capabilities: list[Capability]
    history: SessionHistory | None = None
    """Continue a past conversation (seed 004 scenario B): the new session's thread starts from this
    ``session_history`` snapshot, which the desktop read from the Workspace Service."""


class CreateSessionResult(WireModel):
    session_id: str
    workspace_id: str
    session_status: SessionStatus
    compatibility_status: CompatibilityStatus
    feature_flags: dict[str, bool] = Field(default_factory=dict)
    policy_bundle_version: str
    policy_expires_at: UtcDatetime


class TaskOptions(WireModel):
    max_steps: int = Field(default=40, ge=1, le=1000)
    allow_network: bool = True
    approval_mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS
    permission_rules: list[PermissionRule] | None = Field(default=None, max_length=MAX_PERMISSION_RULES)
    """The project's saved "Always allow" rules: they answer prompts of the approval mode only."""
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """The model this task calls, chosen by the user for the conversation; it must be one the policy
    allows (``llmPolicy.allowedModels``). Absent: the runtime's configured model (seed 000 §6.2)."""
    last_task: bool | None = None
    """``true``: the session ends after this task (``cowork exec``). Its history is made durable in
    the upload spool and the terminal event does not wait for it to reach the Workspace Service —
    nobody reads it there before the next runtime of the same backend sends it."""


class StartTaskParams(WireModel):
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    task_options: TaskOptions = Field(default_factory=TaskOptions)
    images: list[ImageContent] | None = Field(default=None, max_length=MAX_IMAGES_PER_MESSAGE)
    """Images attached to the prompt, each with its data (:mod:`contracts.images`)."""

    @model_validator(mode="after")
    def _images_carry_their_data(self) -> StartTaskParams:
        if any(image.data is None for image in self.images or ()):
            raise ValueError("images of a new prompt carry their data, not an artifactName")
        return self


class StartTaskResult(WireModel):
    task_id: str
    status: TaskStatus


class CancelTaskParams(WireModel):
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)


class CancelTaskResult(WireModel):
    task_id: str
    cancellation_requested: bool


class TaskState(WireModel):
    """The task level of ``GetSessionState``, exactly as seed 000 §3.3 shows it."""

    task_id: str
    status: TaskStatus
    step_count: int = Field(ge=0)
    max_steps: int = Field(ge=1)


class ResumeSessionParams(WireModel):
    session_id: str = Field(min_length=1)


class ResumeSessionResult(WireModel):
    session_id: str
    session_status: SessionStatus
    resumed_from_step_id: str | None = None
    task: TaskState | None = None
    feature_flags: dict[str, bool] = Field(default_factory=dict)
    """The tenant's flags as the resume's answer gave them (``contracts.observability``)."""


class GetSessionStateParams(WireModel):
    session_id: str = Field(min_length=1)


class SessionState(WireModel):
    """Both levels of state (seed 000 §3.3); ``task`` is null when no task has run yet."""

    session_status: SessionStatus
    task: TaskState | None = None
    session_tokens_used: int | None = Field(default=None, ge=0)
    max_session_tokens: int | None = Field(default=None, ge=0)
    """The session's token budget (``llmPolicy.maxSessionTokens``) and what the session has used."""
    projection: TaskProjection | None = None
    """Seed 002 "Task Projection": the session runtime's loop figures; absent from older runtimes."""


class GetPatchPreviewParams(WireModel):
    session_id: str = Field(min_length=1)
    task_id: str | None = None
    earlier_session_ids: list[str] = Field(default_factory=list, max_length=MAX_EARLIER_SESSIONS)
    """The conversation's earlier sessions (a past conversation continued here): their changes kept
    on this machine are listed too, each file with the ``sessionId`` it belongs to."""


class PatchFile(WireModel):
    path: str
    status: PatchFileStatus
    diff: str
    size_bytes: int = Field(ge=0)
    session_id: str | None = None
    """The session whose tasks made the change (set for an earlier session's files)."""
    task_ids: list[str] = Field(default_factory=list)
    """The tasks that changed the file, oldest first, as far as their before-images are kept."""
    revertible: bool = False
    """``RevertChanges`` can put the file back to before the conversation changed it, now."""
    revert_note: str | None = None
    """Why not, when it cannot (content not kept, too large, changed since the agent's last write)."""


class RevertChangesParams(WireModel):
    """Put files back to before a task (``taskId``), or before the whole conversation, changed them.

    ``paths`` chooses files (absolute, as ``GetPatchPreview`` gave them); with ``taskId`` alone every
    file of that task. ``changeSessionId`` names an earlier session of the conversation whose changes
    are reverted (default: this one). Each file is checked like a write (the policy in force now) and
    must still be what the agent's last write left: otherwise nothing is reverted."""

    session_id: str = Field(min_length=1)
    change_session_id: str | None = Field(default=None, min_length=1)
    task_id: str | None = Field(default=None, min_length=1)
    paths: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None, min_length=1, max_length=MAX_REVERT_PATHS
    )

    @model_validator(mode="after")
    def _names_something(self) -> RevertChangesParams:
        if self.task_id is None and self.paths is None:
            raise ValueError("name a taskId, paths, or both")
        return self


class RevertedFile(WireModel):
    path: str
    action: Literal["restored", "removed"]
    """``restored``: its earlier content is back; ``removed``: the agent had created it."""


class RevertChangesResult(WireModel):
    files: list[RevertedFile]


class PatchPreview(WireModel):
    files: list[PatchFile]
    kept_session_ids: list[str] = Field(default_factory=list)
    """The sessions (this one, and the earlier ones asked for) whose changes this machine keeps: for
    any other, what its tasks changed can only be read from its history."""


class ApproveActionParams(WireModel):
    session_id: str = Field(min_length=1)
    approval_id: str = Field(min_length=1)
    decision: ApprovalDecision
    reason: str | None = None
    scope: ApprovalScope = ApprovalScope.ONCE


class ApproveActionResult(WireModel):
    approval_id: str
    accepted: bool


class ShutdownParams(WireModel):
    session_id: str | None = None
    reason: str | None = None


class ShutdownResult(WireModel):
    session_status: SessionStatus


class AnswerElicitationParams(WireModel):
    """The user's answer to an ``elicitation_requested`` event (MCP elicitation, form mode)."""

    session_id: str = Field(min_length=1)
    elicitation_id: str = Field(min_length=1)
    action: ElicitationAction
    content: dict[str, Any] | None = None
    """``accept``: the form's values, checked against the requested schema."""


class AnswerElicitationResult(WireModel):
    accepted: bool
    """False when the request is no longer waiting (answered, timed out, or its call ended)."""


class GetMcpServersParams(WireModel):
    session_id: str = Field(min_length=1)


class GetMcpServersResult(WireModel):
    servers: list[McpServerState]
    """Every configured server, in configuration order (policy bundle first, then the project's)."""


@dataclass(frozen=True, slots=True)
class MethodSpec:
    name: str
    params: type[WireModel]
    result: type[WireModel]
    summary: str


METHODS: Mapping[str, MethodSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            MethodSpec(
                "CreateSession",
                CreateSessionParams,
                CreateSessionResult,
                "Initialise a session: handshake with the Session Service",
            ),
            MethodSpec("StartTask", StartTaskParams, StartTaskResult, "Begin a task from a user prompt"),
            MethodSpec("CancelTask", CancelTaskParams, CancelTaskResult, "Cooperatively cancel the task"),
            MethodSpec(
                "ResumeSession",
                ResumeSessionParams,
                ResumeSessionResult,
                "Resume from a crash-recovery checkpoint",
            ),
            MethodSpec("GetSessionState", GetSessionStateParams, SessionState, "Session and task status"),
            MethodSpec("GetPatchPreview", GetPatchPreviewParams, PatchPreview, "File changes for review"),
            MethodSpec(
                "ApproveAction",
                ApproveActionParams,
                ApproveActionResult,
                "Deliver the user's approval decision",
            ),
            MethodSpec("Shutdown", ShutdownParams, ShutdownResult, "Clean session teardown"),
            MethodSpec(
                "AnswerElicitation",
                AnswerElicitationParams,
                AnswerElicitationResult,
                "Deliver the user's answer to an MCP server's request for input",
            ),
            MethodSpec(
                "RevertChanges",
                RevertChangesParams,
                RevertChangesResult,
                "Put files back to before a task or the conversation changed them",
            ),
            MethodSpec(
                "GetMcpServers",
                GetMcpServersParams,
                GetMcpServersResult,
                "The session's MCP servers and their state",
            ),
        )
    }
)
