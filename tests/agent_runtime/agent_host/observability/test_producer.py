"""The session's producer: which events become audit and telemetry envelopes, in what form, switched by
the session's featureFlags; the policy's decisions; the daily token quota the Telemetry Service reports."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.observability import EventSpool, SessionObservability
from agent_runtime.agent_host.policy import Allowed, ApprovalReason, ApprovalRequired, Denied
from contracts.approvals import ApprovalDetails
from contracts.enums import Capability, RiskLevel
from contracts.errors import ErrorCode
from contracts.events import PAYLOADS, EventEnvelope, EventType
from contracts.policy import PolicyBundle
from contracts.rest.observability import AuditReceipt, AuditReceipts, TelemetryReceipt

ON = {"auditService": True, "telemetryService": True}
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Services:
    """The Audit and Telemetry Services as the producer sees them (the backend client's two calls)."""

    def __init__(self) -> None:
        self.audit: list[dict[str, Any]] = []
        self.telemetry: list[dict[str, Any]] = []
        self.quota: dict[str, Any] | None = None

    async def record_audit_events(self, encoded: list[bytes]) -> AuditReceipts:
        events = [json.loads(line) for line in encoded]
        self.audit += events
        receipts = [AuditReceipt(event_id=e["eventId"], sequence=1, hash="h") for e in events]
        return AuditReceipts(accepted=len(events), records=receipts)

    async def record_telemetry_events(self, encoded: list[bytes]) -> TelemetryReceipt:
        self.telemetry += [json.loads(line) for line in encoded]
        receipt = {"accepted": len(encoded), "quotaExceeded": self.quota}
        return TelemetryReceipt.model_validate_json(json.dumps(receipt))

    def of(self, stream: str, event_type: str) -> list[dict[str, Any]]:
        return [e for e in getattr(self, stream) if e["eventType"] == event_type]


def producer(tmp_path: Path, services: Services, flags: dict[str, bool] | None = ON) -> SessionObservability:
    made = SessionObservability(
        spool=EventSpool(tmp_path / "events"),
        client=services,
        origin="http://127.0.0.1:9999",
        tenant_id="acme",
        user_id="alice",
        workspace_id="ws_1",
        session_id="sess_1",
        feature_flags=flags,
        clock=lambda: NOW,
        outbox_options={"flush_after_s": 0.01},
    )
    made.start()
    return made


def emitter(observed: SessionObservability) -> EventEmitter:
    events = EventEmitter(workspace_id="ws_1", session_id="sess_1", notify=None, log_path=None)
    events.observer = observed.observe
    return events


def a_step(events: EventEmitter) -> None:
    ids = {"task_id": "task_1", "step_id": "step_1"}
    events.emit(
        EventType.TASK_STARTED,
        {"maxSteps": 5, "approvalMode": "on_risky_actions", "prompt": "secret plans"},
        task_id="task_1",
    )
    events.emit(EventType.STEP_STARTED, {"stepId": "step_1", "stepCount": 1}, **ids)
    events.emit(EventType.LLM_REQUEST_STARTED, {"model": "m", "estimatedInputTokens": 10}, **ids)
    events.emit(EventType.TEXT_CHUNK, {"text": "thinking"}, **ids)
    events.emit(
        EventType.LLM_REQUEST_COMPLETED,
        {
            "model": "m",
            "inputTokens": 10,
            "outputTokens": 5,
            "latencyMs": 30,
            "cacheReadTokens": 7,
            "cacheWriteTokens": 3,
            "timeToFirstTokenMs": 12,
            "retries": 1,
        },
        **ids,
    )
    events.emit(EventType.TOOL_REQUESTED, {"toolName": "ReadFile", "toolCallId": "c1"}, **ids)
    events.emit(
        EventType.TOOL_COMPLETED,
        {"toolName": "ReadFile", "status": "succeeded", "latencyMs": 2, "outputPreview": "file content"},
        **ids,
    )
    events.emit(EventType.STEP_COMPLETED, {"stepId": "step_1", "stepCount": 1}, **ids)


def assert_envelopes_fit(envelopes: list[dict[str, Any]]) -> None:
    for wire in envelopes:
        model = EventEnvelope.model_validate_json(json.dumps(wire))
        assert model.tenant_id == "acme"
        assert model.user_id == "alice"
        PAYLOADS[model.event_type].model_validate_json(json.dumps(wire["payload"]))


async def test_with_both_flags_off_nothing_is_built_spooled_or_sent(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services, flags={"approvalService": True})
    events = emitter(observed)
    a_step(events)
    observed.policy_decision(
        Allowed(), capability=Capability.FILE_READ, policy_version="v1", task_id="t", step_id="s"
    )
    observed.policy_loaded(_bundle(), "created")
    await events.aclose()
    await observed.aclose()
    assert services.audit == []
    assert services.telemetry == []
    assert not (tmp_path / "events").exists() or list((tmp_path / "events").rglob("*.seg")) == []


async def test_audit_gets_the_facts_without_prompts_or_outputs(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services, flags={"auditService": True})
    events = emitter(observed)
    a_step(events)
    events.emit(
        EventType.APPROVAL_REQUESTED,
        {
            "approvalId": "appr_1",
            "sessionId": "sess_1",
            "taskId": "task_1",
            "stepId": "step_1",
            "title": "Write a file",
            "actionSummary": "Write /p/a.txt",
            "riskLevel": "medium",
            "details": {"toolName": "WriteFile", "path": "/p/a.txt", "diff": "+ the file's new content"},
        },
        task_id="task_1",
        step_id="step_1",
    )
    await events.aclose()
    assert await observed.flush()
    await observed.aclose()
    assert services.telemetry == []
    assert [e["eventType"] for e in services.audit] == [
        "task_started",
        "tool_completed",
        "approval_requested",
    ]
    assert_envelopes_fit(services.audit)
    started, completed, asked = services.audit
    assert "prompt" not in started["payload"]
    assert "outputPreview" not in completed["payload"]
    assert "diff" not in asked["payload"]["details"]
    assert asked["payload"]["details"]["path"] == "/p/a.txt"
    assert completed["component"] == "LocalAgentHost"
    assert completed["boundedContext"] == "ToolExecution"
    assert (completed["taskId"], completed["stepId"]) == ("task_1", "step_1")


async def test_telemetry_gets_llm_tool_and_step_measures(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services, flags={"telemetryService": True})
    events = emitter(observed)
    a_step(events)
    observed.runtime_started(123.4, runtime_version="0.1.0", os_family="Linux")
    await events.aclose()
    assert await observed.flush()
    await observed.aclose()
    assert services.audit == []
    assert_envelopes_fit(services.telemetry)
    (llm,) = services.of("telemetry", "llm_request_completed")
    assert llm["payload"]["timeToFirstTokenMs"] == 12
    assert llm["payload"]["retries"] == 1
    assert (llm["payload"]["cacheReadTokens"], llm["payload"]["cacheWriteTokens"]) == (7, 3)
    (tool,) = services.of("telemetry", "tool_completed")
    assert tool["payload"]["latencyMs"] == 2
    assert "outputPreview" not in tool["payload"]
    (step,) = services.of("telemetry", "step_completed")
    times = step["payload"]
    assert times["durationMs"] >= times["llmMs"] + times["toolsMs"]
    assert times["overheadMs"] == pytest.approx(
        times["durationMs"] - times["llmMs"] - times["toolsMs"], abs=0.01
    )
    (started,) = services.of("telemetry", "runtime_started")
    assert started["payload"]["startupMs"] == 123.4
    assert started["boundedContext"] == "Operations"


async def test_every_kind_of_policy_decision_is_recorded_with_its_rule_and_target(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services, flags={"auditService": True})
    common: dict[str, Any] = {"policy_version": "v7", "task_id": "task_1", "step_id": "step_1"}
    observed.policy_decision(
        Allowed(RiskLevel.LOW),
        capability=Capability.FILE_READ,
        tool_name="ReadFile",
        tool_call_id="c1",
        target="/p/a.txt",
        **common,
    )
    observed.policy_decision(
        Denied("Path is blocked: /p/.git/config"),
        capability=Capability.FILE_WRITE,
        tool_name="WriteFile",
        tool_call_id="c2",
        target="/p/.git/config",
        **common,
    )
    observed.policy_decision(
        ApprovalRequired(
            rule_id="shell-exec",
            risk_level=RiskLevel.MEDIUM,
            title="Run",
            description="",
            action_summary="Run: make",
            details=ApprovalDetails(tool_name="RunCommand"),
            reasons=(ApprovalReason.BUNDLE_REQUIRES,),
        ),
        capability=Capability.SHELL_EXEC,
        tool_name="RunCommand",
        tool_call_id="c3",
        target="make",
        **common,
    )
    observed.policy_decision(
        Denied("budget", ErrorCode.LLM_BUDGET_EXCEEDED), capability=Capability.LLM_CALL, **common
    )
    assert await observed.flush()
    await observed.aclose()
    assert_envelopes_fit(services.audit)
    decisions = [e["payload"] for e in services.audit]
    assert [(d["capability"], d["decision"]) for d in decisions] == [
        ("File.Read", "allowed"),
        ("File.Write", "denied"),
        ("Shell.Exec", "approval_required"),
        ("LLM.Call", "denied"),
    ]
    assert decisions[1]["target"] == "/p/.git/config"
    assert decisions[1]["code"] == "CAPABILITY_DENIED"
    assert decisions[2]["rule"] == "shell-exec"
    assert decisions[2]["reasons"] == ["bundle_requires"]
    assert decisions[3]["code"] == "LLM_BUDGET_EXCEEDED"
    assert {e["component"] for e in services.audit} == {"LocalPolicyEnforcer"}
    assert [e["severity"] for e in services.audit] == ["info", "warning", "info", "warning"]
    assert all(e["payload"]["policyVersion"] == "v7" for e in services.audit)


async def test_the_loaded_bundle_is_recorded(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services, flags={"auditService": True})
    observed.policy_loaded(_bundle(), "created", {"auditService": True})
    assert await observed.flush()
    await observed.aclose()
    assert_envelopes_fit(services.audit)
    (loaded,) = services.audit
    assert loaded["payload"]["source"] == "created"
    assert loaded["payload"]["capabilities"] == ["File.Read", "LLM.Call"]


async def test_a_flag_switched_off_stops_the_stream(tmp_path: Path) -> None:
    services = Services()
    observed = producer(tmp_path, services)
    events = emitter(observed)
    events.emit(EventType.TASK_STARTED, {"maxSteps": 5, "approvalMode": "never"}, task_id="task_1")
    observed.set_flags({"telemetryService": True})
    events.emit(EventType.TASK_COMPLETED, {"stepCount": 0}, task_id="task_1")
    await events.aclose()
    assert await observed.flush()
    await observed.aclose()
    assert [e["eventType"] for e in services.audit] == ["task_started"]


async def test_a_used_up_daily_quota_stops_llm_calls_until_it_frees(tmp_path: Path) -> None:
    services = Services()
    retry_at = NOW + timedelta(hours=3)
    services.quota = {
        "code": "RATE_LIMITED",
        "message": "This organisation has used 2,001 of its 2,000 LLM tokens for today (tokensPerDay). "
        "New sessions can start after 00:00 UTC, in 3 h.",
        "retryable": True,
        "details": {"quota": "tokensPerDay", "limit": 2000, "used": 2001, "retryAt": retry_at.isoformat()},
    }
    observed = producer(tmp_path, services, flags={"telemetryService": True})
    assert observed.llm_refusal(NOW) is None
    observed.runtime_started(1.0, runtime_version="0.1.0", os_family=None)
    assert await observed.flush()
    refusal = observed.llm_refusal(NOW)
    assert refusal is not None
    assert refusal.code is ErrorCode.RATE_LIMITED
    assert "tokensPerDay" in refusal.message
    assert "no more LLM calls" in refusal.message
    assert observed.llm_refusal(retry_at + timedelta(seconds=1)) is None
    await observed.aclose()


def _bundle() -> PolicyBundle:
    return PolicyBundle.model_validate(
        {
            "sessionId": "sess_1",
            "capabilities": [{"name": "File.Read"}, {"name": "LLM.Call"}],
            "llmPolicy": {
                "allowedModels": ["*"],
                "maxInputTokens": 1,
                "maxOutputTokens": 1,
                "maxSessionTokens": 1,
            },
            "expiresAt": (NOW + timedelta(hours=8)).isoformat(),
            "schemaVersion": "1.0",
            "version": "v1",
        },
        strict=False,
    )
