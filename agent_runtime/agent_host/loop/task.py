"""A task as the loop runs it, and how a run of the loop ends."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agent_runtime.agent_host.policy.saved_rules import SavedRules
from contracts.enums import ApprovalMode, CheckpointTaskStatus
from contracts.errors import ErrorShape

__all__ = ["TaskEnd", "TaskOutcome", "TaskRecord"]


@dataclass(slots=True)
class TaskRecord:
    """One ``StartTask``: its options and how far it got (the checkpoint's ``task``, seed 000 §9.2)."""

    task_id: str
    prompt: str
    max_steps: int
    approval_mode: ApprovalMode = ApprovalMode.ON_RISKY_ACTIONS
    allow_network: bool = True
    step_count: int = 0
    status: CheckpointTaskStatus = CheckpointTaskStatus.RUNNING
    step_cursor: str | None = None
    """The last completed step (seed 000 §9.2 ``stepCursor``)."""
    warned_step_limit: bool = False
    saved_rules: SavedRules | None = None
    """The project's "Always allow" rules sent with ``StartTask``. Not checkpointed: a task resumed
    after a restart asks again rather than trust rules it can no longer show came from the user."""
    last_task: bool = False
    """``taskOptions.lastTask``: the session ends after this task. Not checkpointed: a resumed task
    waits for its history like any other, which only costs time."""


class TaskEnd(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PAUSED = "paused"
    """Not an end: the session pauses and the task continues after ``ResumeSession``."""


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    end: TaskEnd
    reason: str | None = None
    """``max_steps_exceeded``, ``budget_exceeded``, ``guardrail_blocked``, ``repeated_tool_call``,
    ``llm_failed``, ``cancelled``, ``session_failed``; for a pause ``llm_unreachable`` or
    ``policy_expired``."""
    error: ErrorShape | None = None
