"""Everything one session's loop works with, built by the session (seed 000 §3.2) and handed in.

The session's mutable state is not kept here: it lives in the session runtime's buckets
(:class:`~agent_runtime.agent_host.session_runtime.SessionRuntime`, seed 002), and the names below
that the loop has always used (``thread``, ``machine``, ``prompt_cache``…) read and write through it.
What stays here are the collaborators: policy, LLM client, tool dispatch, approvals, events, store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.llm import LlmClient
from agent_runtime.agent_host.llm.prompt_cache import PromptCacheState
from agent_runtime.agent_host.llm.usage import UsageTotals
from agent_runtime.agent_host.policy import PolicyEnforcer
from agent_runtime.agent_host.routing import ArtifactUploader, ToolDispatch
from agent_runtime.agent_host.session_runtime.machine import SessionMachine
from agent_runtime.agent_host.session_runtime.runtime import SessionRuntime
from agent_runtime.agent_host.state import CheckpointStore
from agent_runtime.agent_host.thread import ConversationThread
from contracts.checklist import SessionChecklist
from contracts.compaction import CompactionState
from contracts.enums import Capability, OsFamily
from contracts.instructions import ProjectInstructions
from contracts.tools import ToolDefinition, ToolScope

if TYPE_CHECKING:
    # Imported only by sessions with MCP servers (start-up time): a name for the annotation here.
    from agent_runtime.agent_host.mcp.link import McpLink
    from agent_runtime.agent_host.observability import SessionObservability
    from agent_runtime.agent_host.uploads import UploadQueue

__all__ = ["LoopContext"]


@dataclass(slots=True)
class LoopContext:
    runtime: SessionRuntime
    """Seed 002's owner of the session's state: every bucket the loop reads and writes."""
    os_family: OsFamily
    enforcer: PolicyEnforcer
    """Replaced when a resume brings a refreshed bundle (seed 000 §3.3 PAUSED → RUNNING)."""
    llm: LlmClient
    model: str
    dispatch: ToolDispatch
    approvals: ApprovalGate
    emitter: EventEmitter
    store: CheckpointStore
    uploader: ArtifactUploader | None
    """The Workspace Service, for the ``session_history`` snapshot after each task (seed 000 §5.5)."""
    mcp: McpLink | None = None
    """The session's MCP servers (seed 003 §9), when it has any: their tools are taken between steps."""
    uploads: UploadQueue | None = None
    """The session's upload queue: the history is spooled there and sent in the background (with it,
    ``uploader`` is not used for the history)."""
    observability: SessionObservability | None = None
    """The session's audit and telemetry producer: the loop hands it its policy decisions and asks it
    whether the tenant's daily token quota still allows LLM calls."""

    # ------------------------------------------------------------------ the session's identity

    @property
    def session_id(self) -> str:
        return self.runtime.session_id

    @property
    def workspace_id(self) -> str:
        return self.runtime.workspace_id

    @property
    def tenant_id(self) -> str:
        return self.runtime.tenant_id

    @property
    def user_id(self) -> str:
        return self.runtime.user_id

    @property
    def workspace_paths(self) -> tuple[str, ...]:
        return self.runtime.workspace_paths

    @property
    def instructions(self) -> ProjectInstructions:
        """The project instruction files read when the session was created (kept in the checkpoint):
        the system prompt includes them."""
        return self.runtime.instructions

    # ------------------------------------------------------------------ buckets

    @property
    def machine(self) -> SessionMachine:
        return self.runtime.machine

    @property
    def thread(self) -> ConversationThread:
        """The transcript bucket's conversation."""
        return self.runtime.thread

    @property
    def tools(self) -> list[ToolDefinition]:
        """The visible tools (tooling bucket, :mod:`~agent_runtime.agent_host.session_runtime.tools`)."""
        return self.runtime.tools

    @property
    def system_prompt(self) -> str:
        rendered = self.runtime.tooling.rendered
        return rendered.system_prompt if rendered is not None else ""

    @property
    def system_tokens(self) -> int:
        rendered = self.runtime.tooling.rendered
        return rendered.system_tokens if rendered is not None else 0

    @property
    def tools_tokens(self) -> int:
        rendered = self.runtime.tooling.rendered
        return rendered.tools_tokens if rendered is not None else 0

    @property
    def started_at(self) -> datetime | None:
        """When ``CreateSession`` made the session (loop bucket): ``durationMs`` counts from it."""
        return self.runtime.loop.started_at

    @started_at.setter
    def started_at(self, value: datetime | None) -> None:
        self.runtime.loop.started_at = value

    @property
    def task_count(self) -> int:
        """Tasks started in the session, across process restarts (loop bucket)."""
        return self.runtime.loop.task_count

    @task_count.setter
    def task_count(self, value: int) -> None:
        self.runtime.loop.task_count = value

    @property
    def prompt_cache(self) -> PromptCacheState:
        """Seed 002's ``promptCache`` bucket: the stable prefix sent last and why it last changed."""
        return self.runtime.prompt_cache

    @prompt_cache.setter
    def prompt_cache(self, value: PromptCacheState) -> None:
        self.runtime.prompt_cache = value

    @property
    def usage(self) -> UsageTotals:
        """Seed 002's ``usage`` bucket: the session's tokens by kind."""
        return self.runtime.usage

    @usage.setter
    def usage(self, value: UsageTotals) -> None:
        self.runtime.usage = value

    @property
    def compaction(self) -> CompactionState:
        """Summary blocks that stand in for the oldest turns (transcript bucket) and the compaction
        counters (seed 000 §5.4 Phase 2)."""
        return self.runtime.transcript.compaction

    @compaction.setter
    def compaction(self, value: CompactionState) -> None:
        self.runtime.transcript.compaction = value

    @property
    def checklist(self) -> SessionChecklist | None:
        """The session checklist the ``task_list_*`` session tools manage (checklist bucket)."""
        return self.runtime.checklist

    @checklist.setter
    def checklist(self, value: SessionChecklist | None) -> None:
        self.runtime.checklist = value

    def tool_scope(self) -> ToolScope:
        """The limits of the policy's grants that the tools apply themselves (seed 003 §4)."""
        read = self.enforcer.grant(Capability.FILE_READ)
        shell = self.enforcer.grant(Capability.SHELL_EXEC)
        return ToolScope(
            workspace_root=self.workspace_paths[0] if self.workspace_paths else None,
            max_file_size_bytes=read.max_file_size_bytes if read else None,
            max_output_bytes=shell.max_output_bytes if shell else None,
        )
