"""The ``session_runtime_v2`` snapshot (seed 002 "Snapshot And Restore Algorithm").

One document holds every bucket of the session runtime's state. It is the checkpoint file of the Local
State Store (seed 000 §9.2, replacing ``checkpointVersion: "1.0"``, which is still read: see
:mod:`contracts.checkpoint`) and, with the same payload, the ``conversation_snapshot`` event of the
session's local event log. Restores read it before any legacy form (seed 002's precedence).

``promptCache`` and ``usage`` are kept as the runtime's own ``to_wire()`` dicts: their shape belongs to
the agent host's LLM client, and a snapshot must still load when that shape grows.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from contracts._base import UtcDatetime, WireModel
from contracts.approvals import ApprovalDecisionRecord
from contracts.checklist import SessionChecklist
from contracts.checkpoint import CheckpointTask, resume_problem
from contracts.compaction import CompactionState
from contracts.enums import ApprovalMode, SessionStatus
from contracts.instructions import ProjectInstructions
from contracts.messages import ConversationMessage

__all__ = [
    "SNAPSHOT_SCHEMA",
    "SNAPSHOT_VERSION",
    "FilesBucket",
    "LoopBucket",
    "PermissionsBucket",
    "RecoveryBucket",
    "RunawayState",
    "SessionRuntimeSnapshot",
    "SnapshotTask",
    "ToolingBucket",
    "TranscriptBucket",
    "snapshot_problem",
]

SNAPSHOT_SCHEMA: Literal["session_runtime_v2"] = "session_runtime_v2"
SNAPSHOT_VERSION: Literal[2] = 2


class SnapshotTask(CheckpointTask):
    """The session's current (or last) task: the v1 checkpoint's ``task`` and its ``stepCursor``."""

    step_cursor: str | None = None


class TranscriptBucket(WireModel):
    messages: list[ConversationMessage]
    session_tokens_used: int = Field(ge=0)
    latest_user_message: str | None = None
    """The text of the last user message (the current task's prompt)."""
    latest_assistant_message: str | None = None
    """The text of the model's last answer."""
    compaction: CompactionState | None = None
    """Chat summary blocks standing in for the oldest turns, and the compaction counters."""
    counted_with: str | None = None
    """The tokenizer encoding every message's ``tokenCount`` was counted with; absent when some are
    estimates. A restore with the same encoding takes the counts as they are."""


class RunawayState(WireModel):
    """The runaway guard's memory (the seed's "tool failure tracking")."""

    last_call: str | None = None
    repeats: int = Field(default=0, ge=0)
    failing_repeats: int = Field(default=0, ge=0)


class ToolingBucket(WireModel):
    failures: RunawayState = Field(default_factory=RunawayState)
    calls_by_tool: dict[str, int] = Field(default_factory=dict)
    """Tool calls made in the session, by tool name."""
    visible_tools: list[str] = Field(default_factory=list)
    """The tools offered last, in the order the request lists them."""
    render_key: str | None = None
    """The render context those tools' descriptions and the system prompt were made for."""


class FilesBucket(WireModel):
    reads: list[str] = Field(default_factory=list)
    """Paths the session read successfully, first read first."""
    writes: list[str] = Field(default_factory=list)
    """Paths the session wrote, edited or deleted successfully."""


class LoopBucket(WireModel):
    task: SnapshotTask | None = None
    task_count: int = Field(default=0, ge=0)
    session_started_at: UtcDatetime | None = None
    lifetime_turns: int = Field(default=0, ge=0)
    continuations: int = Field(default=0, ge=0)
    compactions: int = Field(default=0, ge=0)
    """A copy of ``transcript.compaction.compactionCount``, for readers of the loop bucket alone."""
    fingerprints: list[str] = Field(default_factory=list)
    """The current task's step fingerprints, oldest first (the last 50)."""
    no_progress_streak: int = Field(default=0, ge=0)


class RecoveryBucket(WireModel):
    llm_retries: int = Field(default=0, ge=0)
    """LLM requests sent again after a retryable failure (seed 000 §6.4)."""
    failure_signatures: dict[str, int] = Field(default_factory=dict)
    """``<tool>:<error code>`` of failed tool calls, counted."""
    last_failure_signature: str | None = None
    interrupted_calls: int = Field(default=0, ge=0)
    """Tool calls a crash cut off, answered "interrupted — result unknown" on resume."""


class PermissionsBucket(WireModel):
    approval_mode: ApprovalMode | None = None
    """The current task's approval mode."""
    approval_decisions: list[ApprovalDecisionRecord] = Field(default_factory=list)
    """Every decision of the session; its ``session``-scoped approvals are the session's grants."""
    denials: dict[str, int] = Field(default_factory=dict)
    """Tool calls denied (by the policy or the user), by tool name."""


class SessionRuntimeSnapshot(WireModel):
    snapshot_schema: Literal["session_runtime_v2"] = Field(alias="schema")
    version: Literal[2]
    session_id: str = Field(min_length=1)
    workspace_id: str = Field(min_length=1)
    tenant_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    session_status: SessionStatus
    policy_bundle_version: str = Field(min_length=1)
    checkpointed_at: UtcDatetime
    workspace_paths: list[str] = Field(default_factory=list)
    project_instructions: ProjectInstructions | None = None
    transcript: TranscriptBucket
    tooling: ToolingBucket = Field(default_factory=ToolingBucket)
    files: FilesBucket = Field(default_factory=FilesBucket)
    loop: LoopBucket = Field(default_factory=LoopBucket)
    recovery: RecoveryBucket = Field(default_factory=RecoveryBucket)
    checklist: SessionChecklist | None = None
    prompt_cache: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    permissions: PermissionsBucket = Field(default_factory=PermissionsBucket)


def snapshot_problem(snapshot: SessionRuntimeSnapshot) -> str | None:
    """Why a well-formed v2 snapshot still cannot be resumed (the rules of
    :func:`contracts.checkpoint.checkpoint_problem`); None if it can."""
    task = snapshot.loop.task
    return resume_problem(task, task.step_cursor if task else None, snapshot.policy_bundle_version)
