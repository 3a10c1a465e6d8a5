"""SessionEvent and the audit/telemetry envelope (seed 000 §12, seed 001 §6.1, §6.3)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from contracts.enums import Component
from contracts.events import PAYLOADS, EventEnvelope, EventType, SessionEvent
from contracts.validation import invalid_request, validate_json_value

# 001 §6.1's example, with the workspaceId that 000 §12 and 004 require on every event.
SEED_SESSION_EVENT: dict[str, Any] = {
    "eventId": "evt_010",
    "sessionId": "sess_789",
    "workspaceId": "ws_456",
    "taskId": "task_001",
    "eventType": "step_started",
    "timestamp": "2026-02-21T15:04:22Z",
    "payload": {"stepId": "step_003", "toolName": "RunCommand"},
}

SEED_ENVELOPE: dict[str, Any] = {
    "eventId": "evt_123",
    "eventType": "tool_completed",
    "timestamp": "2026-02-21T15:09:00Z",
    "tenantId": "tenant_abc",
    "userId": "user_123",
    "workspaceId": "ws_456",
    "sessionId": "sess_789",
    "taskId": "task_001",
    "component": "LocalAgentHost",
    "boundedContext": "AgentExecution",
    "severity": "info",
    "payload": {},
}


def test_the_seeds_session_event_validates_and_round_trips() -> None:
    event = validate_json_value(SessionEvent, SEED_SESSION_EVENT)
    assert event.event_type is EventType.STEP_STARTED
    assert event.to_wire() == SEED_SESSION_EVENT


def test_the_seeds_event_envelope_validates_and_round_trips() -> None:
    envelope = validate_json_value(EventEnvelope, SEED_ENVELOPE)
    assert envelope.component is Component.LOCAL_AGENT_HOST
    assert envelope.to_wire() == SEED_ENVELOPE


def test_every_event_name_the_seeds_list_is_an_event_type() -> None:
    seed_names = [
        "session_created",
        "session_started",
        "session_completed",
        "session_failed",
        "step_started",
        "step_completed",
        "step_limit_approaching",
        "text_chunk",
        "llm_request_started",
        "llm_request_completed",
        "tool_requested",
        "tool_completed",
        "approval_requested",
        "approval_resolved",
        "policy_expired",
    ]
    assert set(seed_names) <= {event.value for event in EventType}


def test_every_event_type_has_a_payload_model() -> None:
    assert set(PAYLOADS) == set(EventType)


@pytest.mark.parametrize(
    ("event_type", "payload", "field"),
    [
        ("text_chunk", {}, "payload.text"),
        ("text_chunk", {"text": 5}, "payload.text"),
        ("step_limit_approaching", {"stepCount": 32}, "payload.maxSteps"),
        ("approval_requested", {"approvalId": "a"}, "payload.sessionId"),
        ("tool_completed", {"toolName": "ReadFile", "status": "ok", "latencyMs": 3}, "payload.status"),
    ],
)
def test_a_payload_that_does_not_fit_its_event_type_is_refused_naming_the_field(
    event_type: str, payload: dict[str, Any], field: str
) -> None:
    event = {**SEED_SESSION_EVENT, "eventType": event_type, "payload": payload}
    with pytest.raises(ValidationError) as raised:
        validate_json_value(SessionEvent, event)
    assert invalid_request(raised.value).details["field"] == field


def test_an_approval_request_travels_whole_in_its_event() -> None:
    request = {
        "approvalId": "appr_001",
        "sessionId": "sess_789",
        "taskId": "task_001",
        "stepId": "step_003",
        "title": "Local command execution",
        "actionSummary": "Run: pytest tests/ --verbose",
        "riskLevel": "medium",
        "details": {
            "toolName": "Shell.Exec",
            "command": "pytest tests/ --verbose",
            "cwd": "/Users/suman/projects/demo",
        },
    }
    event = validate_json_value(
        SessionEvent, {**SEED_SESSION_EVENT, "eventType": "approval_requested", "payload": request}
    )
    assert event.payload == request


def test_an_event_needs_a_time_zone_on_its_timestamp() -> None:
    with pytest.raises(ValidationError) as raised:
        validate_json_value(SessionEvent, {**SEED_SESSION_EVENT, "timestamp": "2026-02-21T15:04:22"})
    assert invalid_request(raised.value).details["field"] == "timestamp"
