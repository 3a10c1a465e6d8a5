"""Which session events become audit or telemetry envelopes (seed 001 §6.3), and in what form.

The session's ``SessionEvent`` stream (seed 000 §12) already carries most facts both services want,
with the full ID chain: the producer taps it (:class:`~.producer.SessionObservability`), and the tables
here say which types go where, from which component, in which bounded context, and what of the payload
is left out. Audit keeps the record of what happened without what the user's files or prompts hold: a
tool's output preview, a task's prompt and a proposed diff are not sent (the audit log is immutable and
kept for years; the Workspace Service keeps the conversation). Telemetry keeps measures, not content.

Facts that are not session events — policy decisions, the bundle loaded or revoked, the runtime's
start — are built by the producer directly with :func:`envelope`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from contracts.enums import BoundedContext, Component, Severity
from contracts.events import EventType

__all__ = [
    "AUDIT_ROUTES",
    "DENIED_ROUTE",
    "POLICY_ROUTE",
    "REVOKED_ROUTE",
    "RUNTIME_ROUTE",
    "TELEMETRY_ROUTES",
    "Route",
    "envelope",
]

Trim = Callable[[dict[str, Any]], dict[str, Any]]
_MAX_TEXT = 2_000
"""Free text kept in an audit payload (a reason, a target, a command line): enough to read, bounded."""


@dataclass(frozen=True, slots=True)
class Route:
    component: Component
    context: BoundedContext
    severity: Severity = Severity.INFO
    trim: Trim | None = None
    """The payload as the service gets it (None: unchanged)."""
    severity_of: Callable[[dict[str, Any]], Severity] | None = None


def envelope(
    event: Mapping[str, Any], *, tenant_id: str, user_id: str, route: Route, payload: dict[str, Any]
) -> dict[str, Any]:
    """A §6.3 envelope from a session event's fields (its ``eventId``, type, time and ID chain)."""
    built: dict[str, Any] = {
        "eventId": event["eventId"],
        "eventType": event["eventType"],
        "timestamp": event["timestamp"],
        "tenantId": tenant_id,
        "userId": user_id,
        "workspaceId": event["workspaceId"],
        "sessionId": event["sessionId"],
        "component": route.component.value,
        "boundedContext": route.context.value,
        "severity": (route.severity_of(payload) if route.severity_of else route.severity).value,
        "payload": payload,
    }
    for key in ("taskId", "stepId"):
        value = event.get(key)
        if value is not None:
            built[key] = value
    return built


def _without(*keys: str) -> Trim:
    def trim(payload: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in payload.items() if key not in keys}

    return trim


def _approval_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The request as the user saw it, less the proposed diff (file content)."""
    details = payload.get("details")
    if isinstance(details, dict) and "diff" in details:
        payload = {**payload, "details": {k: v for k, v in details.items() if k != "diff"}}
    return _bounded_payload(payload)


def _bounded_payload(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: _bounded(value) for key, value in payload.items()}


def _bounded(value: Any) -> Any:
    """Strings cut to :data:`_MAX_TEXT`: a command line or a reason can be any length."""
    if isinstance(value, str):
        return value if len(value) <= _MAX_TEXT else value[:_MAX_TEXT] + "…"
    if isinstance(value, dict):
        return {key: _bounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_bounded(item) for item in value]
    return value


def _tool_result(payload: dict[str, Any]) -> dict[str, Any]:
    return _bounded_payload({key: value for key, value in payload.items() if key != "outputPreview"})


def _tool_severity(payload: dict[str, Any]) -> Severity:
    return Severity.INFO if payload.get("status") == "succeeded" else Severity.WARNING


_HOST, _ENFORCER = Component.LOCAL_AGENT_HOST, Component.LOCAL_POLICY_ENFORCER
_SESSION, _AGENT = BoundedContext.SESSION_COORDINATION, BoundedContext.AGENT_EXECUTION
_POLICY, _APPROVAL = BoundedContext.POLICY_GUARDRAILS, BoundedContext.APPROVAL

AUDIT_ROUTES: Mapping[EventType, Route] = MappingProxyType(
    {
        EventType.SESSION_STARTED: Route(_HOST, _SESSION),
        EventType.SESSION_RESUMED: Route(_HOST, _SESSION),
        EventType.SESSION_PAUSED: Route(_HOST, _SESSION, Severity.WARNING),
        EventType.SESSION_COMPLETED: Route(_HOST, _SESSION),
        EventType.SESSION_CANCELLED: Route(_HOST, _SESSION),
        EventType.SESSION_FAILED: Route(_HOST, _SESSION, Severity.ERROR),
        EventType.TASK_STARTED: Route(_HOST, _AGENT, trim=_without("prompt")),
        EventType.TASK_COMPLETED: Route(_HOST, _AGENT),
        EventType.TASK_FAILED: Route(_HOST, _AGENT, Severity.WARNING),
        EventType.TASK_CANCELLED: Route(_HOST, _AGENT),
        EventType.TOOL_COMPLETED: Route(
            _HOST, BoundedContext.TOOL_EXECUTION, trim=_tool_result, severity_of=_tool_severity
        ),
        EventType.APPROVAL_REQUESTED: Route(_HOST, _APPROVAL, trim=_approval_request),
        EventType.APPROVAL_RESOLVED: Route(_HOST, _APPROVAL, trim=_bounded_payload),
        EventType.APPROVAL_TIMEOUT: Route(_HOST, _APPROVAL, Severity.WARNING),
        EventType.POLICY_EXPIRED: Route(_ENFORCER, _POLICY, Severity.WARNING),
        EventType.POLICY_UPDATED: Route(_ENFORCER, _POLICY),
        EventType.POLICY_REVOKED: Route(_ENFORCER, _POLICY, Severity.WARNING, trim=_bounded_payload),
        EventType.SESSION_STOP_REQUESTED: Route(_HOST, _SESSION, Severity.WARNING, trim=_bounded_payload),
        EventType.REDACTION_APPLIED: Route(_ENFORCER, _POLICY),
        EventType.UPLOAD_SKIPPED: Route(_ENFORCER, _POLICY, Severity.WARNING, trim=_bounded_payload),
        EventType.CHANGES_REVERTED: Route(_HOST, BoundedContext.TOOL_EXECUTION, trim=_bounded_payload),
    }
)
"""Session events that are security-relevant facts (seed 001 Phase 3 "Audit Service")."""

TELEMETRY_ROUTES: Mapping[EventType, Route] = MappingProxyType(
    {
        EventType.LLM_REQUEST_COMPLETED: Route(_HOST, _AGENT),
        EventType.TOOL_COMPLETED: Route(_HOST, BoundedContext.TOOL_EXECUTION, trim=_tool_result),
        EventType.STEP_COMPLETED: Route(_HOST, _AGENT),
    }
)
"""Session events that carry measures: LLM latency, first token, tokens by kind and retries; tool
durations; the step's time (its payload completed by the producer's step timer)."""

POLICY_ROUTE = Route(_ENFORCER, _POLICY)
DENIED_ROUTE = Route(_ENFORCER, _POLICY, Severity.WARNING)
REVOKED_ROUTE = Route(_ENFORCER, _POLICY, Severity.WARNING)
RUNTIME_ROUTE = Route(_HOST, BoundedContext.OPERATIONS)
