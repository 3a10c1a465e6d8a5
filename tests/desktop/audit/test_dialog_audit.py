"""The approval dialog tells the audit producer what the user saw and did: each request as it is shown,
the answer, and a request whose time ran out on screen."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.approval.dialog import ApprovalDialog
from desktop.approval.queue import ApprovalQueue
from desktop.audit import DesktopAudit, SessionRef
from tests.desktop.approval.requests import request


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Received:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, http_request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.events += json.loads(http_request.content)
        return httpx.Response(201, json={"accepted": 1, "records": []})


def test_shown_answered_and_timed_out_requests_are_recorded(qtbot: QtBot) -> None:
    clock = Clock()
    queue = ApprovalQueue()
    received = Received()
    audit = DesktopAudit(
        sessions=lambda: [SessionRef("sess_1", "ws_1", {"auditService": True})],
        monotonic=clock,
        transport=httpx.MockTransport(received),
        flush_after_s=0.0,
    )
    audit.connect("http://127.0.0.1:1", "token", "acme", "alice")
    dialog = ApprovalDialog(queue, clock=clock, arm_delay_ms=0)
    qtbot.addWidget(dialog)
    dialog.on_shown = lambda pending: audit.approval_shown(pending.session_id, pending.request)
    dialog.on_expired = lambda pending: audit.approval_timed_out(pending.session_id, pending.approval_id)
    dialog.decided.connect(audit.approval_decided)

    queue.add("sess_1", request("appr_1"), received_at=clock.now)
    queue.add("sess_1", request("appr_2", timeoutSeconds=30), received_at=clock.now)
    assert dialog.shown is not None
    clock.now += 4.0
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert dialog.shown is not None
    assert dialog.shown.approval_id == "appr_2"
    clock.now += 31.0
    qtbot.waitUntil(lambda: dialog.shown is None, timeout=5000)
    assert audit.wait_sent(timeout=10)
    audit.close()

    kinds = [(e["eventType"], e["payload"]["approvalId"]) for e in received.events]
    assert kinds == [
        ("approval_shown", "appr_1"),
        ("approval_shown", "appr_2"),
        ("approval_resolved", "appr_1"),
        ("approval_timeout", "appr_2"),
    ]
    resolved = received.events[2]["payload"]
    assert resolved["decision"] == "approved"
    assert resolved["latencyMs"] == 4000
