"""``SessionRuntime``: the one owner of a session's mutable state (seed 002 "What It Owns").

What the loop, the tool calls, routing and approvals change during a session lives here, grouped in
the seed's buckets: ``transcript`` (the conversation thread, latest outputs, summary blocks),
``tooling`` (the runaway guard's failure memory, calls per tool, the visible-tool render cache),
``files`` (paths read and written), ``loop`` (the task, turns, continuations, compactions, loop
fingerprints, the no-progress streak, the session's task count and start), ``recovery`` (LLM retries,
failure signatures, interrupted calls), ``checklist``, ``promptCache``, ``usage`` and ``permissions``
(approval mode, the decisions whose session scope are the grants, denial counters). The session and
task state machine is here too (:mod:`.machine`).

The buckets we leave out of the seed's list (``queues``, ``worker``, ``verification``) have no state in
this runtime: follow-ups are new tasks and there are no worker agents.

:meth:`SessionRuntime.snapshot` captures every bucket as one ``session_runtime_v2`` document; the
store writes it as the checkpoint and the event log keeps it as a ``conversation_snapshot`` event
(:mod:`.restore` reads them back in the seed's order). :meth:`SessionRuntime.project` is the seed's
"Task Projection".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from agent_runtime.agent_host.llm.prompt_cache import PromptCacheState
from agent_runtime.agent_host.llm.usage import UsageTotals
from agent_runtime.agent_host.thread import ConversationThread
from contracts.approvals import ApprovalDecisionRecord
from contracts.checklist import SessionChecklist
from contracts.compaction import CompactionState
from contracts.enums import ApprovalMode, CheckpointTaskStatus, Role, ToolName, ToolStatus
from contracts.instructions import ProjectInstructions
from contracts.projection import TaskProjection
from contracts.session_runtime import (
    SNAPSHOT_SCHEMA,
    SNAPSHOT_VERSION,
    FilesBucket,
    LoopBucket,
    PermissionsBucket,
    RecoveryBucket,
    RunawayState,
    SessionRuntimeSnapshot,
    SnapshotTask,
    ToolingBucket,
    TranscriptBucket,
)
from contracts.tools import ToolCall, ToolDefinition, ToolResult

from .machine import SessionMachine
from .tools import RenderedTools, ToolAvailability

__all__ = [
    "FINGERPRINTS_KEPT",
    "FailureMemory",
    "Files",
    "LoopState",
    "Permissions",
    "Recovery",
    "SessionRuntime",
    "TaskView",
    "Tooling",
    "Transcript",
]

FINGERPRINTS_KEPT = 50
"""Loop fingerprints kept for the current task (the no-progress check looks back this far)."""

_READS = frozenset({ToolName.READ_FILE.value})
_WRITES = frozenset({ToolName.WRITE_FILE.value, ToolName.EDIT_FILE.value, ToolName.DELETE_FILE.value})


class TaskView(Protocol):
    """What the runtime keeps of the loop's task record (the loop's ``TaskRecord`` fits it)."""

    task_id: str
    prompt: str
    max_steps: int
    approval_mode: ApprovalMode
    allow_network: bool
    step_count: int
    status: CheckpointTaskStatus
    step_cursor: str | None
    warned_step_limit: bool


@dataclass(slots=True)
class Transcript:
    thread: ConversationThread
    compaction: CompactionState = field(default_factory=CompactionState)

    def latest(self, role: Role) -> str | None:
        for message in reversed(self.thread.messages):
            if message.role is role and message.content:
                return message.content
        return None


@dataclass(slots=True)
class FailureMemory:
    """The runaway guard's state (:class:`agent_runtime.agent_host.loop.RunawayGuard`)."""

    last_call: str | None = None
    repeats: int = 0
    failing_repeats: int = 0

    def reset(self) -> None:
        self.last_call, self.repeats, self.failing_repeats = None, 0, 0


@dataclass(slots=True)
class Tooling:
    failures: FailureMemory = field(default_factory=FailureMemory)
    calls_by_tool: dict[str, int] = field(default_factory=dict)
    rendered: RenderedTools | None = None
    """The visible tools and their rendered prompt now in use (an entry of the render cache)."""
    restored_visible: list[str] = field(default_factory=list)
    """The visible tools a restored snapshot named, until the first render of this process."""


@dataclass(slots=True)
class Files:
    reads: dict[str, None] = field(default_factory=dict)
    writes: dict[str, None] = field(default_factory=dict)


