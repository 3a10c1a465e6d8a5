"""The desktop's audit producer: what only the desktop sees (approvals shown, answered, timed out; runtime
updates) reaches the real local backend's audit log in the session's ID chain, only for sessions whose
featureFlags turn audit on; the window's thread never waits on it, and a backend that is down loses
nothing the queue holds."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts.events import PAYLOADS, EventEnvelope
from desktop.audit import MAX_QUEUED, DesktopAudit, SessionRef
from desktop.updater.outcome import UpdateResult, UpdateStatus
from tests.desktop.approval.requests import request
from tests.support.backend import Backend, start_backend
from tests.support.peers import REPO_ROOT

AUDITED = SessionRef("sess_desk", "ws_desk", {"auditService": True})
NOT_AUDITED = SessionRef("sess_quiet", "ws_desk", {"auditService": False, "approvalService": True})


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("backend")) as running:
        yield running


def admin_headers(backend: Backend) -> dict[str, str]:
    command = [sys.executable, "-m", "backend.cli", "token", "--data-dir", str(backend.data_dir)]
    command += ["--tenant", backend.tenant_id, "--user", backend.user_id, "--admin"]
    token = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60)
    return {"authorization": f"Bearer {token.stdout.strip()}"}


def audit_log(backend: Backend, session_id: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=backend.url, headers=admin_headers(backend), timeout=10) as http:
        page = http.get("/audit/events", params={"sessionId": session_id, "order": "asc", "limit": "500"})
        verdict = http.get("/audit/verify")
    assert page.status_code == 200, page.text
    assert verdict.status_code == 200
    assert verdict.json()["ok"] is True
    return [record["event"] for record in page.json()["events"]]


def producer(backend: Backend, sessions: list[SessionRef], **options: Any) -> DesktopAudit:
    audit = DesktopAudit(sessions=lambda: sessions, flush_after_s=0.01, **options)
    audit.connect(backend.url, backend.token, backend.tenant_id, backend.user_id)
    return audit


def test_approvals_and_updates_reach_the_audit_log_in_the_sessions_id_chain(backend: Backend) -> None:
    sessions: list[SessionRef] = []
    audit = producer(backend, sessions)
    # An update before any session is open waits for one.
    audit.update_result(UpdateResult(UpdateStatus.INSTALLED, "Runtime 0.2.0 installed", version="0.2.0"))
    audit.update_result(UpdateResult(UpdateStatus.UP_TO_DATE, "Up to date", version="0.2.0"))
    sessions.append(AUDITED)
    audit.approval_shown("sess_desk", request("appr_1"))
    audit.approval_decided("sess_desk", "appr_1", "approved", "session", "fine")
    audit.approval_shown("sess_desk", request("appr_2"))
    audit.approval_timed_out("sess_desk", "appr_2")
    audit.update_rolled_back("0.2.0", "0.1.0", "it crashed at start three times")
    assert audit.wait_sent(timeout=10)
    audit.close()

    log = audit_log(backend, "sess_desk")
    assert [e["eventType"] for e in log] == [
        "approval_shown",
        "update_installed",
        "approval_resolved",
        "approval_shown",
        "approval_timeout",
        "update_rolled_back",
    ]
    for envelope in log:
        model = EventEnvelope.model_validate_json(json.dumps(envelope))
        PAYLOADS[model.event_type].model_validate_json(json.dumps(envelope["payload"]))
        assert (envelope["workspaceId"], envelope["sessionId"]) == ("ws_desk", "sess_desk")
        assert (envelope["tenantId"], envelope["userId"]) == (backend.tenant_id, backend.user_id)
    shown, installed, resolved, _, timed_out, rolled_back = log
    assert shown["component"] == "LocalApprovalUI"
    assert (shown["taskId"], shown["stepId"]) == ("task_1", "step_3")
    assert shown["payload"] == {
        "approvalId": "appr_1",
        "riskLevel": "medium",
        "title": "Local command execution",
    }
    assert resolved["payload"]["decision"] == "approved"
    assert resolved["payload"]["scope"] == "session"
    assert resolved["payload"]["latencyMs"] >= 0
    assert timed_out["severity"] == "warning"
    assert installed["component"] == "DesktopApp"
    assert installed["payload"] == {"version": "0.2.0"}
    assert rolled_back["payload"] == {
        "fromVersion": "0.2.0",
        "toVersion": "0.1.0",
        "reason": "it crashed at start three times",
    }


def test_a_session_without_audit_produces_nothing(backend: Backend) -> None:
    audit = producer(backend, [NOT_AUDITED])
    audit.approval_shown("sess_quiet", request("appr_q"))
    audit.approval_decided("sess_quiet", "appr_q", "denied")
    audit.update_installed("0.3.0")  # held: no session may carry it
    assert audit.wait_sent(timeout=5)
    audit.close()
    assert audit.sent == 0
    assert audit_log(backend, "sess_quiet") == []


class Backendless:
    """A transport standing in for a backend that is down (503), hung (``gate``) or back (201)."""

    def __init__(self) -> None:
        self.down = True
        self.gate = threading.Event()
        self.gate.set()
        self.received: list[dict[str, Any]] = []
        self.attempts = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.attempts += 1
        self.gate.wait(30)
        if self.down:
            return httpx.Response(503, json={"code": "INTERNAL_ERROR", "message": "down"})
        self.received += json.loads(request.content)
        return httpx.Response(201, json={"accepted": 1, "records": []})


def test_a_backend_that_is_down_loses_nothing_queued_and_gets_it_once_back() -> None:
    service = Backendless()
    sessions = [AUDITED]
    audit = DesktopAudit(
        sessions=lambda: sessions,
        transport=httpx.MockTransport(service),
        base_delay_s=0.01,
        max_delay_s=0.05,
        flush_after_s=0.0,
    )
    audit.connect("http://127.0.0.1:1", "token", "acme", "alice")
    for n in range(5):
        audit.approval_shown("sess_desk", request(f"appr_{n}"))
    deadline = time.monotonic() + 10
    while service.attempts < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert service.attempts >= 3
    service.down = False
    assert audit.wait_sent(timeout=10)
    audit.close()
    assert [e["payload"]["approvalId"] for e in service.received] == [f"appr_{n}" for n in range(5)]


def test_the_windows_thread_never_waits_on_a_hung_backend() -> None:
    service = Backendless()
    service.down = False
    service.gate.clear()  # every request hangs
    audit = DesktopAudit(
        sessions=lambda: [AUDITED], transport=httpx.MockTransport(service), flush_after_s=0.0
    )
    audit.connect("http://127.0.0.1:1", "token", "acme", "alice")
    audit.approval_shown("sess_desk", request("appr_0"))
    deadline = time.monotonic() + 10
    while service.attempts < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.perf_counter()
    for n in range(1, 200):
        audit.approval_shown("sess_desk", request(f"appr_{n}"))
        audit.approval_decided("sess_desk", f"appr_{n}", "approved")
    per_call_ms = (time.perf_counter() - started) / 398 * 1000
    assert per_call_ms < 5, per_call_ms
    service.gate.set()
    assert audit.wait_sent(timeout=10)
    audit.close()
    assert len(service.received) == 399


def test_the_queue_is_bounded() -> None:
    service = Backendless()
    service.gate.clear()
    audit = DesktopAudit(sessions=lambda: [AUDITED], transport=httpx.MockTransport(service))
    audit.connect("http://127.0.0.1:1", "token", "acme", "alice")
    for n in range(MAX_QUEUED + 50):
        audit.approval_timed_out("sess_desk", f"appr_{n}")
    assert audit.dropped >= 50
    service.gate.set()
    audit.close(timeout=0)


def test_nothing_is_produced_before_the_backend_is_known(tmp_path: Path) -> None:
    audit = DesktopAudit(sessions=lambda: [AUDITED])
    audit.approval_shown("sess_desk", request("appr_early"))
    assert audit.wait_sent(timeout=0.1)
    audit.close()
    assert audit.sent == 0
