"""The approval gate: asks the desktop before a risky tool call runs, and waits (seed 000 §10).

One gate per session. ``request`` turns the enforcer's :class:`ApprovalRequired` into an
``ApprovalRequest``, sends it as an ``approval_requested`` event (§10.2) and suspends only the call that
asked — parallel calls each wait on their own (§4.2). ``decide`` delivers the user's answer from
``ApproveAction``; no answer within the timeout is a denial (§10.3, §11 "Approval" rows). Every
decision becomes an :class:`ApprovalDecisionRecord`: kept in :attr:`ApprovalGate.records` for the
checkpoint (§9.2) and posted to the Approval Service in the background (§10.4).

Session grants (``scope: "session"``) are exact: see :mod:`.grants`. They may cover high-risk actions
too. The risk level says how bad the action could be, not how sure the user is about it; the user
approved this exact capability on this exact normalised target after seeing it, with its risk level,
in the dialog, and a grant never reaches beyond that one target (a different file, command line or
domain asks again). Refusing session scope for high risk would only teach users to click "approve"
repeatedly for the same command. The desktop must make the scope of a session approval plain.

Which calls need approval at all — including the task's ``approvalMode`` — is the policy enforcer's
decision (``policy.enforcer``); the gate never second-guesses an ``ApprovalRequired``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from agent_runtime.agent_host.policy import ApprovalRequired
from agent_runtime.agent_host.policy.saved_rules import SavedRules
from contracts.approvals import ApprovalDecisionRecord, ApprovalRequest
from contracts.enums import ApprovalDecision, ApprovalScope, Capability
from contracts.events import ApprovalResolvedPayload, ApprovalTimeoutPayload, EventType
from contracts.mcp_boundary import McpEmit as EmitFn
from contracts.methods import ApproveActionParams, ApproveActionResult

from .errors import ApprovalConfigError, WrongSession
from .grants import SessionGrant, SessionGrants, grant_fields, grant_of
from .persistence import DecisionPersister, PersistFn

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "TIMEOUT_VARIABLE",
    "ApprovalGate",
    "EmitFn",
    "new_approval_id",
    "timeout_from_environment",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S: Final = 300.0
"""Seed 000 §10.3: five minutes without an answer is a denial."""
TIMEOUT_VARIABLE: Final = "COWORK_APPROVAL_TIMEOUT_S"
_MAX_TIMEOUT_S: Final = 86_400.0
_WITHDRAWN: Final = "The request was withdrawn: its step was cancelled."


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _covered_reason(grant: SessionGrant) -> str:
    return f"Covered by the session approval {grant.approval_id}."


def new_approval_id() -> str:
    return f"appr_{uuid.uuid4().hex}"


def timeout_from_environment(environ: Mapping[str, str]) -> float:
    """``COWORK_APPROVAL_TIMEOUT_S`` in seconds (default 300); anything but a positive number of
    seconds up to a day is a configuration error naming the variable."""
    raw = environ.get(TIMEOUT_VARIABLE)
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise ApprovalConfigError(TIMEOUT_VARIABLE, "must be a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > _MAX_TIMEOUT_S:
        raise ApprovalConfigError(TIMEOUT_VARIABLE, "must be more than 0 and at most 86400 seconds")
    return value


@dataclass(frozen=True, slots=True)
class _Ask:
    """One call's request for approval: who asked and what a grant would key on."""

    approval_id: str
    task_id: str
    step_id: str
    capability: Capability
    grant_key: str | None
    started: float
    """``time.monotonic()`` when asked, for the event's ``latencyMs``."""


