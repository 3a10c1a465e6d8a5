"""One session's audit and telemetry producer (seed 001 §6.3, Phase 3; seed 000 §12 "Phase 3").

Three sources feed it, all on the agent loop's thread and none of them ever waiting:

* the session's event stream, tapped where it is emitted (:attr:`EventEmitter.observer`): session and
  task lifecycle, tool executions, approvals, policy expiry, redaction and skipped uploads for audit;
  LLM calls, tools and steps for telemetry (:mod:`.envelopes`, :mod:`.steps`);
* the loop's policy checks (:meth:`SessionObservability.policy_decision`): every tool call's decision
  — allowed, denied or approval required, with its capability, rule and normalised target — and the
  LLM pre-check's denials;
* the session host: the bundle loaded (:meth:`~SessionObservability.policy_loaded`), revoked
  (:meth:`~SessionObservability.policy_revoked`, for whoever learns of a revocation), and the
  runtime's start (:meth:`~SessionObservability.runtime_started`).

Each envelope goes to its stream's :class:`~.outbox.EventOutbox` — spooled, batched, sent in the
background — when the session's ``featureFlags`` switch that stream on (:mod:`contracts.observability`):
with a flag off nothing of that stream is built, spooled or sent.

The Telemetry Service's receipt may say the tenant's ``tokensPerDay`` is used up: the producer then
holds the refusal and :meth:`~SessionObservability.llm_refusal` hands it to the loop's pre-check, so
the session makes no further LLM call until the quota's ``retryAt``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from agent_runtime.agent_host.events import utc_now, wire_timestamp
from agent_runtime.agent_host.policy import Allowed, ApprovalRequired, Denied
from contracts.enums import Capability
from contracts.errors import ErrorCode, ErrorShape
from contracts.events import EventType
from contracts.observability import FeatureFlag, PolicyDecision, flag_enabled
from contracts.policy import PolicyBundle
from contracts.rest.observability import AuditReceipts, TelemetryReceipt

from .envelopes import (
    AUDIT_ROUTES,
    DENIED_ROUTE,
    POLICY_ROUTE,
    REVOKED_ROUTE,
    RUNTIME_ROUTE,
    TELEMETRY_ROUTES,
    Route,
    envelope,
)
from .outbox import EventOutbox
from .spool import EventSpool, SegmentHeader
from .steps import StepTimer

__all__ = ["AUDIT", "TELEMETRY", "EventsClient", "SessionObservability"]

logger = logging.getLogger(__name__)

AUDIT = "audit"
TELEMETRY = "telemetry"
_TEXT_CHUNK = EventType.TEXT_CHUNK.value
_STEP_COMPLETED = EventType.STEP_COMPLETED.value
_MAX_TARGET = 2_000


class EventsClient(Protocol):
    """The two routes the producer posts to: ``services.BackendClient`` is one."""

    async def record_audit_events(self, encoded: list[bytes]) -> AuditReceipts: ...

    async def record_telemetry_events(self, encoded: list[bytes]) -> TelemetryReceipt: ...


class SessionObservability:
    """The producer of one session. ``start`` in its event loop, ``aclose`` once at the end.

    ``outbox_options`` are passed to each :class:`EventOutbox` (tests shorten its timings)."""

    def __init__(
        self,
        *,
        spool: EventSpool,
        client: EventsClient,
        origin: str,
        tenant_id: str,
        user_id: str,
        workspace_id: str,
        session_id: str,
        feature_flags: Mapping[str, bool] | None,
        clock: Callable[[], datetime] = utc_now,
        outbox_options: Mapping[str, Any] | None = None,
    ) -> None:
        self._spool = spool
        self._client = client
        self._origin = origin.rstrip("/")
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.workspace_id = workspace_id
        self.session_id = session_id
        self._clock = clock
        self._options = dict(outbox_options or {})
        self._steps = StepTimer()
        self._audit: EventOutbox | None = None
        self._telemetry: EventOutbox | None = None
        self._audit_on = False
        self._telemetry_on = False
        self._started = False
        self._closed = False
        self._quota: tuple[ErrorShape, datetime | None] | None = None
        self._failures = 0
        self.set_flags(feature_flags)

    # ------------------------------------------------------------------ switches

    @property
    def audit_on(self) -> bool:
        return self._audit_on

    @property
    def telemetry_on(self) -> bool:
        return self._telemetry_on

    @property
    def audit(self) -> EventOutbox | None:
        return self._audit

    @property
    def telemetry(self) -> EventOutbox | None:
        return self._telemetry

    def set_flags(self, feature_flags: Mapping[str, bool] | None) -> None:
        """The session's ``featureFlags`` (again, when a new bundle brings new ones). A stream switched
        off produces nothing more; what it spooled while on is still sent."""
        self._audit_on = flag_enabled(feature_flags, FeatureFlag.AUDIT_SERVICE)
        self._telemetry_on = flag_enabled(feature_flags, FeatureFlag.TELEMETRY_SERVICE)
        if self._audit_on and self._audit is None:
            self._audit = self._outbox(AUDIT, self._send_audit)
        if self._telemetry_on and self._telemetry is None:
            self._telemetry = self._outbox(TELEMETRY, self._send_telemetry)
        if self._started:
            self._start_outboxes()

    def start(self) -> None:
        """Start sending (and take over what earlier runtimes left for this backend and identity)."""
        self._started = True
        self._start_outboxes()

    async def flush(self, timeout_s: float = 5.0) -> bool:
        """Send what is spooled now (tests, benchmarks): whether all of it went."""
        outboxes = [box for box in (self._audit, self._telemetry) if box is not None]
        results = await asyncio.gather(*(box.flush(timeout_s) for box in outboxes))
        return all(results)

    async def aclose(self) -> None:
        """Send what can go within a second, then stop; the rest stays spooled for the next runtime."""
        if self._closed:
            return
        self._closed = True
        outboxes = [box for box in (self._audit, self._telemetry) if box is not None]
        await asyncio.gather(*(box.aclose() for box in outboxes))
        self._spool.close()

    # ------------------------------------------------------------------ the event tap

    def observe(self, event: Mapping[str, Any]) -> None:
        """:attr:`EventEmitter.observer`: called with every session event as it is emitted."""
        kind = event["eventType"]
        if kind == _TEXT_CHUNK or self._closed:
            return  # the bulk of the stream, and nothing either service wants
        try:
            if self._telemetry_on and self._telemetry is not None:
                times = self._steps.observe(kind, event.get("stepId"))
                route = TELEMETRY_ROUTES.get(kind)
                if route is not None:
                    payload = _trimmed(route, event["payload"])
                    if times is not None and kind == _STEP_COMPLETED:
                        payload = {**payload, **times.to_wire()}
                    self._telemetry.put(self._wrap(event, route, payload))
            if self._audit_on and self._audit is not None:
                route = AUDIT_ROUTES.get(kind)
                if route is not None:
                    self._audit.put(self._wrap(event, route, _trimmed(route, event["payload"])))
        except Exception:
            self._failed(kind)

    # ------------------------------------------------------------------ facts of their own

    def policy_decision(
        self,
        outcome: Allowed | Denied | ApprovalRequired,
        *,
        capability: Capability,
        policy_version: str | None,
        task_id: str | None,
        step_id: str | None,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        target: str | None = None,
        redirect: bool = False,
    ) -> None:
        """One check of the Local Policy Enforcer and its outcome (audit)."""
        if not self._audit_on or self._audit is None or self._closed:
            return
        try:
            payload: dict[str, Any] = {"capability": capability.value}
            route = POLICY_ROUTE
            if isinstance(outcome, Denied):
                route = DENIED_ROUTE
                payload["decision"] = PolicyDecision.DENIED.value
                payload["reason"] = outcome.reason[:_MAX_TARGET]
                payload["code"] = outcome.code.value
            elif isinstance(outcome, ApprovalRequired):
                payload["decision"] = PolicyDecision.APPROVAL_REQUIRED.value
                payload["riskLevel"] = outcome.risk_level.value
                if outcome.rule_id is not None:
                    payload["rule"] = outcome.rule_id
                if outcome.reasons:
                    payload["reasons"] = [reason.value for reason in outcome.reasons]
            else:
                payload["decision"] = PolicyDecision.ALLOWED.value
                payload["riskLevel"] = outcome.risk_level.value
            for key, value in (
                ("toolName", tool_name),
                ("toolCallId", tool_call_id),
                ("target", target[:_MAX_TARGET] if target else None),
                ("policyVersion", policy_version),
            ):
                if value is not None:
                    payload[key] = value
            if redirect:
                payload["redirect"] = True
            self._audit.put(self._fact(EventType.POLICY_DECISION, route, payload, task_id, step_id))
        except Exception:
            self._failed(EventType.POLICY_DECISION.value)

    def policy_loaded(
        self, bundle: PolicyBundle, source: str, feature_flags: Mapping[str, bool] | None = None
    ) -> None:
        """A verified bundle the session now enforces: ``created``, ``recovered``, ``refreshed`` or
        ``pushed`` (audit)."""
        if not self._audit_on or self._audit is None or self._closed:
            return
        try:
            payload: dict[str, Any] = {
                "policyVersion": bundle.version,
                "expiresAt": wire_timestamp(bundle.expires_at),
                "source": source,
                "capabilities": [grant.name.value for grant in bundle.capabilities],
            }
            if feature_flags is not None:
                payload["featureFlags"] = dict(feature_flags)
            self._audit.put(self._fact(EventType.POLICY_LOADED, POLICY_ROUTE, payload))
        except Exception:
            self._failed(EventType.POLICY_LOADED.value)

    def policy_revoked(
        self, reason: str, *, policy_version: int | None = None, task_id: str | None = None
    ) -> None:
        """The session's bundle was revoked (audit), for code that learns of a revocation without emitting
        the ``policy_revoked`` session event — that event is audited on its own, so never call both."""
        if not self._audit_on or self._audit is None or self._closed:
            return
        try:
            payload: dict[str, Any] = {"reason": reason[:_MAX_TARGET] or "revoked"}
            if policy_version is not None:
                payload["policyVersion"] = policy_version
            self._audit.put(self._fact(EventType.POLICY_REVOKED, REVOKED_ROUTE, payload, task_id))
        except Exception:
            self._failed(EventType.POLICY_REVOKED.value)

    def runtime_started(self, startup_ms: float, *, runtime_version: str, os_family: str | None) -> None:
        """How long this runtime process took to serve (telemetry, once per process)."""
        if not self._telemetry_on or self._telemetry is None or self._closed:
            return
        payload: dict[str, Any] = {
            "startupMs": round(max(0.0, startup_ms), 3),
            "runtimeVersion": runtime_version,
        }
        if os_family is not None:
            payload["osFamily"] = os_family
        self._telemetry.put(self._fact(EventType.RUNTIME_STARTED, RUNTIME_ROUTE, payload))

    # ------------------------------------------------------------------ the daily token quota

    def llm_refusal(self, now: datetime) -> ErrorShape | None:
        """The ``RATE_LIMITED`` refusal that stops LLM calls while the tenant's ``tokensPerDay`` is
        used up (the Telemetry Service said so), or None."""
        held = self._quota
        if held is None:
            return None
        shape, until = held
        if until is not None and now >= until:
            self._quota = None
            return None
        return shape

    def _quota_exceeded(self, refusal: ErrorShape) -> None:
        until: datetime | None = None
        retry_at = refusal.details.get("retryAt")
        if isinstance(retry_at, str):
            with contextlib.suppress(ValueError):
                until = datetime.fromisoformat(retry_at.replace("Z", "+00:00"))
        if until is None and isinstance(refusal.details.get("retryAfterSeconds"), int | float):
            until = self._clock() + timedelta(seconds=float(refusal.details["retryAfterSeconds"]))
        if until is not None and until.tzinfo is None:
            until = None
        message = f"{refusal.message.rstrip()} This session makes no more LLM calls until then."
        shape = ErrorShape(
            code=ErrorCode.RATE_LIMITED,
            message=message,
            retryable=until is not None,
            details=dict(refusal.details),
        )
        if self._quota is None:
            logger.warning("the tenant's daily LLM token quota is used up: %s", refusal.message)
        self._quota = (shape, until)

    # ------------------------------------------------------------------ inside

    def _outbox(self, stream: str, deliver: Callable[[list[bytes]], Any]) -> EventOutbox:
        header = SegmentHeader(stream, self._origin, self.tenant_id, self.user_id)
        return EventOutbox(self._spool, header, deliver, **self._options)

    def _start_outboxes(self) -> None:
        for box, on in ((self._audit, self._audit_on), (self._telemetry, self._telemetry_on)):
            if box is not None and on:
                box.start()

    async def _send_audit(self, lines: list[bytes]) -> None:
        await self._client.record_audit_events(lines)

    async def _send_telemetry(self, lines: list[bytes]) -> None:
        receipt = await self._client.record_telemetry_events(lines)
        if receipt.quota_exceeded is not None:
            self._quota_exceeded(receipt.quota_exceeded)

    def _wrap(self, event: Mapping[str, Any], route: Route, payload: dict[str, Any]) -> dict[str, Any]:
        return envelope(event, tenant_id=self.tenant_id, user_id=self.user_id, route=route, payload=payload)

    def _fact(
        self,
        event_type: EventType,
        route: Route,
        payload: dict[str, Any],
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> dict[str, Any]:
        event: dict[str, Any] = {
            "eventId": f"evt_{uuid.uuid4().hex}",
            "eventType": event_type.value,
            "timestamp": wire_timestamp(self._clock()),
            "workspaceId": self.workspace_id,
            "sessionId": self.session_id,
            "taskId": task_id,
            "stepId": step_id,
        }
        return self._wrap(event, route, payload)

    def _failed(self, kind: object) -> None:
        # A bug in building an envelope must never reach the loop; the first one is logged in full.
        self._failures += 1
        if self._failures == 1:
            logger.exception("could not build the %s envelope; audit and telemetry go on without it", kind)


def _trimmed(route: Route, payload: dict[str, Any]) -> dict[str, Any]:
    return route.trim(payload) if route.trim is not None else payload
