"""The crash-recovery checkpoint of the Local State Store (seed 000 §9.2).

Written after every step, read on restart; an unknown ``checkpointVersion`` means the file is from an
incompatible version and is treated as corrupt (seed 000 §9.7), and so does a file that parses but
cannot be resumed (:func:`checkpoint_problem`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from contracts._base import UtcDatetime, WireModel
from contracts.approvals import ApprovalDecisionRecord
from contracts.checklist import SessionChecklist
from contracts.compaction import CompactionState
from contracts.enums import ApprovalMode, CheckpointTaskStatus, SessionStatus
from contracts.instructions import ProjectInstructions
from contracts.messages import ConversationMessage
from contracts.rest.sessions import ResumeSessionRequest
from contracts.validation import invalid_request

SUPPORTED_CHECKPOINT_VERSIONS = frozenset({"1.0"})


class CheckpointTask(WireModel):
    task_id: str = Field(min_length=1)
    prompt: str
    status: CheckpointTaskStatus
    step_count: int = Field(ge=0)
    max_steps: int = Field(ge=1)
    # Beyond the seed's example: the task's options, so a task resumed in a new process runs under
    # the same rules the user started it with.
    approval_mode: ApprovalMode | None = None
    allow_network: bool | None = None
    step_limit_warned: bool | None = None
    """``step_limit_approaching`` was sent (seed 000 §4.3): a resumed task does not warn twice. Absent
    from checkpoints written before it was kept."""


class Checkpoint(WireModel):
    checkpoint_version: Literal["1.0"]
    session_id: str = Field(min_length=1)
    workspace_id: str = Field(min_length=1)
    tenant_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    session_status: SessionStatus
    task: CheckpointTask | None = None
    step_cursor: str | None = None
    thread: list[ConversationMessage]
    session_tokens_used: int = Field(ge=0)
    policy_bundle_version: str = Field(min_length=1)
    checkpointed_at: UtcDatetime
    approval_decisions: list[ApprovalDecisionRecord] = Field(default_factory=list)
    workspace_paths: list[str] | None = None
    """The session's project folders (``workspaceHint.localPaths``): a resumed process needs them to
    resolve paths and to build the same system prompt."""
    # The inputs of ``session_completed`` (seed 000 §12) that a process restart would otherwise reset;
    # absent from checkpoints written before they existed.
    task_count: int | None = Field(default=None, ge=0)
    """Tasks started in the session so far."""
    session_started_at: UtcDatetime | None = None
    """When ``CreateSession`` made the session: ``durationMs`` counts from here."""
    project_instructions: ProjectInstructions | None = None
    """The instruction files read when the session was created: a resumed session's system prompt is
    built from these, not from the files as they are now, so it stays byte for byte the same."""
    compaction: CompactionState | None = None
    """Summary blocks sent in place of the oldest turns, and how often the thread was compacted
    (seed 000 §5.4, seed 002 transcript and loop state); absent before the first compaction."""
    checklist: SessionChecklist | None = None
    """The session checklist and its nudge state (seed 002); absent while there is none."""
    prompt_cache: dict[str, Any] | None = None
    """Seed 002's prompt-cache state (the runtime's ``PromptCacheState.to_wire()``): the stable prefix
    last sent and why it last changed; absent before the first LLM call."""
    usage: dict[str, Any] | None = None
    """The session's tokens by kind (the runtime's ``UsageTotals.to_wire()``); absent before the first
    LLM call."""


def checkpoint_problem(checkpoint: Checkpoint) -> str | None:
    """Why a well-formed checkpoint still cannot be resumed, as one plain sentence; None if it can.

    Checked on load rather than by the model so that writing a checkpoint never fails on them: the
    loop keeps ``stepCount`` within ``maxSteps`` and the backend's identifiers within bounds, so only a
    damaged or hand-edited file breaks them. The thread's own order is the conversation thread's rule,
    checked when the runtime rebuilds it.
    """
    return resume_problem(checkpoint.task, checkpoint.step_cursor, checkpoint.policy_bundle_version)


def resume_problem(
    task: CheckpointTask | None, step_cursor: str | None, policy_bundle_version: str
) -> str | None:
    """:func:`checkpoint_problem`'s rules for the parts of a checkpoint (v1) or snapshot (v2) they
    judge; None if they allow a resume."""
    if task is not None and task.step_count > task.max_steps:
        return (
            f"task {task.task_id[:80]} has taken {task.step_count} steps,"
            f" more than its maxSteps of {task.max_steps}"
        )
    try:
        # Seed 000 §9.5: the cursor and the bundle version go back to the Session Service on resume.
        ResumeSessionRequest.model_validate(
            {"checkpointCursor": step_cursor, "policyBundleVersion": policy_bundle_version}
        )
    except ValidationError as exc:
        shape = invalid_request(exc)
        field = {"checkpointCursor": "stepCursor"}.get(shape.details["field"], shape.details["field"])
        return f"its {field} cannot be sent to the Session Service: {field} {shape.details['problem']}"
    return None
