"""The session: the eight JSON-RPC methods of seed 000 §3.1 over one session per process (§1).

``CreateSession`` follows §3.2 step by step, ``Shutdown`` §3.4, ``ResumeSession`` §9.5 (a new process
after a crash) and §3.3's PAUSED → RUNNING (the same process after a pause). Tasks run in the
background: ``StartTask`` answers as soon as the task is accepted and its progress arrives as
``SessionEvent`` notifications.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.backend_tools import (
    BackendToolRouter,
    discover_backend_tools,
    remote_tool_allowed,
)
from agent_runtime.agent_host.checklist import SESSION_TOOL_DEFINITIONS
from agent_runtime.agent_host.events import EventEmitter, Notify
from agent_runtime.agent_host.llm import GatewayConfig, LlmClient, RetrySettings
from agent_runtime.agent_host.llm.config import KEEP_ALIVE_S
from agent_runtime.agent_host.loop import AgentLoop, LoopContext, TaskRecord
from agent_runtime.agent_host.policy import Denied, PolicyEnforcer, PolicyExpired
from agent_runtime.agent_host.policy.saved_rules import SavedRules
from agent_runtime.agent_host.routing import ToolDispatch, ToolRouter
from agent_runtime.agent_host.routing.before_images import BeforeImages, prune_old_sessions
from agent_runtime.agent_host.services import (
    BackendClient,
    BackendConfig,
    SessionGone,
    keys_from_environment,
    verify_policy_bundle,
)
from agent_runtime.agent_host.services.push import PushChannel, PushSettings
from agent_runtime.agent_host.session.rpc import Dispatcher, InvalidParams, StateConflict, in_own_task
from agent_runtime.agent_host.session_runtime.persist import save_snapshot
from agent_runtime.agent_host.session_runtime.restore import RestorePoint, find_restore_point
from agent_runtime.agent_host.session_runtime.runtime import SessionRuntime, Transcript
from agent_runtime.agent_host.session_runtime.tools import RenderContext, ToolAvailability
from agent_runtime.agent_host.state import (
    CheckpointCorrupt,
    CheckpointStore,
    checkpoints_dir,
    event_log_path,
    safe_session_id,
    uploads_dir,
)
from agent_runtime.agent_host.thread import (
    ConversationThread,
    ThreadOrderError,
    TiktokenTokenizer,
    TokenBudget,
    utc_now,
)
from agent_runtime.agent_host.uploads import PolicyAdmission, UploadQueue, UploadSpool
from agent_runtime.agent_host.uploads.artifact_tool import UploadArtifactTool
from agent_runtime.agent_host.uploads.attachments import store_attachments
from contracts.checklist import SESSION_TOOL_NAMES
from contracts.enums import (
    ApprovalMode,
    Capability,
    CheckpointTaskStatus,
    CompatibilityStatus,
    OsFamily,
    SessionStatus,
    TaskStatus,
    ToolName,
    ToolStatus,
)
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.events import EventType
from contracts.instructions import ProjectInstructions
from contracts.messages import SessionHistory
from contracts.methods import (
    AnswerElicitationParams,
    AnswerElicitationResult,
    ApproveActionParams,
    ApproveActionResult,
    CancelTaskParams,
    CancelTaskResult,
    CreateSessionParams,
    CreateSessionResult,
    GetMcpServersParams,
    GetMcpServersResult,
    GetPatchPreviewParams,
    GetSessionStateParams,
    PatchPreview,
    ResumeSessionParams,
    ResumeSessionResult,
    RevertChangesParams,
    RevertChangesResult,
    SessionState,
    ShutdownParams,
    ShutdownResult,
    StartTaskParams,
    StartTaskResult,
    TaskState,
)
from contracts.policy import ANY_MODEL, PolicyBundle
from contracts.rest.sessions import (
    CancelSessionRequest,
    CreateSessionRequest,
    ResumeSessionRequest,
    SessionResource,
)
from contracts.session_runtime import SessionRuntimeSnapshot, SnapshotTask
from contracts.tools import ToolCall

from .backend_access import backend_variables
from .governance import PolicyPush
from .instructions import load_project_instructions, user_config_dir
from .machine import TERMINAL_SESSION, TERMINAL_TASK, SessionMachine
from .observing import start_observing
from .settings import RuntimeSettings

if TYPE_CHECKING:
    from agent_runtime.agent_host.mcp.link import McpLink
    from contracts.mcp_boundary import McpServersFactory

__all__ = ["INTERRUPTED", "RouterFactory", "SessionHost"]

logger = logging.getLogger(__name__)

RouterFactory = Callable[[Sequence[str]], ToolRouter]
"""Builds the tool runtime for the session's project folders (the composition root supplies it)."""

INTERRUPTED = (
    "Interrupted — the agent runtime stopped while this tool call was running, so its result is unknown."
    " Check the current state (files, processes) before repeating it."
)

_TASK_STATUS = {
    CheckpointTaskStatus.RUNNING: TaskStatus.TASK_RUNNING,
    CheckpointTaskStatus.COMPLETED: TaskStatus.TASK_COMPLETED,
    CheckpointTaskStatus.FAILED: TaskStatus.TASK_FAILED,
    CheckpointTaskStatus.CANCELLED: TaskStatus.TASK_CANCELLED,
}


def _invalid(message: str, **details: object) -> CoworkError:
    return CoworkError(ErrorCode.INVALID_REQUEST, message, details=dict(details))


