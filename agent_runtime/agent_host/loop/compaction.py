"""Choosing a step's context, compacting the thread when it no longer fits (seed 000 §5.4).

Before each step's LLM call the loop asks :func:`prepare_context` for the messages to send. While the
thread (or its compacted view) fits ``maxInputTokens`` that is all of it. When it does not:

1. **Summarise** (Phase 2). The oldest turns the drop-oldest rules would leave out — whole units, up to
   the last of them, the previous summary folded in — go to the model in one extra call through the
   same client: the fixed :data:`~agent_runtime.agent_host.thread.compaction.SUMMARY_INSTRUCTION` as
   system prompt, the turns as text (redacted like any request), no tools. The call passes the same
   ``check_llm_call`` as every call (``LLM.Call`` granted, model allowed, the session budget) and its
   tokens count against the session budget. Its answer becomes a summary block that requests send in
   place of those turns from then on; ``context_compacted`` (``summarized``) tells the desktop.
2. **Fall back** (Phase 1). If the policy forbids the extra call, or it fails, or it answers nothing,
   the oldest turns are dropped behind the ``[Earlier conversation truncated — N messages removed]``
   marker as before; ``context_compacted`` (``truncated``) says so, with the reason. Summarising is
   not tried again in that task: every later step would spend another failed call.

A policy that expired is not a reason to drop anything: the step's own check pauses the session.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from agent_runtime.agent_host.llm import LlmError, LlmResponse
from agent_runtime.agent_host.policy import Allowed, PolicyExpired
from agent_runtime.agent_host.thread import ContextSelection
from agent_runtime.agent_host.thread.compaction import (
    SUMMARY_INSTRUCTION,
    SUMMARY_MAX_OUTPUT_TOKENS,
    context_view,
    fit_units,
    oldest_turns,
    render_transcript,
    summary_message,
)
from agent_runtime.agent_host.thread.tokens import count_message
from contracts.compaction import CompactionMode, CompactionState, SummaryBlock
from contracts.enums import Role
from contracts.events import EventType
from contracts.messages import ConversationMessage
from contracts.policy import LlmPolicy

from .context import LoopContext
from .task import TaskRecord

__all__ = ["SummaryCall", "prepare_context"]

SummaryCall = Callable[[LlmPolicy, str, list[ConversationMessage]], Awaitable[LlmResponse]]
"""The loop's way to make the summary call (so that cancelling the task aborts it too)."""

Emit = Callable[[EventType, dict[str, Any]], None]


def _select(ctx: LoopContext) -> tuple[ContextSelection, list[ConversationMessage] | None]:
    policy = ctx.enforcer.bundle.llm_policy
    lead = None
    if ctx.compaction.latest is not None:
        block = ctx.compaction.latest
        draft = summary_message(block, ctx.session_id)
        lead = summary_message(block, ctx.session_id, count_message(ctx.thread.count_tokens, draft.content))
    view = context_view(ctx.thread.messages, ctx.compaction, lead)
    selection = ctx.thread.select_context(
        policy.max_input_tokens, system_tokens=ctx.system_tokens, tools_tokens=ctx.tools_tokens, view=view
    )
    return selection, view


async def prepare_context(
    ctx: LoopContext,
    task: TaskRecord,
    *,
    now: Callable[[], datetime],
    summarize: SummaryCall,
    emit: Emit,
) -> ContextSelection:
    """The messages for this step's request (see the module docstring). Raises
    ``ContextWindowExceeded`` when not even the newest message fits."""
    selection, view = _select(ctx)
    state = ctx.compaction
    if not selection.truncated or state.failed_task_id == task.task_id:
        return selection
    source = view if view is not None else list(ctx.thread.messages)
    turns = oldest_turns(source, selection.messages, has_lead=view is not None)
    policy = ctx.enforcer.bundle.llm_policy
    instruction_tokens = ctx.thread.count_tokens(SUMMARY_INSTRUCTION)
    previous = state.latest
    # The summary request must fit the window itself: the previous summary, the turns and the
    # instruction, with room for the transcript's labels.
    previous_tokens = ctx.thread.count_tokens(previous.text) if previous is not None else 0
    room = policy.max_input_tokens - instruction_tokens - previous_tokens
    turns = fit_units(turns, int(room * 0.8))
    if not turns:
        return _fall_back(ctx, task, selection, "the oldest turns are too long to summarise", emit)

    outbound, _ = ctx.enforcer.redactor.redact_messages(turns)
    transcript = render_transcript(previous, outbound)
    request = ConversationMessage(
        message_id=f"compaction_{uuid.uuid4().hex[:12]}",
        session_id=ctx.session_id,
        task_id=task.task_id,
        role=Role.USER,
        content=transcript,
        timestamp=now(),
    )
    estimate = instruction_tokens + count_message(ctx.thread.count_tokens, transcript)
    check = ctx.enforcer.check_llm_call(
        ctx.model, now=now(), budget=ctx.thread.budget, estimated_tokens=estimate
    )
    if isinstance(check, PolicyExpired):
        return selection
    if not isinstance(check, Allowed):
        return _fall_back(ctx, task, selection, f"the summary call is not allowed: {check.reason}", emit)

    limit = min(policy.max_output_tokens, SUMMARY_MAX_OUTPUT_TOKENS)
    try:
        response = await summarize(
            policy.model_copy(update={"max_output_tokens": limit}), SUMMARY_INSTRUCTION, [request]
        )
    except LlmError as exc:
        return _fall_back(ctx, task, selection, f"the summary call failed: {exc.shape.message}", emit)
    usage = response.usage
    if usage.reported:
        ctx.thread.record_usage(usage.input_tokens, usage.output_tokens)
    else:
        ctx.thread.record_usage(estimate, ctx.thread.count_tokens(response.text))
    text = response.text.strip()
    if not text:
        return _fall_back(ctx, task, selection, "the model returned an empty summary", emit)

    covered = turns[-1]
    index = next(i for i, m in enumerate(ctx.thread.messages) if m.message_id == covered.message_id)
    block = SummaryBlock(
        summary_id=f"summary_{uuid.uuid4().hex[:12]}",
        text=text,
        covers_through_message_id=covered.message_id,
        summarized_messages=index + 1,
        created_at=now(),
        task_id=task.task_id,
    )
    ctx.compaction = state.model_copy(
        update={
            "summaries": [*state.summaries, block],
            "compaction_count": state.compaction_count + 1,
            "last_compacted_at": block.created_at,
        }
    )
    emit(
        EventType.CONTEXT_COMPACTED,
        {
            "mode": CompactionMode.SUMMARIZED.value,
            "messages": len(turns),
            "compactionCount": ctx.compaction.compaction_count,
            "summaryId": block.summary_id,
        },
    )
    return _select(ctx)[0]


def _fall_back(
    ctx: LoopContext, task: TaskRecord, selection: ContextSelection, reason: str, emit: Emit
) -> ContextSelection:
    state: CompactionState = ctx.compaction
    ctx.compaction = state.model_copy(
        update={
            "fallback_count": state.fallback_count + 1,
            "last_failure": reason,
            "failed_task_id": task.task_id,
        }
    )
    emit(
        EventType.CONTEXT_COMPACTED,
        {
            "mode": CompactionMode.TRUNCATED.value,
            "messages": max(selection.dropped_count, 1),
            "compactionCount": ctx.compaction.compaction_count,
            "reason": reason,
        },
    )
    return selection
