"""``runTask`` (seed 000 §4.1) with the completion table of §4.4, cooperative cancellation (§4.5) and
the error handling of §4.6 and §11.

A step is: pre-checks (policy expiry, ``LLM.Call``, token budget — §6.5, §8.7), one streamed LLM call,
the assistant's message added to the thread, its tool calls run (:mod:`.tool_calls`), their results
added, a checkpoint. Two checkpoints per step with tools: one as soon as the assistant's tool calls are
in the thread — so a crash while tools run leaves a record of what was in flight, and the resumed
session answers those calls "interrupted — result unknown" instead of silently running them again
(skipped when every call only reads or keeps the session checklist, which is safe to repeat) — and one
when the step is complete (§9.3).

Durable writes (fsyncs) of a step, and why each stays: the completion checkpoint — seed 000 §9.3
wants it flushed before the next LLM call; the in-flight checkpoint of a step with side effects — a
record that did not survive a crash (power cut included) would let the resumed session run a write or
a command again; each is a temp file fsynced, renamed over the checkpoint, and the directory fsynced
(the rename itself must survive, or the older checkpoint comes back). Nothing else of a step is
fsynced: the 80 % step-limit warning is recorded by the step's own checkpoint, the event log and the
``conversation_snapshot`` event (written at task boundaries only) are not needed to resume a step, and
artifacts wait in the upload spool unsynced unless the Workspace Service cannot take them
(:mod:`~agent_runtime.agent_host.uploads`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal

from agent_runtime.agent_host.checklist import NEXT_TURN_REMINDER
from agent_runtime.agent_host.llm import (
    LlmError,
    LlmGuardrailBlocked,
    LlmResponse,
    LlmRetriesExhausted,
    LlmUsage,
)
from agent_runtime.agent_host.llm.images import refuses_images
from agent_runtime.agent_host.llm.output_budget import (
    BudgetDecision,
    classify_truncation,
    log_decision,
    request_kind,
    resolve_budget,
)
from agent_runtime.agent_host.llm.prompt_cache import log_invalidation
from agent_runtime.agent_host.policy import Denied, PolicyExpired
from agent_runtime.agent_host.session_runtime.persist import save_snapshot
from agent_runtime.agent_host.thread import ContextSelection, ContextWindowExceeded, utc_now
from agent_runtime.agent_host.uploads import MODEL_WAIT_S
from contracts.checklist import SESSION_TOOL_NAMES
from contracts.enums import (
    TOOL_CAPABILITIES,
    ArtifactType,
    Capability,
    CheckpointTaskStatus,
    Role,
    SessionStatus,
    StopReason,
    TaskStatus,
)
from contracts.errors import CoworkError, ErrorCode, ErrorShape
from contracts.events import EventType
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy
from contracts.rest.workspaces import ArtifactUploadRequest
from contracts.session_runtime import SessionRuntimeSnapshot
from contracts.tools import ToolCall

from .compaction import prepare_context
from .context import LoopContext
from .runaway import NO_PROGRESS_LIMIT, NO_PROGRESS_WARNING, NoProgressWatch, RunawayGuard, loop_fingerprint
from .task import TaskEnd, TaskOutcome, TaskRecord
from .tool_calls import run_tool_calls

__all__ = ["AgentLoop", "build_checkpoint", "new_step_id"]

logger = logging.getLogger(__name__)

HISTORY_NAME = "session_history.json"

_READ_ONLY_TOOLS = frozenset(
    name.value for name, capability in TOOL_CAPABILITIES.items() if capability is Capability.FILE_READ
)

STEP_LIMIT_WARNING = 0.8
"""``step_limit_approaching`` at 80 % of ``maxSteps`` (seed 000 §4.3)."""

_END_STATUS = {
    TaskEnd.COMPLETED: (TaskStatus.TASK_COMPLETED, CheckpointTaskStatus.COMPLETED, EventType.TASK_COMPLETED),
    TaskEnd.FAILED: (TaskStatus.TASK_FAILED, CheckpointTaskStatus.FAILED, EventType.TASK_FAILED),
    TaskEnd.CANCELLED: (TaskStatus.TASK_CANCELLED, CheckpointTaskStatus.CANCELLED, EventType.TASK_CANCELLED),
}


def new_step_id() -> str:
    return f"step_{uuid.uuid4().hex[:16]}"


def build_checkpoint(ctx: LoopContext, now: datetime) -> SessionRuntimeSnapshot:
    """The checkpoint of the session as it stands: the session runtime's ``session_runtime_v2``
    snapshot (seed 002; it replaces seed 000 §9.2's ``checkpointVersion: "1.0"`` document)."""
    return ctx.runtime.snapshot(now=now, policy_bundle_version=ctx.enforcer.bundle.version)


class AgentLoop:
    """Runs the session's tasks one at a time; ``request_cancel`` may be called at any moment."""

    def __init__(
        self,
        ctx: LoopContext,
        *,
        clock: Callable[[], datetime] = utc_now,
        step_ids: Callable[[], str] = new_step_id,
    ) -> None:
        self._ctx = ctx
        self._clock = clock
        self._step_ids = step_ids
        self._cancel_requested = False
        self._llm_call: asyncio.Task[LlmResponse] | None = None
        self._guard = RunawayGuard(ctx.runtime.tooling.failures)
        self._progress = NoProgressWatch(ctx.runtime.loop)
        self._history_sent: tuple[object, ...] | None = None
        self.ending_session = False
        """Set when the session ends (Shutdown, failure): a task ending now spools its history and does
        not wait for the Workspace Service — the runtime's exit never waits on the network."""
        self.between_steps: Callable[[], Awaitable[None]] | None = None
        """Run once at the next step boundary, never during a step: a new policy bundle pushed by the
        Session Service is swapped in there (:mod:`agent_runtime.agent_host.session.governance`)."""
        self._lapsed = False

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested

    def request_cancel(self) -> None:
        """§4.5: takes effect at the next safe point. A stream in progress is aborted (nothing of it
        reaches the thread); running tools finish; approvals still waiting are denied."""
        self._cancel_requested = True
        if self._llm_call is not None:
            self._llm_call.cancel()
        self._ctx.approvals.deny_pending("The task was cancelled.")
        if self._ctx.mcp is not None:
            self._ctx.mcp.broker.cancel_all()  # an MCP server's open question dies with the task

    def lapse_policy(self) -> None:
        """The organisation revoked the policy (the enforcer now says so): a stream in progress is
        aborted (nothing of it reaches the thread) and the session pauses at once; approvals still
        waiting are denied; running tools finish (§4.5), and the step's next check pauses it."""
        self._lapsed = True
        if self._llm_call is not None:
            self._llm_call.cancel()
        self._ctx.approvals.deny_pending("The organisation's policy was revoked.")

    # ------------------------------------------------------------------ the task

    async def run(self, task: TaskRecord) -> TaskOutcome:
        """Run ``task`` from where it stands (step ``task.step_count``) until it ends or pauses."""
        ctx = self._ctx
        self._cancel_requested = False
        self._lapsed = False
        # The runaway guard and the no-progress watch keep their state in the session runtime (it is
        # checkpointed): a task resumed after a crash or a pause goes on counting where it stopped.
        while True:
            if self._cancel_requested:
                return await self._finish(task, TaskEnd.CANCELLED, "cancelled")
            if task.step_count >= task.max_steps:
                return await self._finish(task, TaskEnd.FAILED, "max_steps_exceeded")
            if ctx.mcp is not None:
                # Between steps, never during one: the tools this step's model sees are the ones its
                # calls reach (seed 003 §9.2, tools/list_changed).
                await ctx.mcp.before_step()
                if self._cancel_requested:
                    return await self._finish(task, TaskEnd.CANCELLED, "cancelled")
            swap, self.between_steps = self.between_steps, None
            if swap is not None:
                await swap()
                self._lapsed = ctx.enforcer.revocation is not None

            step_id = self._step_ids()
            self._emit(EventType.STEP_STARTED, task, step_id, stepId=step_id, stepCount=task.step_count + 1)
            ctx.machine.to_task(TaskStatus.WAITING_FOR_LLM)
            answer = await self._call_llm(task, step_id)
            if isinstance(answer, TaskOutcome):
                return answer
            ctx.machine.to_task(TaskStatus.PROCESSING_RESPONSE)
            ctx.runtime.record_turn()
            calls = self._unique_ids(answer.tool_calls)
            ctx.thread.add_assistant_message(
                answer.text, task_id=task.task_id, step_id=step_id, tool_calls=calls
            )

            if not calls:
                self._complete_step(task, step_id)
                if answer.stop_reason is StopReason.MAX_TOKENS:
                    # Truncated, not finished (§4.4): ask again; the step counts towards maxSteps so a
                    # model that never stops cannot loop forever.
                    ctx.machine.to_task(TaskStatus.TASK_RUNNING)
                    ctx.runtime.loop.continuations += 1
                    warn = self._step_limit_due(task)
                    self._checkpoint(task, journal=True)
                    self._emit(
                        EventType.STEP_COMPLETED, task, step_id, stepId=step_id, stepCount=task.step_count
                    )
                    if warn:
                        self._warn_step_limit(task)
                    continue
                self._emit(EventType.STEP_COMPLETED, task, step_id, stepId=step_id, stepCount=task.step_count)
                return await self._finish(task, TaskEnd.COMPLETED)

            if not all(_safe_to_repeat(call.tool_name) for call in calls):
                # Only calls with side effects need the in-flight record: a read the crash
                # interrupted is simply asked for again.
                self._checkpoint(task, journal=True)
            ctx.machine.to_task(TaskStatus.CHECKING_POLICY)
            step = await run_tool_calls(ctx, task, step_id, calls, now=self._clock)
            for result in step.results:
                ctx.thread.add_tool_result(result)
            ctx.runtime.record_tool_results(calls, step.results)
            streak = self._progress.observe(loop_fingerprint(calls, step.results))
            if streak == NO_PROGRESS_WARNING:
                ctx.thread.add_system_note(self._progress.warning(), task_id=task.task_id, step_id=step_id)
            self._complete_step(task, step_id)
            ctx.machine.to_task(TaskStatus.TASK_RUNNING)
            warn = self._step_limit_due(task)
            self._checkpoint(task, journal=True)
            self._emit(EventType.STEP_COMPLETED, task, step_id, stepId=step_id, stepCount=task.step_count)
            if warn:
                self._warn_step_limit(task)
            if step.policy_expired is not None:
                return self._expired(task, step.policy_expired)
            runaway = self._guard.observe(calls, step.results)
            if runaway is not None:
                error = ErrorShape(code=ErrorCode.TOOL_EXECUTION_FAILED, message=runaway)
                return await self._finish(task, TaskEnd.FAILED, "repeated_tool_call", error)
            if streak >= NO_PROGRESS_LIMIT:
                error = ErrorShape(code=ErrorCode.TOOL_EXECUTION_FAILED, message=self._progress.stopped())
                return await self._finish(task, TaskEnd.FAILED, "no_progress", error)

    async def _call_llm(self, task: TaskRecord, step_id: str) -> LlmResponse | TaskOutcome:
        ctx = self._ctx
        policy = ctx.enforcer.bundle.llm_policy
        try:
            selection = await self._select_context(task, step_id)
        except ContextWindowExceeded as exc:
            return await self._finish(task, TaskEnd.FAILED, "context_window_exceeded", exc.shape)
        except asyncio.CancelledError:
            stopped = await self._stopped(task)
            if stopped is None:
                raise
            return stopped
        estimate = selection.input_tokens
        refused = await self._check_call(task, estimate, step_id)
        if refused is not None:
            return refused

        outbound, redaction = ctx.enforcer.redactor.redact_messages(selection.messages)
        outbound += self._checklist_reminder(task, step_id)
        redacted = redaction.event_payload()
        if redacted is not None:
            self._emit(EventType.REDACTION_APPLIED, task, step_id, **redacted.to_wire())

        kind = request_kind(selection.messages)
        settings = ctx.llm.config.output
        family = ctx.llm.provider_family(ctx.model)
        decision = resolve_budget(
            settings,
            family=family,
            kind=kind,
            policy_max_output_tokens=policy.max_output_tokens,
            estimated_input_tokens=estimate,
        )
        prefix = ctx.llm.stable_prefix(policy=policy, system_prompt=ctx.system_prompt, tools=ctx.tools)
        changed = ctx.prompt_cache.observe(prefix)
        if changed:
            log_invalidation(ctx.session_id, prefix, changed)
        field_name = ctx.llm.transport_token_field(ctx.model)
        called = await self._stream(task, step_id, outbound, estimate, decision, prefix.stable_prefix_hash)
        if isinstance(called, TaskOutcome):
            return called
        answer, usage = called
        escalation_attempted = False
        if _truncated(answer) and kind != "continuation" and settings.mode == "adaptive":
            escalated = resolve_budget(
                settings,
                family=family,
                kind=kind,
                policy_max_output_tokens=policy.max_output_tokens,
                estimated_input_tokens=estimate,
                escalate=True,
            )
            if escalated.max_tokens > decision.max_tokens:
                # Seed 002 recovery step 1: the same request once more with a larger budget. The cut-off
                # answer is dropped (its llm_request_started tells the desktop to drop the text shown).
                log_decision(
                    decision,
                    session_id=ctx.session_id,
                    step_id=step_id,
                    transport_token_field=field_name,
                    escalation_attempted=False,
                    truncation=classify_truncation(answer.text),
                    continuation=None,
                )
                # The dropped answer gets no llm_request_completed: for the desktop it is an attempt
                # that is being retried. Its tokens were spent all the same (recorded in _stream).
                refused = await self._check_call(task, estimate, step_id)
                if refused is not None:
                    return refused
                escalation_attempted = True
                decision = escalated
                called = await self._stream(
                    task, step_id, outbound, estimate, decision, prefix.stable_prefix_hash
                )
                if isinstance(called, TaskOutcome):
                    return called
                answer, usage = called
        truncation = classify_truncation(answer.text) if _truncated(answer) else None
        self._emit(
            EventType.LLM_REQUEST_COMPLETED,
            task,
            step_id,
            model=answer.model,
            inputTokens=usage.input_tokens,
            outputTokens=usage.output_tokens,
            latencyMs=int(answer.latency_ms),
            sessionTokensUsed=ctx.thread.session_tokens_used,
            maxSessionTokens=ctx.thread.budget.limit,
            cacheReadTokens=usage.cache_read_tokens,
            cacheWriteTokens=usage.cache_write_tokens,
            truncation=truncation,
            timeToFirstTokenMs=None if answer.first_token_ms is None else int(answer.first_token_ms),
            retries=answer.attempts - 1,
        )
        continuation: Literal["allowed", "skipped"] | None = None
        if truncation is not None:
            # Steps 2 and 3: continue only an answer the user can see; legacy always continues.
            visible = truncation == "visible_partial_output"
            continuation = "allowed" if visible or settings.mode == "legacy" else "skipped"
        log_decision(
            decision,
            session_id=ctx.session_id,
            step_id=step_id,
            transport_token_field=field_name,
            escalation_attempted=escalation_attempted,
            truncation=truncation,
            continuation=continuation,
        )
        if continuation == "skipped":
            return await self._reasoning_exhausted(task, step_id, decision.max_tokens)
        return answer

    async def _check_call(
        self, task: TaskRecord, estimate: int, step_id: str | None = None
    ) -> TaskOutcome | None:
        """The pre-checks of an LLM call (the tenant's daily token quota, policy expiry, ``LLM.Call``,
        budget): the outcome that ends the step, or None when the call may be made."""
        ctx = self._ctx
        now = self._clock()
        observability = ctx.observability
        quota = observability.llm_refusal(now) if observability is not None else None
        if quota is not None:
            # The Telemetry Service reported the tenant's tokensPerDay used up: no call until it frees.
            return await self._finish(task, TaskEnd.FAILED, "quota_exceeded", quota)
        check = ctx.enforcer.check_llm_call(
            ctx.model, now=now, budget=ctx.thread.budget, estimated_tokens=estimate
        )
        if isinstance(check, PolicyExpired):
            return self._expired(task, check)
        if isinstance(check, Denied):
            if observability is not None:
                observability.policy_decision(
                    check,
                    capability=Capability.LLM_CALL,
                    policy_version=ctx.enforcer.bundle.version,
                    task_id=task.task_id,
                    step_id=step_id,
                )
            reason = "budget_exceeded" if check.code is ErrorCode.LLM_BUDGET_EXCEEDED else "llm_denied"
            return await self._finish(task, TaskEnd.FAILED, reason, check.to_error())
        return None

    async def _reasoning_exhausted(self, task: TaskRecord, step_id: str, budget: int) -> TaskOutcome:
        """Seed 002 recovery step 3: the model spent even the escalated budget without writing an answer.
        More continuations would burn the same budget again, so the task stops with a message that
        says what happened and what helps; the thread keeps a note so the next task's model knows."""
        message = (
            f"The model used its whole output budget of {budget:,} tokens on reasoning without writing"
            " an answer. Ask for a smaller piece of work, or raise COWORK_LLM_AGENTIC_ESCALATED_MAX_TOKENS"
            " or the policy's maxOutputTokens."
        )
        self._ctx.thread.add_system_note(
            f"The previous request produced no answer: {message}", task_id=task.task_id, step_id=step_id
        )
        error = ErrorShape(
            code=ErrorCode.LLM_BUDGET_EXCEEDED,
            message=message,
            details={"truncation": "reasoning_exhausted", "maxOutputTokens": budget},
        )
        return await self._finish(task, TaskEnd.FAILED, "output_budget_exhausted", error)

    async def _stream(
        self,
        task: TaskRecord,
        step_id: str,
        outbound: list[ConversationMessage],
        estimate: int,
        decision: BudgetDecision,
        prefix_hash: str,
    ) -> tuple[LlmResponse, LlmUsage] | TaskOutcome:
        """One streamed LLM call of the step: its ``llm_request_started`` and text events, and its usage
        recorded (the caller announces the answer it keeps with ``llm_request_completed``)."""
        ctx = self._ctx
        policy = ctx.enforcer.bundle.llm_policy
        started = {
            "model": ctx.model,
            "estimatedInputTokens": estimate,
            "requestKind": decision.request_kind,
            "maxOutputTokens": decision.max_tokens,
            "stablePrefixHash": prefix_hash,
        }
        self._emit(EventType.LLM_REQUEST_STARTED, task, step_id, **started)

        def on_text(text: str) -> None:
            self._emit(EventType.TEXT_CHUNK, task, step_id, text=text)

        def on_retry(retry: int, delay_s: float, reason: str) -> None:
            # A new llm_request_started in the same step tells the desktop to drop the text it showed
            # for this step: the partial answer was discarded and the request is sent again (§6.4).
            logger.info("LLM retry %d in %.1f s: %s", retry, delay_s, reason)
            ctx.runtime.recovery.llm_retries += 1
            self._emit(EventType.LLM_REQUEST_STARTED, task, step_id, **started)

        def before_retry() -> None:
            # §8.6 "checked before each LLM call": a retry after a long backoff is a call of its own.
            if ctx.enforcer.is_expired(self._clock()):
                raise _PolicyLapsed(ctx.enforcer.lapsed())

        call = asyncio.ensure_future(
            ctx.llm.stream(
                policy=policy,
                system_prompt=ctx.system_prompt,
                messages=outbound,
                tools=ctx.tools,
                on_text=on_text,
                on_retry=on_retry,
                before_retry=before_retry,
                max_tokens=decision.max_tokens,
            )
        )
        self._llm_call = call
        if ctx.uploads is not None:
            ctx.uploads.release(after_s=MODEL_WAIT_S)
        try:
            response = await call
        except asyncio.CancelledError:
            stopped = await self._stopped(task)
            if stopped is None:
                raise
            return stopped
        except LlmGuardrailBlocked as exc:
            # §6.4: no retry; a note in the thread so the model sees it on the next attempt.
            ctx.thread.add_system_note(
                f"The previous request was not answered. {exc.shape.message.rstrip('.')}.",
                task_id=task.task_id,
                step_id=step_id,
            )
            return await self._finish(task, TaskEnd.FAILED, "guardrail_blocked", exc.shape)
        except LlmRetriesExhausted as exc:
            return self._pause(task, "llm_unreachable", exc.shape)
        except _PolicyLapsed as lapsed:
            return self._expired(task, lapsed.expired)
        except LlmError as exc:
            if refuses_images(exc, outbound):
                # Sent again they would fail every later request too: the conversation goes on without.
                ctx.thread.withdraw_images()
            return await self._finish(task, TaskEnd.FAILED, "llm_failed", exc.shape)
        finally:
            self._llm_call = None
            if ctx.uploads is not None:
                ctx.uploads.hold()

        usage = response.usage
        if not usage.reported:
            # §5.3: exact counts come from the gateway; without them our own estimate keeps the
            # budget honest.
            spoken = response.text + "".join(json.dumps(c.arguments) for c in response.tool_calls)
            usage = LlmUsage(estimate, ctx.thread.count_tokens(spoken))
        # The session budget counts every input token the model processed, cached or not.
        ctx.thread.record_usage(usage.prompt_tokens, usage.output_tokens)
        ctx.usage.add(usage)
        return response, usage

    async def _select_context(self, task: TaskRecord, step_id: str) -> ContextSelection:
        """The step's messages; the thread compacted first when it outgrew the window (seed 000 §5.4,
        :mod:`.compaction`)."""
        ctx = self._ctx

        async def summarize(
            policy: LlmPolicy, system_prompt: str, messages: list[ConversationMessage]
        ) -> LlmResponse:
            # Registered like the step's own call, so that cancelling the task aborts it.
            call = asyncio.ensure_future(
                ctx.llm.stream(policy=policy, system_prompt=system_prompt, messages=messages, tools=[])
            )
            self._llm_call = call
            try:
                return await call
            finally:
                self._llm_call = None

        def emit(event: EventType, payload: dict[str, Any]) -> None:
            self._emit(event, task, step_id, **payload)

        return await prepare_context(ctx, task, now=self._clock, summarize=summarize, emit=emit)

    def _checklist_reminder(self, task: TaskRecord, step_id: str) -> list[ConversationMessage]:
        """Seed 002: after the verification nudge, the next request carries a short reminder — once
        (the flag is checkpointed with the step). Not added to the thread: it is advice for one turn."""
        checklist = self._ctx.checklist
        if checklist is None or not checklist.reminder_pending:
            return []
        self._ctx.checklist = checklist.model_copy(update={"reminder_pending": False})
        return [
            ConversationMessage(
                message_id=f"{step_id}.checklist_reminder",
                session_id=self._ctx.session_id,
                task_id=task.task_id,
                step_id=step_id,
                role=Role.SYSTEM,
                content=NEXT_TURN_REMINDER,
                timestamp=self._clock(),
            )
        ]

    def _unique_ids(self, calls: list[ToolCall]) -> list[ToolCall]:
        """Tool call IDs unique within the session. Some OpenAI-compatible servers number calls per
        response (``call_0`` every time); a repeated ID would make the thread ambiguous, so a repeat is
        renamed — consistently, since the model only ever sees the renamed call with its result."""
        seen = {
            call.tool_call_id for message in self._ctx.thread.messages for call in message.tool_calls or ()
        }
        unique = []
        for call in calls:
            call_id, n = call.tool_call_id, 1
            while call_id in seen:
                n += 1
                call_id = f"{call.tool_call_id}~{n}"
            seen.add(call_id)
            unique.append(
                call if call_id == call.tool_call_id else call.model_copy(update={"tool_call_id": call_id})
            )
        return unique

    # ------------------------------------------------------------------ endings

    async def finish_suspended(self, task: TaskRecord) -> TaskOutcome:
        """A task the session's pause suspended is cancelled without running another step."""
        return await self._finish(task, TaskEnd.CANCELLED, "cancelled")

    async def fail_suspended(self, task: TaskRecord, reason: str, error: ErrorShape) -> TaskOutcome:
        """A task the session's failure stops (it was suspended by a pause) ends failed, with no step."""
        return await self._finish(task, TaskEnd.FAILED, reason, error)

    async def fail_internal(self, task: TaskRecord) -> None:
        """A bug escaped the loop: the task still ends, visibly, with a generic error."""
        error = ErrorShape(
            code=ErrorCode.INTERNAL_ERROR,
            message="The agent runtime hit an internal error; the task stopped.",
        )
        try:
            await self._finish(task, TaskEnd.FAILED, "internal_error", error)
        except CoworkError:
            task.status = CheckpointTaskStatus.FAILED
            self._emit(EventType.TASK_FAILED, task, None, stepCount=task.step_count, reason="internal_error")

    def _complete_step(self, task: TaskRecord, step_id: str) -> None:
        task.step_count += 1
        task.step_cursor = step_id

    def _step_limit_due(self, task: TaskRecord) -> bool:
        """Whether the step just completed reaches 80 % of ``maxSteps`` for the first time. The task is
        marked warned now, before the step's checkpoint, so that one write records both: a process
        killed after it never warns again on resume."""
        threshold = int(task.max_steps * STEP_LIMIT_WARNING)
        if threshold > 0 and task.step_count >= threshold and not task.warned_step_limit:
            task.warned_step_limit = True
            return True
        return False

    def _warn_step_limit(self, task: TaskRecord) -> None:
        self._emit(
            EventType.STEP_LIMIT_APPROACHING,
            task,
            task.step_cursor,
            stepCount=task.step_count,
            maxSteps=task.max_steps,
        )

    async def _finish(
        self, task: TaskRecord, end: TaskEnd, reason: str | None = None, error: ErrorShape | None = None
    ) -> TaskOutcome:
        machine_status, checkpoint_status, event = _END_STATUS[end]
        self._ctx.machine.to_task(machine_status)
        task.status = checkpoint_status
        # Seed 002 "Terminal Status Synchronization": the terminal state is persisted — checkpoint,
        # snapshot event, history — before the terminal event announces it.
        self._checkpoint(task, snapshot_event=True)
        await self.upload_history(task, wait=not (self.ending_session or task.last_task))
        self._emit(
            event,
            task,
            None,
            stepCount=task.step_count,
            reason=reason,
            error=error.to_wire() if error else None,
        )
        return TaskOutcome(end, reason, error)

    def _pause(self, task: TaskRecord, reason: str, error: ErrorShape) -> TaskOutcome:
        """§4.6 / §11: checkpoint and pause; the task goes on after ``ResumeSession``."""
        ctx = self._ctx
        if ctx.machine.task is not TaskStatus.TASK_RUNNING:
            ctx.machine.to_task(TaskStatus.TASK_RUNNING)
        ctx.machine.to_session(SessionStatus.SESSION_PAUSED)
        self._checkpoint(task, snapshot_event=True)
        ctx.emitter.emit(
            EventType.SESSION_PAUSED, {"reason": reason, "error": error.to_wire()}, task_id=task.task_id
        )
        return TaskOutcome(TaskEnd.PAUSED, reason, error)

    async def _stopped(self, task: TaskRecord) -> TaskOutcome | None:
        """The outcome of a call cancelled because the user stopped the task or the policy lapsed;
        None when the cancellation is someone else's (the task itself being cancelled): re-raise it."""
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            return None
        if self._cancel_requested:
            return await self._finish(task, TaskEnd.CANCELLED, "cancelled")
        if self._lapsed:
            return self._expired(task, self._ctx.enforcer.lapsed())
        return None

    def _expired(self, task: TaskRecord, expired: PolicyExpired) -> TaskOutcome:
        """§8.6: deny (done by the caller), tell the desktop, pause until a refreshed bundle. A revoked
        policy pauses the same way (its ``policy_revoked`` event went out when the news came)."""
        if expired.revoked:
            return self._pause(task, "policy_revoked", expired.to_error())
        self._ctx.emitter.emit(
            EventType.POLICY_EXPIRED, {"expiresAt": expired.expires_at.isoformat()}, task_id=task.task_id
        )
        return self._pause(task, "policy_expired", expired.to_error())

    # ------------------------------------------------------------------ persistence

    def _checkpoint(
        self, task: TaskRecord | None, *, snapshot_event: bool = False, journal: bool = False
    ) -> None:
        """§9.3: synchronous and atomic. A failed write is logged and the loop goes on (§11): the next
        step's checkpoint tries again. ``snapshot_event``: also the ``conversation_snapshot`` event;
        ``journal``: a state within the task (a step's start or end), as a small record in the step
        journal where possible — as durable, and cheaper than rewriting the checkpoint."""
        ctx = self._ctx
        if task is not None:
            ctx.runtime.loop.task = task
        save_snapshot(
            ctx.runtime,
            ctx.store,
            ctx.emitter,
            now=self._clock(),
            policy_bundle_version=ctx.enforcer.bundle.version,
            event=snapshot_event,
            journal=journal,
        )

    async def upload_history(self, task: TaskRecord, *, wait: bool = True) -> None:
        """The ``session_history`` snapshot after a task (seed 000 §5.5, seed 004). Best effort: when the
        Workspace Service cannot take it the desktop is warned and the session goes on (§11).

        With the session's upload queue the snapshot is spooled durably first — it is persisted before
        the terminal event either way (seed 002) — and ``wait`` then holds the caller until it reached
        the service, while the service can be reached; one that cannot stays spooled and is sent later
        (:mod:`~agent_runtime.agent_host.uploads`). ``wait=False`` (the session's end) only spools it:
        the runtime's exit never waits on the network (what goes meanwhile goes). After a last task
        (``taskOptions.lastTask``) nothing held back while it ran
        (:meth:`~agent_runtime.agent_host.uploads.UploadQueue.hold`) is started on its way out: the
        next runtime sends it. A snapshot of a session unchanged since the last one is not sent
        again."""
        ctx = self._ctx
        if ctx.uploader is None and ctx.uploads is None:
            return
        last = ctx.thread.messages[-1] if ctx.thread.messages else None
        unchanged = (task.task_id, task.status, len(ctx.thread.messages), id(last), last)
        if unchanged == self._history_sent:
            return
        history = ctx.thread.to_session_history(
            workspace_id=ctx.workspace_id, snapshot_after_task_id=task.task_id, snapshot_at=self._clock()
        ).model_copy(update={"projection": ctx.runtime.project()})
        content = json.dumps(history.to_wire(), ensure_ascii=False, default=str).encode()
        self._history_sent = unchanged
        if ctx.uploads is not None:
            if not task.last_task:
                ctx.uploads.release()
            ticket = await ctx.uploads.put(
                workspace_id=ctx.workspace_id,
                session_id=ctx.session_id,
                task_id=task.task_id,
                step_id=None,
                artifact_type=ArtifactType.SESSION_HISTORY,
                artifact_name=HISTORY_NAME,
                content_type="application/json",
                content=content,
                durable=True,
            )
            if wait and await ctx.uploads.settle(ticket) is None:
                reason = "The Workspace Service cannot be reached now; the history is kept and sent later."
                logger.warning("Could not upload the session history yet: the service cannot be reached")
                ctx.emitter.emit(
                    EventType.ARTIFACT_UPLOAD_FAILED,
                    {"artifactName": HISTORY_NAME, "reason": reason},
                    task_id=task.task_id,
                )
            return
        assert ctx.uploader is not None
        request = ArtifactUploadRequest(
            workspace_id=ctx.workspace_id,
            session_id=ctx.session_id,
            task_id=task.task_id,
            artifact_type=ArtifactType.SESSION_HISTORY,
            artifact_name=HISTORY_NAME,
            content_type="application/json",
            content_base64=base64.b64encode(content).decode("ascii"),
        )
        try:
            await ctx.uploader.upload_artifact(request)
        except CoworkError as exc:
            logger.warning("Could not upload the session history: %s", exc.shape.message)
            ctx.emitter.emit(
                EventType.ARTIFACT_UPLOAD_FAILED,
                {"artifactName": HISTORY_NAME, "reason": exc.shape.message},
                task_id=task.task_id,
            )

    def _emit(self, event: EventType, task: TaskRecord, step_id: str | None, **payload: Any) -> None:
        self._ctx.emitter.emit(
            event, {k: v for k, v in payload.items() if v is not None}, task_id=task.task_id, step_id=step_id
        )


def _safe_to_repeat(tool_name: str) -> bool:
    """A call that may simply be made again if a crash interrupted it: it only reads (the File.Read
    tools) or changes nothing but the session's own checklist, which the checkpoint holds anyway."""
    return tool_name in _READ_ONLY_TOOLS or tool_name in SESSION_TOOL_NAMES


def _truncated(response: LlmResponse) -> bool:
    """Cut off by the output limit with nothing to run: the case seed 002's recovery is about (a
    response with tool calls runs them whatever its stop reason, §4.4)."""
    return response.stop_reason is StopReason.MAX_TOKENS and not response.tool_calls


class _PolicyLapsed(Exception):
    """The bundle expired while an LLM call waited to retry: the retry is not sent (§8.6)."""

    def __init__(self, expired: PolicyExpired) -> None:
        super().__init__(expired.reason)
        self.expired = expired