class SessionHost:
    def __init__(
        self,
        *,
        router_factory: RouterFactory,
        os_family: OsFamily,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = utc_now,
        exit_requested: asyncio.Event | None = None,
        mcp_factory: McpServersFactory | None = None,
        startup_ms: float | None = None,
    ) -> None:
        """``mcp_factory`` builds the tool runtime's MCP client for a session that has MCP servers
        configured (seed 003 §9); without one, such servers are left unused (and a warning logged).
        ``startup_ms``: how long the program took to get here, reported once (telemetry)."""
        self._environ = dict(os.environ if environ is None else environ)
        self._router_factory = router_factory
        self._mcp_factory = mcp_factory
        self._os_family = os_family
        self._clock = clock
        self._settings = RuntimeSettings.from_environment(self._environ)
        self._store = CheckpointStore(checkpoints_dir(self._settings.data_dir))
        self._notify: Notify | None = None
        self._lock = asyncio.Lock()
        self._backend: BackendClient | None = None
        self._ctx: LoopContext | None = None
        self._loop: AgentLoop | None = None
        self._task: TaskRecord | None = None
        self._task_ids: set[str] = set()
        self._runner: asyncio.Task[None] | None = None
        self._push: PushChannel | None = None
        """The Session Service's push to this session: policy changes and revocations, admin stop."""
        self._startup_ms = startup_ms
        self._flags: dict[str, bool] = {}
        """The session's ``featureFlags`` as the Session Service last gave them (contracts.observability)."""
        self._started_at = clock()
        # On demand: a session counts with estimates until exact counts could matter (a long thread),
        # so a short task never waits for the encoding nor holds its 30–45 MB (thread/tokens.py).
        self._tokenizer = TiktokenTokenizer(on_demand=True)
        self.exit_requested = exit_requested or asyncio.Event()
        """Set when ``Shutdown`` has done its work, or the session failed: the program then closes the
        connection and exits."""
        self.session_failed = False
        """The session ended SESSION_FAILED: the program exits with a status of its own."""

    # ------------------------------------------------------------------ wiring

    def register(self, dispatcher: Dispatcher) -> None:
        # The methods that call the backend run in tasks of their own (see ``in_own_task``).
        dispatcher.add("CreateSession", in_own_task(self.create_session), CreateSessionParams)
        dispatcher.add("StartTask", self.start_task, StartTaskParams)
        dispatcher.add("CancelTask", in_own_task(self.cancel_task), CancelTaskParams)
        dispatcher.add("ResumeSession", in_own_task(self.resume_session), ResumeSessionParams)
        dispatcher.add("GetSessionState", self.get_session_state, GetSessionStateParams)
        dispatcher.add("GetPatchPreview", self.get_patch_preview, GetPatchPreviewParams)
        dispatcher.add("ApproveAction", self.approve_action, ApproveActionParams)
        dispatcher.add("Shutdown", in_own_task(self.shutdown), ShutdownParams)
        dispatcher.add("AnswerElicitation", self.answer_elicitation, AnswerElicitationParams)
        dispatcher.add("GetMcpServers", self.get_mcp_servers, GetMcpServersParams)
        dispatcher.add("RevertChanges", self.revert_changes, RevertChangesParams)

    def attach(self, notify: Notify | None) -> None:
        """Where ``SessionEvent`` notifications go (the desktop's connection)."""
        self._notify = notify
        if self._ctx is not None:
            self._ctx.emitter.attach(notify)

    @property
    def store(self) -> CheckpointStore:
        return self._store

    # ------------------------------------------------------------------ CreateSession (§3.2)

    async def create_session(self, params: CreateSessionParams) -> CreateSessionResult:
        async with self._lock:
            self._refuse_second_session()
            gateway = GatewayConfig.from_env(self._environ)  # step 7's inputs, checked before step 2
            paths = self._workspace_paths(params.workspace_hint.local_paths if params.workspace_hint else [])
            backend = self._backend_client()
            # Steps 2–3: the Session Service handshake.
            response = await backend.create_session(
                CreateSessionRequest(
                    client_info=params.client_info,
                    supported_capabilities=params.supported_capabilities,
                    workspace_hint=params.workspace_hint,
                    execution_environment=params.execution_environment,
                )
            )
            # Step 4.
            if response.compatibility_status is CompatibilityStatus.INCOMPATIBLE:
                verdicts = {name: verdict.to_wire() for name, verdict in response.compatibility.items()}
                raise StateConflict(
                    "The backend does not support this version of the desktop app or agent runtime; update"
                    " Cowork.",
                    compatibilityStatus=CompatibilityStatus.INCOMPATIBLE.value,
                    compatibility=verdicts,
                )
            # The contract guarantees these for a compatible answer.
            assert response.session_id is not None
            assert response.workspace_id is not None
            assert response.policy_bundle is not None
            session_id, workspace_id = response.session_id, response.workspace_id
            self._flags = dict(response.feature_flags)
            # Read once, here: the session keeps them (and its checkpoint), so its prompt stays the same.
            instructions = await asyncio.to_thread(load_project_instructions, paths, user_config_dir())
            try:
                # Steps 5–6: the bundle is validated and signed by a trusted key, then enforced.
                enforcer = await self._enforcer(response.policy_bundle, session_id)
                # Step 8, or a past conversation's thread to continue (seed 004 scenario B).
                thread = (
                    None
                    if params.history is None
                    else self._continued_thread(params.history, session_id, enforcer)
                )
                ctx = self._context(
                    session_id=session_id,
                    workspace_id=workspace_id,
                    tenant_id=params.tenant_id,
                    user_id=params.user_id,
                    paths=paths,
                    enforcer=enforcer,
                    gateway=gateway,
                    thread=thread,
                    machine=SessionMachine(),
                    instructions=instructions,
                )
            except CoworkError as exc:
                await self._end_remote(session_id, SessionStatus.SESSION_FAILED, exc.shape.message)
                raise
            self._observe(ctx, "created")
            # Old conversations' kept changes go in the background: the session does not wait on it.
            asyncio.get_running_loop().run_in_executor(None, prune_old_sessions, self._settings.data_dir)
            await self._attach_backend_tools(ctx)
            # Steps 8–12.
            ctx.machine.to_session(SessionStatus.SESSION_RUNNING)
            ctx.started_at = self._clock()
            self._install(ctx)
            self._checkpoint(snapshot_event=True)
            ctx.emitter.emit(
                EventType.SESSION_STARTED,
                {
                    "executionEnvironment": params.execution_environment.value,
                    "instructionFiles": [file.to_wire() for file in instructions.files],
                },
            )
            return CreateSessionResult(
                session_id=session_id,
                workspace_id=workspace_id,
                session_status=ctx.machine.session,
                compatibility_status=response.compatibility_status,
                feature_flags=response.feature_flags,
                policy_bundle_version=enforcer.bundle.version,
                policy_expires_at=enforcer.bundle.expires_at,
            )

    def _continued_thread(
        self, history: SessionHistory, session_id: str, enforcer: PolicyEnforcer
    ) -> ConversationThread:
        thread = ConversationThread.from_session_history(
            history,
            session_id=session_id,
            tokenizer=self._tokenizer,
            budget=TokenBudget(enforcer.bundle.llm_policy.max_session_tokens),
        )
        if thread.pending_tool_calls:
            # A snapshot taken while calls were open: answer them so the next turn is valid.
            last = history.messages[-1]
            thread.fail_pending_tool_calls(
                "The conversation was continued in a new session before this call reported a result.",
                task_id=last.task_id or history.snapshot_after_task_id,
                step_id=last.step_id or "step_continued",
            )
        return thread

    # ------------------------------------------------------------------ tasks

    async def start_task(self, params: StartTaskParams) -> StartTaskResult:
        ctx = self._require(params.session_id)
        if ctx.machine.session is SessionStatus.SESSION_PAUSED:
            raise StateConflict(
                "The session is paused; resume it before starting a task.", sessionStatus="SESSION_PAUSED"
            )
        if ctx.machine.session is not SessionStatus.SESSION_RUNNING:
            raise StateConflict(
                f"The session has ended ({ctx.machine.session.value}).",
                sessionStatus=ctx.machine.session.value,
            )
        if self._running():
            assert self._task is not None
            raise StateConflict(
                f"Task {self._task.task_id} is still running; cancel it or wait for it to end.",
                taskId=self._task.task_id,
            )
        if params.task_id in self._task_ids:
            raise StateConflict(
                f"Task {params.task_id} already ran in this session; use a new taskId.", taskId=params.task_id
            )
        if ctx.machine.task in TERMINAL_TASK:
            ctx.machine.to_task(TaskStatus.IDLE)
        options = params.task_options
        try:
            saved_rules = SavedRules(
                options.permission_rules or [],
                os_family=ctx.os_family,
                workspace_roots=ctx.dispatch.workspace_roots,
            )
        except ValueError as exc:
            raise InvalidParams("taskOptions.permissionRules", str(exc)) from None
        ctx.model = self._task_model(ctx, options.model)
        ctx.llm.task_model = options.model
        ctx.machine.to_task(TaskStatus.TASK_RUNNING)
        task = TaskRecord(
            task_id=params.task_id,
            prompt=params.prompt,
            max_steps=options.max_steps,
            approval_mode=options.approval_mode,
            allow_network=options.allow_network,
            saved_rules=saved_rules,
            last_task=bool(options.last_task),
        )
        self._task_ids.add(task.task_id)
        ctx.task_count += 1
        self._task = task
        # A new task of the loop bucket: fingerprints, the no-progress streak and the runaway guard's
        # memory are about one task's steps.
        ctx.runtime.loop.task = task
        ctx.runtime.loop.begin_task()
        ctx.runtime.tooling.failures.reset()
        ctx.thread.add_user_message(params.prompt, task_id=task.task_id, images=params.images or ())
        if params.images:
            await store_attachments(
                ctx.uploads,
                params.images,
                workspace_id=ctx.workspace_id,
                session_id=ctx.session_id,
                task_id=task.task_id,
            )
        # Before answering: a task the desktop saw accepted survives a crash right after (§9.3).
        self._checkpoint(snapshot_event=True)
        ctx.emitter.emit(
            EventType.TASK_STARTED,
            {"maxSteps": task.max_steps, "approvalMode": task.approval_mode.value, "prompt": task.prompt},
            task_id=task.task_id,
        )
        self._start_runner(task)
        return StartTaskResult(task_id=task.task_id, status=TaskStatus.TASK_RUNNING)

    @staticmethod
    def _task_model(ctx: LoopContext, requested: str | None) -> str:
        """The model a task calls: the one its options name, when the policy allows it, else the
        configured one the policy allows (a task after one that named a model goes back to it)."""
        policy = ctx.enforcer.bundle.llm_policy
        if requested is None:
            return policy.choose_model(ctx.llm.config.model) or ctx.model
        if not policy.allows_model(requested):
            allowed = ", ".join(model for model in policy.allowed_models if model != ANY_MODEL)
            raise InvalidParams(
                "taskOptions.model",
                f"names {requested[:100]}, which the organisation's policy does not allow"
                + (f" (allowed: {allowed})" if allowed else ""),
            )
        return requested

    async def cancel_task(self, params: CancelTaskParams) -> CancelTaskResult:
        ctx = self._require(params.session_id)
        task, loop = self._task, self._loop
        if task is None or loop is None or task.task_id != params.task_id:
            return CancelTaskResult(task_id=params.task_id, cancellation_requested=False)
        if self._running():
            loop.request_cancel()
            return CancelTaskResult(task_id=task.task_id, cancellation_requested=True)
        if (
            task.status is CheckpointTaskStatus.RUNNING
            and ctx.machine.session is SessionStatus.SESSION_PAUSED
        ):
            # A task suspended by a pause ends here; the session stays paused.
            await loop.finish_suspended(task)
            return CancelTaskResult(task_id=task.task_id, cancellation_requested=True)
        return CancelTaskResult(task_id=task.task_id, cancellation_requested=False)

    def _start_runner(self, task: TaskRecord) -> None:
        assert self._loop is not None
        assert self._ctx is not None
        if self._running():
            # Seed 002 resume safety: the task is executing already; a second "executing" is skipped.
            logger.info("Task %s is already executing; not started again", task.task_id)
            return
        if task.status is not CheckpointTaskStatus.RUNNING:
            # A terminal task is never reopened.
            logger.warning("Task %s has ended (%s); not started again", task.task_id, task.status.value)
            return
        loop = self._loop
        self._set_tools(self._ctx, task)

        async def run() -> None:
            try:
                outcome = await loop.run(task)
                logger.info("Task %s ended: %s (%s)", task.task_id, outcome.end.value, outcome.reason)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("Task %s failed inside the runtime", task.task_id)
                await loop.fail_internal(task)

        self._runner = asyncio.create_task(run(), name=f"task-{task.task_id}")

    def _running(self) -> bool:
        return self._runner is not None and not self._runner.done()

    # ------------------------------------------------------------------ ResumeSession (§9.5, §3.3)

    async def resume_session(self, params: ResumeSessionParams) -> ResumeSessionResult:
        async with self._lock:
            ctx = self._ctx
            if ctx is None:
                return await self._recover(params.session_id)
            if ctx.session_id != params.session_id:
                raise self._not_found(params.session_id)
            if ctx.machine.session is SessionStatus.SESSION_RUNNING:
                return self._resume_result(ctx)
            if ctx.machine.session is not SessionStatus.SESSION_PAUSED:
                raise CoworkError(
                    ErrorCode.SESSION_EXPIRED,
                    f"Session {ctx.session_id} has ended ({ctx.machine.session.value}).",
                )
            task = self._task
            refreshed = await self._refresh(ctx.session_id, task.step_cursor if task else None, ctx.enforcer)
            await self._apply_bundle(ctx, refreshed)
            ctx.machine.to_session(SessionStatus.SESSION_RUNNING)
            self._checkpoint(snapshot_event=True)
            ctx.emitter.emit(
                EventType.SESSION_RESUMED, {"resumedFromStepId": task.step_cursor if task else None}
            )
            if task is not None and task.status is CheckpointTaskStatus.RUNNING:
                self._start_runner(task)
            return self._resume_result(ctx)

    async def _recover(self, session_id: str) -> ResumeSessionResult:
        """A new process picks up a crashed one's session from its checkpoint (§9.5–§9.7)."""
        try:
            safe_session_id(session_id)
        except ValueError:
            raise _invalid(
                "sessionId is not a session ID this runtime could have created.", field="sessionId"
            ) from None
        log_path = event_log_path(self._settings.data_dir, session_id)
        try:
            point = await asyncio.to_thread(find_restore_point, self._store, log_path, session_id)
        except CheckpointCorrupt as exc:
            raise await self._recovery_failed(exc) from None
        if point is None:
            raise CoworkError(
                ErrorCode.SESSION_NOT_FOUND,
                f"There is no checkpoint of session {session_id} to resume.",
                details={"sessionId": session_id},
            )
        if point.session_status in TERMINAL_SESSION:
            raise CoworkError(
                ErrorCode.SESSION_NOT_FOUND,
                f"Session {session_id} has ended ({point.session_status.value}); there is nothing to resume.",
                details={"sessionId": session_id, "sessionStatus": point.session_status.value},
            )
        gateway = GatewayConfig.from_env(self._environ)
        held = await self._check_identity(point)
        try:
            bundle = await self._refresh(session_id, point.step_cursor, None, point.policy_bundle_version)
        except SessionGone:
            self._store.delete(session_id)  # §9.6: a stale checkpoint
            raise
        enforcer = await self._enforcer(bundle, session_id)
        snapshot = point.complete(
            tenant_id=held.tenant_id,
            workspace_id=held.workspace_id,
            user_id=held.user_id,
            policy_bundle_version=bundle.version,
            now=self._clock(),
        )
        try:
            thread = self._restored_thread(snapshot, bundle.llm_policy.max_session_tokens)
        except ThreadOrderError as exc:
            # The thread's own rule (unique IDs, every result after its call, calls left open only
            # by the last step): a thread that breaks it cannot be sent to any model.
            corrupt = self._store.set_aside(
                session_id,
                f"its thread is inconsistent: {exc.shape.message}",
                workspace_id=snapshot.workspace_id,
            )
            raise await self._recovery_failed(corrupt) from None
        task = self._task_from(snapshot.loop.task)
        ended = task is not None and task.status is not CheckpointTaskStatus.RUNNING
        ctx = self._context(
            session_id=session_id,
            workspace_id=snapshot.workspace_id,
            tenant_id=snapshot.tenant_id,
            user_id=snapshot.user_id,
            paths=tuple(snapshot.workspace_paths),
            enforcer=enforcer,
            gateway=gateway,
            thread=thread,
            # Seed 002 resume safety: a terminal task is taken as it was persisted, never reopened.
            machine=SessionMachine(task=_TASK_STATUS[task.status])
            if task is not None and ended
            else SessionMachine(),
            # What the session read when it was created, not the files as they are now: the same prompt.
            instructions=snapshot.project_instructions or ProjectInstructions(),
        )
        self._observe(ctx, "recovered")
        await self._attach_backend_tools(ctx)
        # Every bucket as it was: prompt cache, usage, compaction, checklist, loop and tool counters…
        ctx.runtime.take_buckets(snapshot)
        ctx.runtime.legacy_restore = point.source if point.legacy else None
        ctx.approvals.restore(ctx.runtime.permissions.restored)
        ctx.started_at = ctx.started_at or self._started_at
        logger.info("Session %s restored from its %s", session_id, point.source.replace("_", " "))
        ctx.machine.to_session(SessionStatus.SESSION_RUNNING)
        self._install(ctx)
        if task is not None:
            self._task = task
            self._task_ids.add(task.task_id)
            ctx.runtime.loop.task = task
            if not ended:
                ctx.machine.to_task(TaskStatus.TASK_RUNNING)
            self._answer_interrupted(ctx, task, count_step=not ended)
        # A legacy restore is written back as session_runtime_v2 here (seed 002), with the event.
        self._checkpoint(snapshot_event=True)
        ctx.emitter.emit(EventType.SESSION_RESUMED, {"resumedFromStepId": task.step_cursor if task else None})
        if task is not None and task.status is CheckpointTaskStatus.RUNNING:
            self._start_runner(task)
        return self._resume_result(ctx)

    def _restored_thread(
        self, snapshot: SessionRuntimeSnapshot, max_session_tokens: int
    ) -> ConversationThread:
        """The transcript's thread, checked message by message (seed 004 scenario A); the earlier
        sessions of a continued conversation are admitted too (scenario B)."""
        messages = snapshot.transcript.messages
        return ConversationThread.restore(
            messages,
            session_id=snapshot.session_id,
            tokenizer=self._tokenizer,
            budget=TokenBudget(max_session_tokens, used=snapshot.transcript.session_tokens_used),
            messages_session_id=frozenset({snapshot.session_id, *(m.session_id for m in messages)}),
            counted_with=snapshot.transcript.counted_with,
        )

    async def _check_identity(self, point: RestorePoint) -> SessionResource:
        """The saved state must describe the session the Session Service holds (§9.5): one naming
        another tenant, workspace or user would act, upload and record approvals in the wrong place,
        so it is corrupt (§9.7) rather than resumed. Sources without a tenant and user (a legacy
        snapshot event, the event log) take them from the Session Service; their workspace must match."""
        session_id = point.session_id
        try:
            held = await self._backend_client().get_session(session_id)
        except SessionGone:
            self._store.delete(session_id)  # §9.6: a stale checkpoint
            raise
        saved = point.snapshot
        checks = (
            [("workspaceId", point.workspace_id or held.workspace_id, held.workspace_id)]
            if saved is None
            else [
                ("tenantId", saved.tenant_id, held.tenant_id),
                ("workspaceId", saved.workspace_id, held.workspace_id),
                ("userId", saved.user_id, held.user_id),
            ]
        )
        for field, value, expected in checks:
            if value != expected:
                corrupt = self._store.set_aside(
                    session_id,
                    f"its {field} {value[:80]!r} is not the {field} of session {session_id} at the Session"
                    " Service",
                    workspace_id=held.workspace_id,
                )
                raise await self._recovery_failed(corrupt, workspace_id=held.workspace_id)
        return held

    async def _recovery_failed(
        self, corrupt: CheckpointCorrupt, *, workspace_id: str | None = None
    ) -> CoworkError:
        """§9.7 "notify the Desktop App that crash recovery failed": a ``checkpoint_recovery_failed``
        event, delivered before the answer, and the error ``ResumeSession`` answers with.

        Not an invalid request: the desktop asked for a session it may resume; the file on this
        machine is what failed. The event needs the session's workspace: the Session Service's word
        for it, else the file's own, else (neither known) the event is left out and only the error
        tells."""
        session_id = corrupt.session_id
        if workspace_id is None:
            try:
                workspace_id = (await self._backend_client().get_session(session_id)).workspace_id
            except CoworkError as exc:
                logger.info("The Session Service could not name the workspace of %s: %s", session_id, exc)
                workspace_id = corrupt.workspace_id
        if workspace_id is None:
            logger.warning(
                "No workspace known for session %s: checkpoint_recovery_failed not sent", session_id
            )
        else:
            emitter = self._emitter(workspace_id, session_id)
            emitter.emit(EventType.CHECKPOINT_RECOVERY_FAILED, {"reason": corrupt.reason})
            await emitter.aclose()  # bounded; the event reaches the desktop before the error does
        details: dict[str, object] = {"sessionId": session_id, "recovery": "failed", "reason": corrupt.reason}
        if corrupt.moved_to is not None:
            details["movedTo"] = corrupt.moved_to
            kept = f" was set aside as {corrupt.moved_to} in the checkpoints folder for diagnosis"
        else:
            kept = " was removed"
        return CoworkError(
            ErrorCode.SESSION_NOT_FOUND,
            f"Crash recovery failed: the checkpoint of session {session_id} cannot be used"
            f" ({corrupt.reason}) and{kept}. Start a new session; the history of its last completed task"
            " is kept by the Workspace Service.",
            details=details,
        )

    @staticmethod
    def _task_from(saved: SnapshotTask | None) -> TaskRecord | None:
        if saved is None:
            return None
        return TaskRecord(
            task_id=saved.task_id,
            prompt=saved.prompt,
            max_steps=saved.max_steps,
            approval_mode=saved.approval_mode or ApprovalMode.ON_RISKY_ACTIONS,
            allow_network=saved.allow_network is not False,
            step_count=saved.step_count,
            status=saved.status,
            step_cursor=saved.step_cursor,
            warned_step_limit=saved.step_limit_warned is True,
        )

    def _answer_interrupted(self, ctx: LoopContext, task: TaskRecord, *, count_step: bool = True) -> None:
        """Tool calls that were running when the process died get an explicit "interrupted — result
        unknown" result: the thread stays valid for the model, and the user sees which ones. A task that
        had already ended keeps its record (``count_step`` False): it is never reopened."""
        pending = ctx.thread.pending_tool_calls
        if not pending:
            return
        step_id = ctx.thread.messages[-1].step_id or task.step_cursor or "step_interrupted"
        answers = ctx.thread.fail_pending_tool_calls(INTERRUPTED, task_id=task.task_id, step_id=step_id)
        for message in answers:
            ctx.emitter.emit(
                EventType.TOOL_COMPLETED,
                {
                    "toolName": message.tool_name or "unknown",
                    "status": ToolStatus.FAILED.value,
                    "latencyMs": 0,
                    "toolCallId": message.tool_call_id,
                    "error": {"code": ErrorCode.TOOL_EXECUTION_FAILED.value, "message": INTERRUPTED},
                },
                task_id=task.task_id,
                step_id=step_id,
            )
        ctx.runtime.recovery.interrupted_calls += len(answers)
        if count_step:
            task.step_count += 1
            task.step_cursor = step_id

    def _resume_result(self, ctx: LoopContext) -> ResumeSessionResult:
        task = self._task
        return ResumeSessionResult(
            session_id=ctx.session_id,
            session_status=ctx.machine.session,
            resumed_from_step_id=task.step_cursor if task else None,
            task=self._task_state(ctx),
            feature_flags=self._flags,
        )

    async def _refresh(
        self,
        session_id: str,
        cursor: str | None,
        enforcer: PolicyEnforcer | None,
        held_version: str | None = None,
    ) -> PolicyBundle:
        backend = self._backend_client()
        version = enforcer.bundle.version if enforcer is not None else held_version
        try:
            response = await backend.resume_session(
                session_id, ResumeSessionRequest(checkpoint_cursor=cursor, policy_bundle_version=version)
            )
        except SessionGone as exc:
            if self._ctx is not None:
                # §3.3 "RUNNING → FAILED (e.g. resume fails)": the session cannot go on in this process.
                await self._fail_session(self._ctx, "resume_refused", exc.shape)
            raise
        self._flags = dict(response.feature_flags)
        return response.policy_bundle

    async def _apply_bundle(self, ctx: LoopContext, bundle: PolicyBundle) -> None:
        """§3.3 PAUSED → RUNNING: re-initialise the enforcer (and what depends on the bundle)."""
        self._use_enforcer(ctx, await self._enforcer(bundle, ctx.session_id))
        await self._attach_backend_tools(ctx)  # a refreshed bundle may grant them for the first time
        if ctx.observability is not None:
            ctx.observability.set_flags(self._flags)
            ctx.observability.policy_loaded(ctx.enforcer.bundle, "refreshed", self._flags)

    def _use_enforcer(self, ctx: LoopContext, enforcer: PolicyEnforcer) -> None:
        """A verified bundle's enforcer in force, with the model, budget and tools it allows; never
        during a step (a resume, or a step boundary for a pushed bundle)."""
        model = enforcer.bundle.llm_policy.choose_model(ctx.llm.task_model or ctx.llm.config.model)
        if model is None:
            raise CoworkError(
                ErrorCode.POLICY_BUNDLE_INVALID, "The refreshed policy allows no model this runtime can call."
            )
        ctx.enforcer, ctx.model = enforcer, model
        ctx.thread.budget = ctx.thread.budget.with_limit(enforcer.bundle.llm_policy.max_session_tokens)
        self._set_tools(ctx)

    async def _attach_backend_tools(self, ctx: LoopContext) -> None:
        """Seed 000 §7.6: the Backend Tool Service's tools the bundle allows, routed like local ones
        from the next render on. Asked once the bundle grants ``BackendTool.Invoke``; a service that
        cannot answer leaves the session without them (asked again with a refreshed bundle)."""
        if ctx.dispatch.remote_attached or ctx.enforcer.grant(Capability.BACKEND_TOOL_INVOKE) is None:
            return
        backend = self._backend_client()
        taken = {tool.tool_name for tool in ctx.dispatch.available_tools(frozenset(Capability))}
        found = await discover_backend_tools(backend, ctx.enforcer, reserved=taken | SESSION_TOOL_NAMES)
        if found.problem is not None:
            logger.warning("No remote tools in session %s: %s", ctx.session_id, found.problem)
        if not found.tools:
            return
        ctx.dispatch.attach_remote(
            BackendToolRouter(backend, found.tools),
            allowed=lambda name: remote_tool_allowed(ctx.enforcer, name),
        )
        self._set_tools(ctx)

    # ------------------------------------------------------------------ reading

    async def get_session_state(self, params: GetSessionStateParams) -> SessionState:
        ctx = self._require(params.session_id)
        return SessionState(
            session_status=ctx.machine.session,
            task=self._task_state(ctx),
            session_tokens_used=ctx.thread.session_tokens_used,
            max_session_tokens=ctx.thread.budget.limit,
            projection=ctx.runtime.project(),
        )

    def _task_state(self, ctx: LoopContext) -> TaskState | None:
        task = self._task
        if task is None:
            return None
        return TaskState(
            task_id=task.task_id,
            status=ctx.machine.task,
            step_count=task.step_count,
            max_steps=task.max_steps,
        )

    async def get_patch_preview(self, params: GetPatchPreviewParams) -> PatchPreview:
        ctx = self._require(params.session_id)
        earlier = []
        for index, session_id in enumerate(params.earlier_session_ids):
            if session_id != ctx.session_id:
                earlier.append(self._earlier_changes(session_id, f"earlierSessionIds[{index}]"))
        roots = ctx.dispatch.workspace_roots

        def read() -> PatchPreview:
            preview = ctx.dispatch.patch_preview(params.task_id)
            files = list(preview.files)
            kept = [ctx.session_id]
            for session_id, images in earlier:
                if images.exists:
                    files += images.preview(roots, session_id)
                    kept.append(session_id)
            return PatchPreview(files=files, kept_session_ids=kept)

        # Reading and diffing files takes a while on big changes; keep the loop serving meanwhile.
        return await asyncio.to_thread(read)

    def _earlier_changes(self, session_id: str, field: str) -> tuple[str, BeforeImages]:
        try:
            return session_id, BeforeImages.for_session(self._settings.data_dir, session_id)
        except ValueError as exc:
            raise InvalidParams(field, str(exc)) from None

    async def revert_changes(self, params: RevertChangesParams) -> RevertChangesResult:
        """``RevertChanges``: files back to before a task, or the conversation, changed them — checked
        like writes against the policy in force now, and only while each file is still what the
        agent's last write left (else nothing is reverted)."""
        ctx = self._require(params.session_id)
        for index, path in enumerate(params.paths or ()):
            if "\0" in path or not os.path.isabs(path):
                raise InvalidParams(f"paths[{index}]", "must be an absolute path")
        if self._running():
            assert self._task is not None
            raise StateConflict(
                f"Task {self._task.task_id} is still running; revert changes after it ends.",
                taskId=self._task.task_id,
            )
        change_session = params.change_session_id or ctx.session_id
        if change_session == ctx.session_id:
            images = ctx.dispatch.before_images
        else:
            images = self._earlier_changes(change_session, "changeSessionId")[1]
        if images is None or not images.exists:
            raise CoworkError(
                ErrorCode.FILE_NOT_FOUND,
                f"The changes of session {change_session} are no longer kept on this computer.",
                details={"sessionId": change_session},
            )
        targets = await asyncio.to_thread(images.targets, params.task_id, params.paths)
        for target in targets:
            self._revert_allowed(ctx, target.path, deletes=target.deletes)
        await asyncio.to_thread(images.check, targets)
        reverted = []
        for target in targets:
            try:
                reverted.append(await asyncio.to_thread(images.apply, target))
            except OSError as exc:
                raise CoworkError(
                    ErrorCode.TOOL_EXECUTION_FAILED,
                    f"Could not revert {target.path}: {exc.strerror or exc}.",
                    details={"path": target.path, "reverted": [file.path for file in reverted]},
                ) from None
        if reverted:
            # The model's next turn must not build on files that are no longer there as it left them.
            done = ", ".join(f"{file.path} ({file.action})" for file in reverted)
            ctx.thread.add_system_note(
                f"The user reverted these files to how they were before the agent changed them: {done}."
            )
            self._checkpoint()
            ctx.emitter.emit(
                EventType.CHANGES_REVERTED,
                {
                    "changeSessionId": change_session,
                    "revertedTaskId": params.task_id,
                    "files": [file.to_wire() for file in reverted],
                },
            )
        return RevertChangesResult(files=reverted)

    def _revert_allowed(self, ctx: LoopContext, path: str, *, deletes: bool) -> None:
        """The policy's verdict on writing (or deleting) ``path`` now, as for the agent's own call. The
        user's click on Revert is the approval a write may need; a denial or expired policy refuses."""
        tool = ToolName.DELETE_FILE if deletes else ToolName.WRITE_FILE
        arguments: dict[str, object] = {"path": path} if deletes else {"path": path, "content": ""}
        call = ToolCall(tool_call_id="revert", tool_name=tool.value, arguments=arguments)
        prepared = ctx.dispatch.prepare(call, session_id=ctx.session_id, task_id="revert", step_id="revert")
        if prepared.failure is not None and prepared.failure.error is not None:
            error = prepared.failure.error
            raise CoworkError(error.code, error.message, details={"path": path})
        if prepared.capability is None or prepared.facts.resolved_path != path:
            raise CoworkError(
                ErrorCode.PERMISSION_DENIED,
                f"{path} now leads somewhere else (a folder on its way was replaced); it is left as it is.",
                details={"path": path},
            )
        outcome = ctx.enforcer.check(
            prepared.facts,
            prepared.capability,
            now=self._clock(),
            approval_mode=ApprovalMode.ON_RISKY_ACTIONS,
        )
        if isinstance(outcome, Denied | PolicyExpired):
            shape = outcome.to_error()
            raise CoworkError(shape.code, shape.message, details={**shape.details, "path": path})

    async def approve_action(self, params: ApproveActionParams) -> ApproveActionResult:
        ctx = self._require(params.session_id)
        return ctx.approvals.decide(params)

    # ------------------------------------------------------------------ MCP servers (seed 003 §9)

    async def answer_elicitation(self, params: AnswerElicitationParams) -> AnswerElicitationResult:
        ctx = self._require(params.session_id)
        if ctx.mcp is None:
            return AnswerElicitationResult(accepted=False)
        from agent_runtime.agent_host.mcp.elicitation import ElicitationContentInvalid

        try:
            return ctx.mcp.answer(params)
        except ElicitationContentInvalid as exc:
            raise InvalidParams("content", str(exc)) from None

    async def get_mcp_servers(self, params: GetMcpServersParams) -> GetMcpServersResult:
        ctx = self._require(params.session_id)
        return GetMcpServersResult(servers=ctx.mcp.states() if ctx.mcp is not None else [])

    # ------------------------------------------------------------------ Shutdown (§3.4)

    async def shutdown(self, params: ShutdownParams) -> ShutdownResult:
        async with self._lock:
            ctx = self._ctx
            if ctx is None:
                self.exit_requested.set()
                return ShutdownResult(session_status=SessionStatus.SESSION_COMPLETED)
            if params.session_id is not None and params.session_id != ctx.session_id:
                raise self._not_found(params.session_id)
            if ctx.machine.session in (SessionStatus.SESSION_RUNNING, SessionStatus.SESSION_PAUSED):
                await self._teardown(ctx, params.reason)
            self.exit_requested.set()
            return ShutdownResult(session_status=ctx.machine.session)

    async def _teardown(self, ctx: LoopContext, reason: str | None, *, cancelled: bool = False) -> None:
        """§3.4; ``cancelled``: the session ends SESSION_CANCELLED whatever its task was doing (an
        administrator stopped it)."""
        loop, task = self._loop, self._task
        assert loop is not None
        # §3.3 "PAUSED → CANCELLED: user cancels": a paused session never reached a clean end.
        cancelled = cancelled or ctx.machine.session is SessionStatus.SESSION_PAUSED
        loop.ending_session = True
        # Steps 1–2: cancel cooperatively and let the current step finish.
        if self._running() and self._runner is not None:
            loop.request_cancel()
            await asyncio.shield(self._runner)
            cancelled = True
        elif task is not None and task.status is CheckpointTaskStatus.RUNNING:
            await loop.finish_suspended(task)  # paused with a task: PAUSED → CANCELLED
            cancelled = True
        elif task is not None:
            # Step 3, spooled: the exit does not wait on the network; what is not sent yet is sent by the
            # next runtime (it normally went when the task ended: an unchanged history is not sent again).
            await loop.upload_history(task, wait=False)
        final = SessionStatus.SESSION_CANCELLED if cancelled else SessionStatus.SESSION_COMPLETED
        ctx.machine.to_session(final)
        # Step 4.
        if cancelled:
            ctx.emitter.emit(EventType.SESSION_CANCELLED, {"reason": reason or "The session was shut down."})
        else:
            # Counted over the whole session, across process restarts (both are in the checkpoint).
            duration = int((self._clock() - (ctx.started_at or self._started_at)).total_seconds() * 1000)
            ctx.emitter.emit(
                EventType.SESSION_COMPLETED,
                {
                    "taskCount": ctx.task_count,
                    "totalTokens": ctx.thread.session_tokens_used,
                    "durationMs": max(0, duration),
                },
            )
        # Steps 5–8.
        await self._end_remote(ctx.session_id, final, reason or "Shutdown")
        self._store.delete(ctx.session_id)
        await self.aclose()

    async def _fail_session(self, ctx: LoopContext, reason: str, error: ErrorShape) -> None:
        """§3.3 → SESSION_FAILED, the one path for an unrecoverable error: the task ends (failed), the
        history is uploaded if the Workspace Service takes it, ``session_failed`` is sent, the Session
        Service is told, the checkpoint is removed (nothing is left to resume) and the program exits
        with its own status (:attr:`session_failed`)."""
        if not ctx.machine.can_session(SessionStatus.SESSION_FAILED):
            return
        loop, task = self._loop, self._task
        assert loop is not None
        loop.ending_session = True
        if self._running() and self._runner is not None and self._runner is not asyncio.current_task():
            loop.request_cancel()
            await asyncio.shield(self._runner)
        if task is not None and task.status is CheckpointTaskStatus.RUNNING:
            await loop.fail_suspended(task, "session_failed", error)  # uploads the history
        elif task is not None:
            await loop.upload_history(task, wait=False)
        ctx.machine.to_session(SessionStatus.SESSION_FAILED)
        ctx.emitter.emit(EventType.SESSION_FAILED, {"reason": reason, "error": error.to_wire()})
        await self._end_remote(ctx.session_id, SessionStatus.SESSION_FAILED, error.message)
        self._store.delete(ctx.session_id)
        self.session_failed = True
        self.exit_requested.set()

    async def aclose(self) -> None:
        """Stop everything this host started; the checkpoint stays unless a shutdown removed it."""
        if self._push is not None:
            await self._push.aclose()
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
        ctx = self._ctx
        if ctx is not None:
            await ctx.approvals.aclose()
            if ctx.mcp is not None:
                # Seed 003 §9.2 step 5: every MCP session closed (DELETE), local servers stopped.
                await ctx.mcp.aclose()
            await ctx.dispatch.aclose()
            await ctx.llm.aclose()
            if ctx.uploads is not None:
                await ctx.uploads.aclose()  # what is not sent yet stays spooled for the next runtime
            await ctx.emitter.aclose()
            if ctx.observability is not None:
                # After the last event, before the client closes: sent if it can be within a second,
                # else left spooled for the next runtime.
                await ctx.observability.aclose()
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None

    async def _end_remote(self, session_id: str, final: SessionStatus, reason: str) -> None:
        """§3.4 step 5, best effort: the Session Service also expires sessions on its own."""
        try:
            await self._backend_client().cancel_session(
                session_id,
                CancelSessionRequest(reason=reason[:500], final_status=final.value),  # type: ignore[arg-type]
            )
        except CoworkError as exc:
            logger.warning(
                "Could not tell the Session Service that %s ended: %s", session_id, exc.shape.message
            )

    # ------------------------------------------------------------------ building blocks

    def _refuse_second_session(self) -> None:
        if self._ctx is not None:
            raise StateConflict(
                f"This agent runtime already holds session {self._ctx.session_id}: one session per process.",
                sessionId=self._ctx.session_id,
            )

    def _require(self, session_id: str) -> LoopContext:
        ctx = self._ctx
        if ctx is None or ctx.session_id != session_id:
            raise self._not_found(session_id)
        return ctx

    @staticmethod
    def _not_found(session_id: str) -> CoworkError:
        return CoworkError(
            ErrorCode.SESSION_NOT_FOUND,
            f"This agent runtime holds no session {session_id}.",
            details={"sessionId": session_id},
        )

    def _workspace_paths(self, paths: Sequence[str]) -> tuple[str, ...]:
        resolved = []
        for index, path in enumerate(paths):
            if "\0" in path or not os.path.isabs(path):
                raise _invalid(
                    "workspaceHint.localPaths must be absolute paths.",
                    field=f"workspaceHint.localPaths[{index}]",
                )
            real = os.path.realpath(path)
            if not os.path.isdir(real):
                raise _invalid(
                    f"The project folder {path} does not exist or is not a folder.",
                    field=f"workspaceHint.localPaths[{index}]",
                )
            resolved.append(real)
        return tuple(dict.fromkeys(resolved))

    def _emitter(self, workspace_id: str, session_id: str) -> EventEmitter:
        return EventEmitter(
            workspace_id=workspace_id,
            session_id=session_id,
            notify=self._notify,
            log_path=event_log_path(self._settings.data_dir, session_id),
            clock=self._clock,
        )

    def _backend_client(self) -> BackendClient:
        if self._backend is None:
            self._backend = BackendClient(BackendConfig.from_environment(backend_variables(self._environ)))
        return self._backend

    async def _enforcer(self, bundle: PolicyBundle, session_id: str) -> PolicyEnforcer:
        keys = keys_from_environment(backend_variables(self._environ))
        if keys is None:
            keys = await self._backend_client().policy_keys()
        verify_policy_bundle(bundle, keys)
        return PolicyEnforcer.load(
            bundle.to_wire(), session_id=session_id, now=self._clock(), os_family=self._os_family
        )

    def _context(
        self,
        *,
        session_id: str,
        workspace_id: str,
        tenant_id: str,
        user_id: str,
        paths: tuple[str, ...],
        enforcer: PolicyEnforcer,
        gateway: GatewayConfig,
        thread: ConversationThread | None,
        machine: SessionMachine,
        instructions: ProjectInstructions,
    ) -> LoopContext:
        policy = enforcer.bundle.llm_policy
        model = policy.choose_model(gateway.model)
        if model is None:
            raise CoworkError(
                ErrorCode.POLICY_BUNDLE_INVALID,
                "No model to call: the policy allows any model but none is configured (LLM_GATEWAY_MODEL),"
                " or the configured one is not allowed.",
                details={"configuredModel": gateway.model},
            )
        backend = self._backend_client()
        emitter = self._emitter(workspace_id, session_id)

        def upload_failed(name: str, reason: str) -> None:
            emitter.emit(EventType.ARTIFACT_UPLOAD_FAILED, {"artifactName": name, "reason": reason})

        # Artifacts and histories are spooled and sent in the background, never on a step's path; each
        # passes the bundle in force first (Workspace.Upload and its size limit, uploads/admission.py).
        uploads = UploadQueue(
            UploadSpool(uploads_dir(self._settings.data_dir)),
            backend,
            origin=backend.config.url,
            on_failed=upload_failed,
            admit=PolicyAdmission(lambda: ctx.enforcer, emitter.emit),
        )
        dispatch = ToolDispatch(
            self._router_factory(paths),
            workspace_roots=paths,
            uploader=backend,
            on_upload_failed=upload_failed,
            artifact_queue=uploads,
            before_images=BeforeImages.for_session(self._settings.data_dir, session_id),
        )
        dispatch.attach_upload_tool(UploadArtifactTool(uploads, workspace_id=workspace_id))
        if thread is None:
            thread = ConversationThread(
                session_id, self._tokenizer, budget=TokenBudget(policy.max_session_tokens)
            )
        runtime = SessionRuntime(
            session_id=session_id,
            workspace_id=workspace_id,
            tenant_id=tenant_id,
            user_id=user_id,
            workspace_paths=paths,
            machine=machine,
            transcript=Transcript(thread),
            instructions=instructions,
            availability=ToolAvailability(
                dispatch.available_tools,
                SESSION_TOOL_DEFINITIONS,
                thread.count_tokens,
                capability_of=dispatch.capability_of,
            ),
        )
        ctx = LoopContext(
            runtime=runtime,
            os_family=self._os_family,
            enforcer=enforcer,
            # One connection kept between calls (docs/decisions/0001-llm-connection-reuse.md).
            llm=LlmClient(
                gateway,
                retry=RetrySettings(base_s=self._settings.llm_retry_base_s),
                keep_alive_s=KEEP_ALIVE_S,
            ),
            model=model,
            dispatch=dispatch,
            approvals=ApprovalGate(
                session_id=session_id,
                emit=emitter.emit,
                persist=backend.record_approval,
                timeout_s=self._settings.approval_timeout_s,
                clock=self._clock,
            ),
            emitter=emitter,
            store=self._store,
            uploader=backend,
            uploads=uploads,
        )
        runtime.permissions.decisions = lambda: ctx.approvals.records
        if runtime.availability is not None:
            # Counted exactly from then on: the tool prompt's counts too, at its next render.
            thread.on_exact_counts = runtime.availability.invalidate
        uploads.start()  # and what earlier runtimes left in the spool for this backend…
        uploads.hold()  # …once the session's start and its first request are out of the way
        ctx.mcp = self._mcp_link(ctx)
        self._set_tools(ctx)
        return ctx

    def _mcp_link(self, ctx: LoopContext) -> McpLink | None:
        """The session's MCP servers (seed 003 §9), when the bundle or the project names any. Nothing of
        MCP is imported otherwise: the runtime's start-up pays for it only when it is used."""
        from agent_runtime.agent_host.mcp.configured import mcp_configured

        bundle = ctx.enforcer.bundle
        if not mcp_configured(bundle, ctx.workspace_paths):
            return None
        if self._mcp_factory is None:
            logger.warning("MCP servers are configured but this runtime was built without an MCP client")
            return None
        from agent_runtime.agent_host.mcp.elicitation import ElicitationBroker
        from agent_runtime.agent_host.mcp.link import McpLink
        from agent_runtime.agent_host.mcp.local_servers import local_command_check
        from contracts.enums import Capability
        from contracts.mcp_boundary import McpHooks, McpSetup

        settings = self._settings
        broker = ElicitationBroker(
            session_id=ctx.session_id, emit=ctx.emitter.emit, timeout_s=settings.mcp_elicitation_timeout_s
        )
        grant = bundle.grant(Capability.MCP_INVOKE)
        setup = McpSetup(
            session_id=ctx.session_id,
            servers=tuple(bundle.mcp_servers),
            allowed_tool_names=tuple(grant.allowed_tool_names or ()) if grant is not None else (),
            allow_local_servers=bundle.allow_local_mcp_servers,
            workspace_paths=ctx.workspace_paths,
            environ=self._environ,
            hooks=McpHooks(
                emit=ctx.emitter.emit,
                elicit=broker.ask,
                check_local_command=local_command_check(
                    lambda: ctx.enforcer, now=self._clock, workspace_roots=ctx.dispatch.workspace_roots
                ),
            ),
            extra={"backoff_s": settings.mcp_backoff_s},
        )
        link = McpLink(
            self._mcp_factory(setup), broker, dispatch=ctx.dispatch, start_wait_s=settings.mcp_start_wait_s
        )
        ctx.llm.tool_names = link.servers

        def tools_changed() -> None:
            assert ctx.runtime.availability is not None
            # The same names may now stand for new descriptions or schemas: render afresh.
            ctx.runtime.availability.invalidate()
            task = self._task
            self._set_tools(ctx, task if task is not None and self._running() else None)

        link.on_tools_changed = tools_changed
        return link

    def _set_tools(self, ctx: LoopContext, task: TaskRecord | None = None) -> None:
        """§5.2: the tools ``task`` may use and the prompt that describes them, through the session
        runtime's availability path (catalogue → restriction, allowlist, mode filters → rendering,
        cached per render context; seed 002). A tool the task's options forbid is not offered: the
        policy would deny every call of it (§8.2), so offering it would only spend steps on refusals."""
        runtime = ctx.runtime
        assert runtime.availability is not None
        runtime.tooling.rendered = runtime.availability.render(
            RenderContext(
                executing=task is not None,
                granted=frozenset(ctx.enforcer.granted),
                allow_network=task is None or task.allow_network,
                workspace_paths=ctx.workspace_paths,
                os_family=ctx.os_family,
                day=self._clock().date(),
                instructions=ctx.instructions.prompt_block,
            )
        )

    def _observe(self, ctx: LoopContext, source: str) -> None:
        """The session's audit and telemetry producer (seed 001 §6.3), as its featureFlags say."""
        start_observing(
            ctx,
            backend=self._backend_client(),
            data_dir=self._settings.data_dir,
            feature_flags=self._flags,
            source=source,
            clock=self._clock,
            startup_ms=self._startup_ms,
            flush_after_s=self._settings.events_flush_s,
        )
        self._startup_ms = None  # once per process

    def _install(self, ctx: LoopContext) -> None:
        self._ctx = ctx
        self._loop = AgentLoop(ctx, clock=self._clock)
        if ctx.mcp is not None:
            ctx.mcp.start()
        backend = self._backend_client()
        self._push = PushChannel(
            backend.config,
            backend,
            ctx.session_id,
            PolicyPush(self).deliver,
            settings=PushSettings.from_environment(self._environ),
        )
        self._push.start()

    def _checkpoint(self, *, snapshot_event: bool = False) -> None:
        """The session runtime's snapshot to the checkpoint (and, with ``snapshot_event``, to the event
        log as ``conversation_snapshot``)."""
        ctx = self._ctx
        if ctx is None:
            return
        save_snapshot(
            ctx.runtime,
            self._store,
            ctx.emitter,
            now=self._clock(),
            policy_bundle_version=ctx.enforcer.bundle.version,
            event=snapshot_event,
        )
