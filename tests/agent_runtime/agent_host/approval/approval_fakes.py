"""Fakes for the approval gate's collaborators: an emitter that validates every event against the
contracts as the real one sends it, a persistence target that fails on command, and outcomes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.policy import ApprovalRequired
from contracts._base import WireModel
from contracts.approvals import ApprovalDecisionRecord, ApprovalDetails
from contracts.enums import ApprovalDecision, ApprovalScope, Capability, RiskLevel
from contracts.errors import CoworkError, ErrorCode
from contracts.events import EventType, SessionEvent
from contracts.methods import ApproveActionParams

SESSION_ID = "sess_approvals"
WAIT_S = 5.0
"""Bound on every wait in these tests; none is expected to come near it."""
NOW = datetime(2026, 2, 21, 15, 0, tzinfo=UTC)


def fixed_clock() -> datetime:
    return NOW


def shell_outcome(command: str = "pytest -q", risk: RiskLevel = RiskLevel.MEDIUM) -> ApprovalRequired:
    return ApprovalRequired(
        rule_id="shell-approval",
        risk_level=risk,
        title="Local command execution",
        description="Commands run on your machine.",
        action_summary=f"Run: {command}",
        details=ApprovalDetails(tool_name="RunCommand", command=command, cwd="/home/user/project"),
    )


def make_gate(emitter: RecordingEmitter, timeout_s: float = 60.0) -> ApprovalGate:
    """A gate of ``SESSION_ID`` that emits to ``emitter``, persists nothing and reads ``NOW``."""
    return ApprovalGate(
        session_id=SESSION_ID, emit=emitter, persist=None, timeout_s=timeout_s, clock=fixed_clock
    )


def ask(
    gate: ApprovalGate,
    command: str | None = "pytest -q",
    capability: Capability = Capability.SHELL_EXEC,
    risk: RiskLevel = RiskLevel.MEDIUM,
    *,
    step_id: str = "step_1",
) -> asyncio.Task[ApprovalDecisionRecord]:
    """The gate asked, in the background, to approve the command ``command``, which is also the grant
    key (``None``: an action without one)."""
    return asyncio.create_task(
        gate.request(
            shell_outcome(command or "echo", risk),
            capability=capability,
            grant_key=command,
            task_id="task_1",
            step_id=step_id,
        )
    )


async def decide_next(
    gate: ApprovalGate,
    emitter: RecordingEmitter,
    decision: ApprovalDecision,
    scope: ApprovalScope,
    waiter: asyncio.Task[ApprovalDecisionRecord],
    *,
    reason: str | None = None,
) -> ApprovalDecisionRecord:
    """Answer the next approval_requested event (one not there yet) and return the waiter's record."""
    count = len(emitter.of(EventType.APPROVAL_REQUESTED)) + 1
    requested = (await emitter.wait_for(EventType.APPROVAL_REQUESTED, count))[-1]
    params = ApproveActionParams(
        session_id=SESSION_ID,
        approval_id=requested.payload["approvalId"],
        decision=decision,
        scope=scope,
        reason=reason,
    )
    assert gate.decide(params).accepted
    return await asyncio.wait_for(waiter, WAIT_S)


class RecordingEmitter:
    """Stands in for ``EventEmitter.emit``: builds the ``SessionEvent`` the desktop would get, so a
    payload that does not fit its event type fails the test at the point it is emitted."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self._arrived = asyncio.Event()

    def __call__(
        self,
        event_type: EventType,
        payload: Mapping[str, Any] | WireModel | None = None,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None:
        wire = payload.to_wire() if isinstance(payload, WireModel) else dict(payload or {})
        event = SessionEvent.model_validate_json(
            json.dumps(
                {
                    "eventId": f"evt_{len(self.events)}",
                    "eventType": event_type.value,
                    "timestamp": NOW.isoformat(),
                    "workspaceId": "ws_1",
                    "sessionId": SESSION_ID,
                    "taskId": task_id,
                    "stepId": step_id,
                    "payload": wire,
                }
            )
        )
        self.events.append(event)
        self._arrived.set()

    def of(self, event_type: EventType) -> list[SessionEvent]:
        return [event for event in self.events if event.event_type is event_type]

    async def wait_for(self, event_type: EventType, count: int = 1) -> list[SessionEvent]:
        """The first ``count`` events of ``event_type``, waiting (bounded) until they are there."""
        async with asyncio.timeout(WAIT_S):
            while len(self.of(event_type)) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.of(event_type)[:count]


class Unreachable(CoworkError):
    """Like the backend client's ``BackendUnreachable``: worth another attempt."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.INTERNAL_ERROR, "backend unreachable", retryable=True)


class Rejected(CoworkError):
    """Like the backend client's ``BackendRejected``: the same request will be refused again."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, "approvalId is invalid", retryable=False)


@dataclass
class FlakyBackend:
    """``record_approval`` that raises the given errors in turn, then stores the record."""

    failures: list[BaseException] = field(default_factory=list)
    hang: bool = False
    calls: list[ApprovalDecisionRecord] = field(default_factory=list)
    stored: list[ApprovalDecisionRecord] = field(default_factory=list)
    stored_event: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    called: asyncio.Event = field(default_factory=asyncio.Event)

    async def record_approval(self, record: ApprovalDecisionRecord) -> object:
        self.calls.append(record)
        self.called.set()
        if self.hang:
            await self.release.wait()
        if self.failures:
            raise self.failures.pop(0)
        self.stored.append(record)
        self.stored_event.set()
        return record
