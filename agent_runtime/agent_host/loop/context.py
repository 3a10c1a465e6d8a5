"""Everything one session's loop works with, built by the session (seed 000 §3.2) and handed in."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.llm import LlmClient
from agent_runtime.agent_host.policy import PolicyEnforcer
from agent_runtime.agent_host.routing import ArtifactUploader, ToolDispatch
from agent_runtime.agent_host.session.machine import SessionMachine
from agent_runtime.agent_host.state import CheckpointStore
from agent_runtime.agent_host.thread import ConversationThread
from contracts.enums import Capability, OsFamily
from contracts.tools import ToolDefinition, ToolScope

__all__ = ["LoopContext"]


@dataclass(slots=True)
class LoopContext:
    session_id: str
    workspace_id: str
    tenant_id: str
    user_id: str
    workspace_paths: tuple[str, ...]
    os_family: OsFamily
    machine: SessionMachine
    enforcer: PolicyEnforcer
    """Replaced when a resume brings a refreshed bundle (seed 000 §3.3 PAUSED → RUNNING)."""
    thread: ConversationThread
    llm: LlmClient
    model: str
    dispatch: ToolDispatch
    approvals: ApprovalGate
    emitter: EventEmitter
    store: CheckpointStore
    system_prompt: str
    uploader: ArtifactUploader | None
    """The Workspace Service, for the ``session_history`` snapshot after each task (seed 000 §5.5)."""
    tools: list[ToolDefinition] = field(default_factory=list)
    system_tokens: int = 0
    tools_tokens: int = 0
    started_at: datetime | None = None
    """When ``CreateSession`` made the session (kept in the checkpoint): ``durationMs`` counts from it."""
    task_count: int = 0
    """Tasks started in the session, across process restarts (kept in the checkpoint)."""

    def tool_scope(self) -> ToolScope:
        """The limits of the policy's grants that the tools apply themselves (seed 003 §4)."""
        read = self.enforcer.grant(Capability.FILE_READ)
        shell = self.enforcer.grant(Capability.SHELL_EXEC)
        return ToolScope(
            workspace_root=self.workspace_paths[0] if self.workspace_paths else None,
            max_file_size_bytes=read.max_file_size_bytes if read else None,
            max_output_bytes=shell.max_output_bytes if shell else None,
        )
