"""The crash-recovery checkpoint of the Local State Store (seed 000 §9.2).

Written after every step, read on restart; an unknown ``checkpointVersion`` means the file is from an
incompatible version and is treated as corrupt (seed 000 §9.7).
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from contracts._base import WireModel
from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import ApprovalMode, CheckpointTaskStatus, SessionStatus
from contracts.messages import ConversationMessage

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
    checkpointed_at: AwareDatetime
    approval_decisions: list[ApprovalDecisionRecord] = Field(default_factory=list)
    workspace_paths: list[str] | None = None
    """The session's project folders (``workspaceHint.localPaths``): a resumed process needs them to
    resolve paths and to build the same system prompt."""