@dataclass(slots=True)
class _Waiting:
    ask: _Ask
    request: ApprovalRequest
    answer: asyncio.Future[ApprovalDecisionRecord] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ApprovalGate:
    """See the module docstring. All methods run on the session's event loop."""

    def __init__(
        self,
        *,
        session_id: str,
        emit: EmitFn,
        persist: PersistFn | None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Callable[[], datetime] = _utc_now,
        persist_attempts: int = 5,
        persist_base_delay_s: float = 1.0,
        persist_rng: random.Random | None = None,
    ) -> None:
        if not (math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError("timeout_s must be a positive number of seconds")
        self.session_id = session_id
        self.timeout_s = timeout_s
        self._emit = emit
        self._clock = clock
        self._persister = (
            None
            if persist is None
            else DecisionPersister(
                persist, attempts=persist_attempts, base_delay_s=persist_base_delay_s, rng=persist_rng
            )
        )
        self._waiting: dict[str, _Waiting] = {}
        self._records: list[ApprovalDecisionRecord] = []
        self._grants = SessionGrants()
        self._closed = False

    # ------------------------------------------------------------------ state

    @property
    def records(self) -> list[ApprovalDecisionRecord]:
        """Every decision of the session, oldest first (a copy): the checkpoint carries them."""
        return list(self._records)

    @property
    def pending(self) -> list[ApprovalRequest]:
        """The requests waiting for an answer, oldest first."""
        return [waiting.request for waiting in self._waiting.values()]

    @property
    def grants(self) -> list[SessionGrant]:
        return list(self._grants)

    @property
    def persister(self) -> DecisionPersister | None:
        return self._persister

    def restore(self, records: Sequence[ApprovalDecisionRecord]) -> None:
        """Take back the decisions of a checkpoint (§9.5): they join :attr:`records` (ahead of any made
        since, each approvalId once) and the session grants among them apply again. Records of another
        session are ignored: they cannot grant anything here."""
        known = {record.approval_id for record in self._records}
        restored: list[ApprovalDecisionRecord] = []
        for record in records:
            if record.session_id != self.session_id:
                logger.warning("ignored an approval record of another session while restoring")
                continue
            if record.approval_id in known:
                continue
            known.add(record.approval_id)
            restored.append(record)
        self._records[:0] = restored
        self._grants.extend(grant for record in restored if (grant := grant_of(record)) is not None)

    # ------------------------------------------------------------------ asking

    async def request(
        self,
        outcome: ApprovalRequired,
        *,
        capability: Capability,
        grant_key: str | None,
        task_id: str,
        step_id: str,
        saved_rules: SavedRules | None = None,
    ) -> ApprovalDecisionRecord:
        """Ask the user and wait for the answer, the timeout, a denial of everything pending, or the
        caller's cancellation; a matching session grant, or a saved rule of the project for a prompt
        of the approval mode alone, answers at once without asking."""
        ask = _Ask(new_approval_id(), task_id, step_id, capability, grant_key, time.monotonic())
        if self._closed:
            return self._record(ask, ApprovalDecision.DENIED, "The session is shutting down.", asked=False)
        grant = self._grants.covering(capability, grant_key)
        if grant is not None:
            return self._record(
                ask,
                ApprovalDecision.APPROVED,
                _covered_reason(grant),
                scope=ApprovalScope.SESSION,
                asked=False,
            )
        saved = saved_rules.answering(outcome, capability) if saved_rules is not None else None
        if saved is not None:
            rule = saved.describe()
            logger.info(
                "approval %s answered by the saved rule %r: %s", ask.approval_id, rule, outcome.action_summary
            )
            return self._record(
                ask,
                ApprovalDecision.APPROVED,
                f"Always allowed in this project by the saved rule {rule!r}.",
                asked=False,
                saved_rule=rule,
            )

        now = self._clock()
        request = ApprovalRequest(
            approval_id=ask.approval_id,
            session_id=self.session_id,
            task_id=task_id,
            step_id=step_id,
            title=outcome.title or outcome.details.tool_name,
            action_summary=outcome.action_summary or outcome.details.tool_name,
            risk_level=outcome.risk_level,
            details=outcome.details,
            description=outcome.description or None,
            notes=list(outcome.notes) or None,
            timeout_seconds=max(1, math.ceil(self.timeout_s)),
            expires_at=now + timedelta(seconds=self.timeout_s),
            suggested_rules=saved_rules.suggest(outcome, capability) if saved_rules is not None else None,
        )
        waiting = _Waiting(ask, request)
        self._waiting[ask.approval_id] = waiting
        self._emit(EventType.APPROVAL_REQUESTED, request.to_wire(), task_id=task_id, step_id=step_id)
        try:
            await asyncio.wait({waiting.answer}, timeout=self.timeout_s)
        except asyncio.CancelledError:
            if self._waiting.pop(ask.approval_id, None) is not None:
                # The step was abandoned: close the desktop's dialog and keep the trail complete.
                waiting.answer.cancel()
                self._record(ask, ApprovalDecision.DENIED, _WITHDRAWN)
            raise
        if waiting.answer.done():
            return waiting.answer.result()
        # Timed out: nothing answered while we waited, so the entry is still ours to resolve.
        self._waiting.pop(ask.approval_id, None)
        self._emit(
            EventType.APPROVAL_TIMEOUT,
            ApprovalTimeoutPayload(approval_id=ask.approval_id),
            task_id=task_id,
            step_id=step_id,
        )
        return self._resolve(
            waiting, ApprovalDecision.DENIED, f"No answer within {self.timeout_s:g} s", timed_out=True
        )

    # ------------------------------------------------------------------ answering

    def decide(self, params: ApproveActionParams) -> ApproveActionResult:
        """Deliver the user's answer (``ApproveAction``). An approvalId that is unknown, already
        answered or timed out is ``accepted: false``; another session's id is ``SESSION_NOT_FOUND``.

        A denial is recorded with ``scope: "once"`` whatever scope was sent, and so is an approval of a
        call that has no target to key a grant on: the record says what was actually granted."""
        if params.session_id != self.session_id:
            raise WrongSession(params.session_id)
        waiting = self._waiting.pop(params.approval_id, None)
        if waiting is None:
            return ApproveActionResult(approval_id=params.approval_id, accepted=False)
        session_wide = (
            params.decision is ApprovalDecision.APPROVED
            and params.scope is ApprovalScope.SESSION
            and bool(waiting.ask.grant_key)
        )
        scope = ApprovalScope.SESSION if session_wide else ApprovalScope.ONCE
        record = self._resolve(waiting, params.decision, params.reason, scope=scope)
        if session_wide and waiting.ask.grant_key:
            grant = SessionGrant(waiting.ask.capability, waiting.ask.grant_key, record.approval_id)
            self._grants.add(grant)
            self._approve_covered(grant)
        return ApproveActionResult(approval_id=params.approval_id, accepted=True)

    def _approve_covered(self, grant: SessionGrant) -> None:
        """Parallel calls of the very same action already on screen are covered by the new grant too:
        the user just approved exactly that action for the session."""
        for approval_id, waiting in list(self._waiting.items()):
            if (waiting.ask.capability, waiting.ask.grant_key) == (grant.capability, grant.grant_key):
                del self._waiting[approval_id]
                self._resolve(
                    waiting,
                    ApprovalDecision.APPROVED,
                    _covered_reason(grant),
                    scope=ApprovalScope.SESSION,
                )

    def deny_pending(self, reason: str) -> None:
        """Deny every waiting request now with ``reason`` (task cancelled, session shutting down)."""
        for approval_id in list(self._waiting):
            waiting = self._waiting.pop(approval_id)
            self._resolve(waiting, ApprovalDecision.DENIED, reason)

    async def aclose(self, timeout_s: float = 2.0) -> None:
        """Deny what still waits, refuse what comes later, and give persistence of the decisions a last
        chance of at most ``timeout_s``."""
        self.deny_pending("The session is shutting down.")
        self._closed = True
        if self._persister is not None:
            await self._persister.aclose(timeout_s)

    # ------------------------------------------------------------------ internals

    def _resolve(
        self,
        waiting: _Waiting,
        decision: ApprovalDecision,
        reason: str | None,
        *,
        scope: ApprovalScope = ApprovalScope.ONCE,
        timed_out: bool = False,
    ) -> ApprovalDecisionRecord:
        """Answer a waiting request: keep the decision, wake its waiter, then announce and persist it
        (the waiter is woken first so nothing a sink does can leave a tool call hanging)."""
        record = self._keep(waiting.ask, decision, reason, scope=scope, timed_out=timed_out)
        if not waiting.answer.done():
            waiting.answer.set_result(record)
        self._announce(record, waiting.ask)
        return record

    def _record(
        self,
        ask: _Ask,
        decision: ApprovalDecision,
        reason: str | None,
        *,
        scope: ApprovalScope = ApprovalScope.ONCE,
        asked: bool = True,
        saved_rule: str | None = None,
    ) -> ApprovalDecisionRecord:
        """Keep, announce and persist a decision no one is waiting on."""
        record = self._keep(ask, decision, reason, scope=scope)
        self._announce(record, ask, asked=asked, saved_rule=saved_rule)
        return record

    def _keep(
        self,
        ask: _Ask,
        decision: ApprovalDecision,
        reason: str | None,
        *,
        scope: ApprovalScope,
        timed_out: bool = False,
    ) -> ApprovalDecisionRecord:
        record = ApprovalDecisionRecord(
            approval_id=ask.approval_id,
            session_id=self.session_id,
            task_id=ask.task_id,
            step_id=ask.step_id,
            decision=decision,
            reason=reason,
            decided_at=self._clock(),
            scope=scope,
            timed_out=timed_out,
            **grant_fields(ask.capability, ask.grant_key),
        )
        self._records.append(record)
        return record

    def _announce(
        self, record: ApprovalDecisionRecord, ask: _Ask, *, asked: bool = True, saved_rule: str | None = None
    ) -> None:
        """``approval_resolved`` to the desktop; a decision the user was not asked for took no time.
        Decisions made after ``aclose`` (refusals of late requests) are not posted: nothing would wait
        for the post to finish."""
        self._emit(
            EventType.APPROVAL_RESOLVED,
            ApprovalResolvedPayload(
                approval_id=record.approval_id,
                decision=record.decision,
                latency_ms=max(0, int((time.monotonic() - ask.started) * 1000)) if asked else 0,
                scope=record.scope,
                saved_rule=saved_rule,
            ),
            task_id=record.task_id,
            step_id=record.step_id,
        )
        if self._persister is not None and not self._closed:
            self._persister.submit(record)
