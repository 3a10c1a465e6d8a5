"""One step's tool calls (seed 000 §4.2, §7.3): policy checks in order, approvals and execution
concurrently, results in the order the model asked for them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from agent_runtime.agent_host.checklist import run_session_tool
from agent_runtime.agent_host.policy import (
    Allowed,
    ApprovalReason,
    ApprovalRequired,
    Denied,
    PolicyExpired,
    ToolCallFacts,
)
from agent_runtime.agent_host.routing import PolicyReadScope, PreparedCall, RedirectVetter
from contracts.checklist import SESSION_TOOL_NAMES
from contracts.enums import ApprovalDecision, Capability, TaskStatus, ToolStatus
from contracts.errors import ErrorCode, ErrorShape
from contracts.events import EventType
from contracts.tools import ToolCall, ToolError, ToolResult

from .context import LoopContext
from .task import TaskRecord

__all__ = ["StepResults", "run_tool_calls"]

_TOOL_TARGETS = frozenset({Capability.MCP_INVOKE, Capability.BACKEND_TOOL_INVOKE})
"""Capabilities whose calls' target is the tool's own name."""


@dataclass(frozen=True, slots=True)
class StepResults:
    results: list[ToolResult]
    policy_expired: PolicyExpired | None = None
    """Set when the bundle expired during the checks (every call of the step was denied) or before a
    call could run (that call was denied): the session pauses (seed 000 §8.6)."""


@dataclass(slots=True)
class _Checked:
    prepared: PreparedCall
    outcome: Allowed | ApprovalRequired | None = None
    result: ToolResult | None = None
    """A result decided without running the tool: unknown tool, bad path, denial."""
    session: bool = False
    """A session tool (the checklist's ``task_list_*``): answered by the host, not the tool runtime."""


def _refused(
    call: ToolCall, code: ErrorCode, message: str, *, session_id: str, task_id: str, step_id: str
) -> ToolResult:
    return ToolResult(
        tool_name=call.tool_name,
        session_id=session_id,
        task_id=task_id,
        step_id=step_id,
        status=ToolStatus.DENIED,
        tool_call_id=call.tool_call_id,
        error=ToolError(code=code, message=message),
    )


async def run_tool_calls(
    ctx: LoopContext,
    task: TaskRecord,
    step_id: str,
    calls: Sequence[ToolCall],
    *,
    now: Callable[[], datetime],
) -> StepResults:
    ids = {"session_id": ctx.session_id, "task_id": task.task_id, "step_id": step_id}
    checked: list[_Checked] = []
    expired: PolicyExpired | None = None
    # Phase 1: policy checks, in order (fast, in memory).
    offered = {tool.tool_name for tool in ctx.tools}
    for call in calls:
        session_tool = call.tool_name in SESSION_TOOL_NAMES and call.tool_name in offered
        prepared = _session_call(ctx, call) if session_tool else ctx.dispatch.prepare(call, **ids)
        ctx.emitter.emit(
            EventType.TOOL_REQUESTED,
            {
                "toolName": call.tool_name,
                "capability": prepared.capability.value if prepared.capability else None,
                "toolCallId": call.tool_call_id,
                # An MCP or remote tool's target is the tool itself (the grant key), which toolName says.
                "target": prepared.target if prepared.capability not in _TOOL_TARGETS else None,
            },
            task_id=task.task_id,
            step_id=step_id,
        )
        entry = _Checked(prepared, session=session_tool)
        checked.append(entry)
        if session_tool:
            # No capability to check (contracts.checklist), but an expired bundle stops these too.
            if ctx.enforcer.is_expired(now()):
                expired = ctx.enforcer.lapsed()
            continue
        if prepared.failure is not None and prepared.capability not in _TOOL_TARGETS:
            entry.result = prepared.failure
            continue
        assert prepared.capability is not None
        outcome = ctx.enforcer.check(
            prepared.facts,
            prepared.capability,
            now=now(),
            approval_mode=task.approval_mode,
            allow_network=task.allow_network,
        )
        _decided(ctx, outcome, prepared, task.task_id, step_id)
        if isinstance(outcome, PolicyExpired):
            expired = outcome
        elif isinstance(outcome, Denied):
            entry.result = _refused(call, outcome.code, outcome.reason, **ids)
        elif prepared.failure is not None:
            # An MCP server's or remote tool that is allowed but not there now (its server is down, or has
            # no such tool): failed, not run, without asking anyone.
            entry.result = prepared.failure
        else:
            entry.outcome = outcome
    if expired is not None:
        # Once the bundle has expired nothing more runs in this step, not even calls checked a moment
        # before it expired: the session pauses and a refreshed bundle decides again.
        for entry in checked:
            if entry.result is None or entry.result.status is not ToolStatus.FAILED:
                entry.result = _refused(entry.prepared.call, expired.code, expired.reason, **ids)
        results = [entry.result for entry in checked if entry.result is not None]
        for result in results:
            _completed(ctx, result, 0.0)
        return StepResults(results, expired)

    waiting = sum(isinstance(entry.outcome, ApprovalRequired) for entry in checked)
    ctx.machine.to_task(TaskStatus.WAITING_FOR_APPROVAL if waiting else TaskStatus.EXECUTING_TOOLS)
    remaining = [waiting]

    def approval_settled() -> None:
        remaining[0] -= 1
        if remaining[0] == 0 and ctx.machine.task is TaskStatus.WAITING_FOR_APPROVAL:
            ctx.machine.to_task(TaskStatus.EXECUTING_TOOLS)

    scope = ctx.tool_scope()
    lapsed: list[PolicyExpired] = []

    # Phases 2 and 3: each call waits for its own approval, then runs; none waits for another.
    async def one(entry: _Checked) -> ToolResult:
        started = time.monotonic()
        call = entry.prepared.call
        if entry.result is not None:
            _completed(ctx, entry.result, 0.0)
            return entry.result
        if entry.session:
            return _run_session_tool(ctx, task, step_id, call, now)
        if isinstance(entry.outcome, ApprovalRequired):
            assert entry.prepared.capability is not None  # no capability → failed in prepare
            try:
                record = await ctx.approvals.request(
                    await _with_proposed_diff(ctx, entry.prepared, entry.outcome),
                    capability=entry.prepared.capability,
                    grant_key=_grant_key(entry.prepared, entry.outcome),
                    task_id=task.task_id,
                    step_id=step_id,
                    saved_rules=task.saved_rules,
                )
            finally:
                approval_settled()
            if record.decision is ApprovalDecision.DENIED:
                why = record.reason or "The user denied this action."
                result = _refused(call, ErrorCode.APPROVAL_DENIED, f"Not approved: {why}", **ids)
                _completed(ctx, result, _ms(started))
                return result
        if ctx.enforcer.is_expired(now()):
            # §8.6 "checked before each tool call": an approval can outlast the bundle, and the
            # check of phase 1 was made before that wait.
            expiry = ctx.enforcer.lapsed()
            lapsed.append(expiry)
            result = _refused(call, expiry.code, expiry.reason, **ids)
            _completed(ctx, result, _ms(started))
            return result
        approved = entry.prepared.target if isinstance(entry.outcome, ApprovalRequired) else None
        vet = _redirect_vetter(ctx, task, step_id, approved=approved, now=now, lapsed=lapsed)
        result = await ctx.dispatch.execute(
            entry.prepared,
            workspace_id=ctx.workspace_id,
            scope=scope,
            vet_redirect=vet,
            read_scope=_read_scope(ctx, task, entry.prepared, now),
            **ids,
        )
        _completed(ctx, result, _ms(started))
        return result

    if len(checked) == 1:
        results = [await one(checked[0])]  # one call needs no task of its own
    else:
        results = list(await asyncio.gather(*(one(entry) for entry in checked)))
    return StepResults(results, lapsed[0] if lapsed else None)


def _session_call(ctx: LoopContext, call: ToolCall) -> PreparedCall:
    facts = ToolCallFacts(
        tool_name=call.tool_name,
        arguments=MappingProxyType(dict(call.arguments)),
        workspace_roots=ctx.dispatch.workspace_roots,
    )
    return PreparedCall(call=call, capability=None, facts=facts, target=None)


def _run_session_tool(
    ctx: LoopContext, task: TaskRecord, step_id: str, call: ToolCall, now: Callable[[], datetime]
) -> ToolResult:
    """A checklist call (seed 002): the new state kept, its events emitted between the call's
    tool_requested and tool_completed."""
    started = time.monotonic()
    outcome = run_session_tool(
        call, ctx.checklist, now=now(), session_id=ctx.session_id, task_id=task.task_id, step_id=step_id
    )
    ctx.checklist = outcome.checklist
    for event, payload in outcome.events:
        ctx.emitter.emit(event, payload, task_id=task.task_id, step_id=step_id)
    _completed(ctx, outcome.result, _ms(started))
    return outcome.result


def _redirect_vetter(
    ctx: LoopContext,
    task: TaskRecord,
    step_id: str,
    *,
    approved: str | None,
    now: Callable[[], datetime],
    lapsed: list[PolicyExpired],
) -> RedirectVetter:
    """Each redirect hop of an HttpRequest under the rules of its first URL (seed 000 §8.2, §10): the
    policy check, then the approval where the policy asks for one. A hop to the host the user just
    approved for this very call does not ask again (approvals key on the host, as session grants do);
    a hop to any other host does. The task stays in EXECUTING_TOOLS meanwhile (the seed's table has no
    way back to WAITING_FOR_APPROVAL); the approval_requested event is what the desktop shows. A bundle
    that expired meanwhile refuses the hop and joins ``lapsed``, so the session pauses (§8.6)."""
    ids = {"session_id": ctx.session_id, "task_id": task.task_id, "step_id": step_id}
    approved_hosts = {approved} if approved else set()

    async def vet(hop: PreparedCall) -> ToolResult | None:
        if hop.failure is not None or hop.capability is None:
            return hop.failure
        outcome = ctx.enforcer.check(
            hop.facts,
            hop.capability,
            now=now(),
            approval_mode=task.approval_mode,
            allow_network=task.allow_network,
        )
        _decided(ctx, outcome, hop, task.task_id, step_id, redirect=True)
        if isinstance(outcome, PolicyExpired):
            lapsed.append(outcome)
        if isinstance(outcome, PolicyExpired | Denied):
            return _refused(hop.call, outcome.code, outcome.reason, **ids)
        if isinstance(outcome, ApprovalRequired) and hop.target not in approved_hosts:
            record = await ctx.approvals.request(
                outcome,
                capability=hop.capability,
                grant_key=hop.target,
                task_id=task.task_id,
                step_id=step_id,
            )
            if record.decision is ApprovalDecision.DENIED:
                why = record.reason or "The user denied this action."
                return _refused(hop.call, ErrorCode.APPROVAL_DENIED, f"Not approved: {why}", **ids)
            if hop.target:
                approved_hosts.add(hop.target)
        return None

    return vet


def _read_scope(
    ctx: LoopContext, task: TaskRecord, prepared: PreparedCall, now: Callable[[], datetime]
) -> PolicyReadScope | None:
    """The policy's File.Read paths for the files a search call touches below its checked path."""
    searched = prepared.facts.resolved_path
    if prepared.capability is not Capability.FILE_READ or searched is None:
        return None
    return PolicyReadScope(
        ctx.enforcer,
        approval_mode=task.approval_mode,
        now=now(),
        workspace_roots=ctx.dispatch.workspace_roots,
        searched=searched,
    )


async def _with_proposed_diff(
    ctx: LoopContext, prepared: PreparedCall, outcome: ApprovalRequired
) -> ApprovalRequired:
    """The request naming its call, with the diff the write or deletion would make (read off the event
    loop)."""
    update: dict[str, str] = {"tool_call_id": prepared.call.tool_call_id}
    diff = await asyncio.to_thread(ctx.dispatch.proposed_diff, prepared)
    if diff:
        update["diff"] = diff
    return dataclasses.replace(outcome, details=outcome.details.model_copy(update=update))


def _grant_key(prepared: PreparedCall, outcome: ApprovalRequired) -> str | None:
    """What "approve for this session" covers. An MCP or remote tool's target is the tool; when the
    bundle itself asks about that tool (seed 003 §9.4, an approval rule naming a remote tool), a session
    approval covers only this exact call — the tool with these arguments — as it covers one exact
    command line or path for the other capabilities."""
    target = prepared.target
    if (
        target is not None
        and prepared.capability in _TOOL_TARGETS
        and ApprovalReason.BUNDLE_REQUIRES in outcome.reasons
    ):
        arguments = json.dumps(prepared.call.arguments, sort_keys=True, separators=(",", ":"), default=str)
        return f"{target} {arguments}"
    return target


def _decided(
    ctx: LoopContext,
    outcome: Allowed | ApprovalRequired | Denied | PolicyExpired,
    prepared: PreparedCall,
    task_id: str,
    step_id: str,
    *,
    redirect: bool = False,
) -> None:
    """The policy's decision for the audit log (seed 001 Phase 3); an expiry is its own event."""
    observability = ctx.observability
    if observability is None or isinstance(outcome, PolicyExpired) or prepared.capability is None:
        return
    observability.policy_decision(
        outcome,
        capability=prepared.capability,
        policy_version=ctx.enforcer.bundle.version,
        task_id=task_id,
        step_id=step_id,
        tool_name=prepared.call.tool_name,
        tool_call_id=prepared.call.tool_call_id,
        target=prepared.target,
        redirect=redirect,
    )


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000.0


def _completed(ctx: LoopContext, result: ToolResult, latency_ms: float) -> None:
    error = (
        ErrorShape(code=result.error.code, message=result.error.message) if result.error is not None else None
    )
    preview = result.output_text[:400] if result.output_text else None
    ctx.emitter.emit(
        EventType.TOOL_COMPLETED,
        {
            "toolName": result.tool_name,
            "status": result.status.value,
            "latencyMs": int(latency_ms),
            "toolCallId": result.tool_call_id,
            "outputPreview": preview,
            "error": error.to_wire() if error else None,
        },
        task_id=result.task_id,
        step_id=result.step_id,
    )