@dataclass(slots=True)
class LoopState:
    task: TaskView | None = None
    task_count: int = 0
    started_at: datetime | None = None
    lifetime_turns: int = 0
    continuations: int = 0
    fingerprints: list[str] = field(default_factory=list)
    no_progress_streak: int = 0

    def begin_task(self) -> None:
        """A new task: fingerprints and the streak are about one task's steps."""
        self.fingerprints.clear()
        self.no_progress_streak = 0


@dataclass(slots=True)
class Recovery:
    llm_retries: int = 0
    failure_signatures: dict[str, int] = field(default_factory=dict)
    last_failure_signature: str | None = None
    interrupted_calls: int = 0


@dataclass(slots=True)
class Permissions:
    denials: dict[str, int] = field(default_factory=dict)
    decisions: Callable[[], list[ApprovalDecisionRecord]] | None = None
    """The approval gate's decisions (the gate applies them; the bucket persists them)."""
    restored: list[ApprovalDecisionRecord] = field(default_factory=list)
    """Decisions read from a snapshot, handed to the gate when the session is rebuilt."""

    def records(self) -> list[ApprovalDecisionRecord]:
        return self.decisions() if self.decisions is not None else list(self.restored)


@dataclass(slots=True)
class SessionRuntime:
    session_id: str
    workspace_id: str
    tenant_id: str
    user_id: str
    workspace_paths: tuple[str, ...]
    machine: SessionMachine
    transcript: Transcript
    instructions: ProjectInstructions = field(default_factory=ProjectInstructions)
    tooling: Tooling = field(default_factory=Tooling)
    files: Files = field(default_factory=Files)
    loop: LoopState = field(default_factory=LoopState)
    recovery: Recovery = field(default_factory=Recovery)
    checklist: SessionChecklist | None = None
    prompt_cache: PromptCacheState = field(default_factory=PromptCacheState)
    usage: UsageTotals = field(default_factory=UsageTotals)
    permissions: Permissions = field(default_factory=Permissions)
    availability: ToolAvailability | None = None
    """Set by the session once the tool runtime is known (:meth:`render_tools`)."""
    legacy_restore: str | None = None
    """Where a restore found a legacy form (``legacy_checkpoint`` …): the next checkpoint writes v2."""

    @property
    def thread(self) -> ConversationThread:
        return self.transcript.thread

    # ------------------------------------------------------------------ tools

    @property
    def tools(self) -> list[ToolDefinition]:
        return self.tooling.rendered.tools if self.tooling.rendered is not None else []

    # ------------------------------------------------------------------ what a step changes

    def record_turn(self) -> None:
        """One LLM turn of the loop (a step the model answered)."""
        self.loop.lifetime_turns += 1

    def record_tool_results(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> None:
        """Counters of the tooling, files, recovery and permissions buckets for one step's calls."""
        for call, result in zip(calls, results, strict=True):
            name = call.tool_name
            self.tooling.calls_by_tool[name] = self.tooling.calls_by_tool.get(name, 0) + 1
            if result.status is ToolStatus.SUCCEEDED:
                path = call.arguments.get("path")
                if isinstance(path, str):
                    if name in _READS:
                        self.files.reads[path] = None
                    elif name in _WRITES:
                        self.files.writes[path] = None
            elif result.status is ToolStatus.DENIED:
                self.permissions.denials[name] = self.permissions.denials.get(name, 0) + 1
            else:
                code = result.error.code if result.error is not None else "unknown"
                signature = f"{name}:{code}"
                signatures = self.recovery.failure_signatures
                signatures[signature] = signatures.get(signature, 0) + 1
                self.recovery.last_failure_signature = signature

    # ------------------------------------------------------------------ projection

    def project(self) -> TaskProjection:
        """Seed 002 "Task Projection"."""
        fingerprints = self.loop.fingerprints
        return TaskProjection(
            session_tokens_used=self.thread.session_tokens_used,
            max_session_tokens=self.thread.budget.limit,
            continuation_count=self.loop.continuations,
            lifetime_turns=self.loop.lifetime_turns,
            compaction_count=self.transcript.compaction.compaction_count,
            no_progress_streak=self.loop.no_progress_streak,
            last_loop_fingerprint=fingerprints[-1] if fingerprints else None,
        )

    # ------------------------------------------------------------------ snapshot

    def snapshot(self, *, now: datetime, policy_bundle_version: str) -> SessionRuntimeSnapshot:
        """Every bucket as one ``session_runtime_v2`` document (seed 002 write path, step 1–2)."""
        task = self.loop.task
        compaction = self.transcript.compaction
        rendered = self.tooling.rendered
        failures = self.tooling.failures
        return SessionRuntimeSnapshot(
            snapshot_schema=SNAPSHOT_SCHEMA,
            version=SNAPSHOT_VERSION,
            session_id=self.session_id,
            workspace_id=self.workspace_id,
            tenant_id=self.tenant_id,
            user_id=self.user_id,
            session_status=self.machine.session,
            policy_bundle_version=policy_bundle_version,
            checkpointed_at=now,
            workspace_paths=list(self.workspace_paths),
            project_instructions=self.instructions if self.instructions.files else None,
            transcript=TranscriptBucket(
                messages=[],
                session_tokens_used=self.thread.session_tokens_used,
                latest_user_message=self.transcript.latest(Role.USER),
                latest_assistant_message=self.transcript.latest(Role.ASSISTANT),
                compaction=compaction if compaction != CompactionState() else None,
                counted_with=self.thread.counted_with,
            ).model_copy(
                # Each message was validated when it joined the thread; validating all of them again
                # for every step's record cost 0.35 ms a record at 1,000 messages.
                update={"messages": self.thread.to_checkpoint_thread()}
            ),
            tooling=ToolingBucket(
                failures=RunawayState(
                    last_call=failures.last_call,
                    repeats=failures.repeats,
                    failing_repeats=failures.failing_repeats,
                ),
                calls_by_tool=dict(self.tooling.calls_by_tool),
                visible_tools=rendered.names if rendered is not None else list(self.tooling.restored_visible),
                render_key=rendered.key if rendered is not None else None,
            ),
            files=FilesBucket(reads=list(self.files.reads), writes=list(self.files.writes)),
            loop=LoopBucket(
                task=None
                if task is None
                else SnapshotTask(
                    task_id=task.task_id,
                    prompt=task.prompt,
                    status=task.status,
                    step_count=task.step_count,
                    max_steps=task.max_steps,
                    approval_mode=task.approval_mode,
                    allow_network=task.allow_network,
                    step_limit_warned=task.warned_step_limit,
                    step_cursor=task.step_cursor,
                ),
                task_count=self.loop.task_count,
                session_started_at=self.loop.started_at,
                lifetime_turns=self.loop.lifetime_turns,
                continuations=self.loop.continuations,
                compactions=compaction.compaction_count,
                fingerprints=list(self.loop.fingerprints),
                no_progress_streak=self.loop.no_progress_streak,
            ),
            recovery=RecoveryBucket(
                llm_retries=self.recovery.llm_retries,
                failure_signatures=dict(self.recovery.failure_signatures),
                last_failure_signature=self.recovery.last_failure_signature,
                interrupted_calls=self.recovery.interrupted_calls,
            ),
            checklist=self.checklist,
            prompt_cache=self.prompt_cache.to_wire() if self.prompt_cache.stable_prefix_hash else None,
            usage=self.usage.to_wire() if self.usage.requests else None,
            permissions=PermissionsBucket(
                approval_mode=task.approval_mode if task is not None else None,
                approval_decisions=self.permissions.records(),
                denials=dict(self.permissions.denials),
            ),
        )

    def take_buckets(self, snapshot: SessionRuntimeSnapshot) -> None:
        """The buckets of a restored v2 snapshot, but the transcript's thread (rebuilt and checked by
        the caller) and the task (the loop's own record, built from ``snapshot.loop.task``)."""
        if snapshot.transcript.compaction is not None:
            self.transcript.compaction = snapshot.transcript.compaction
        tooling = snapshot.tooling
        self.tooling.failures = FailureMemory(
            tooling.failures.last_call, tooling.failures.repeats, tooling.failures.failing_repeats
        )
        self.tooling.calls_by_tool = dict(tooling.calls_by_tool)
        self.tooling.restored_visible = list(tooling.visible_tools)
        self.files = Files(dict.fromkeys(snapshot.files.reads), dict.fromkeys(snapshot.files.writes))
        loop = snapshot.loop
        self.loop.task_count = loop.task_count
        self.loop.started_at = loop.session_started_at
        self.loop.lifetime_turns = loop.lifetime_turns
        self.loop.continuations = loop.continuations
        self.loop.fingerprints = list(loop.fingerprints[-FINGERPRINTS_KEPT:])
        self.loop.no_progress_streak = loop.no_progress_streak
        recovery = snapshot.recovery
        self.recovery = Recovery(
            recovery.llm_retries,
            dict(recovery.failure_signatures),
            recovery.last_failure_signature,
            recovery.interrupted_calls,
        )
        self.checklist = snapshot.checklist
        self.prompt_cache = PromptCacheState.from_wire(snapshot.prompt_cache)
        self.usage = UsageTotals.from_wire(snapshot.usage)
        self.permissions.denials = dict(snapshot.permissions.denials)
        self.permissions.restored = list(snapshot.permissions.approval_decisions)
