"""The gate wired as the runtime wires it: the real event emitter (desktop sink and JSONL log) and the
real backend client posting to the real local Approval Service (``cowork-backend serve --store local``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.approval import ApprovalGate
from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.services import BackendClient, BackendConfig
from contracts.enums import ApprovalDecision, ApprovalScope, Capability, CompatibilityStatus, OsFamily
from contracts.events import SessionEvent
from contracts.methods import ApproveActionParams, ClientInfo
from contracts.rest.approvals import ApprovalList
from contracts.rest.sessions import CreateSessionRequest
from tests.support.backend import Backend, start_backend

from .approval_fakes import WAIT_S, ask


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with start_backend(tmp_path_factory.mktemp("approval-backend") / "data") as running:
        yield running


class Desktop:
    """The desktop end of ``SessionEvent`` notifications."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self._seen: set[str] = set()
        self._arrived = asyncio.Event()

    async def notify(self, method: str, params: Any) -> None:
        assert method == "SessionEvent"
        self.events.append(SessionEvent.model_validate_json(json.dumps(params)))
        self._arrived.set()

    async def next_request(self) -> SessionEvent:
        """The next ``approval_requested`` not returned before, waiting (bounded) for it."""
        async with asyncio.timeout(WAIT_S):
            while True:
                for event in self.events:
                    if event.event_type.value == "approval_requested" and event.event_id not in self._seen:
                        self._seen.add(event.event_id)
                        return event
                self._arrived.clear()
                await self._arrived.wait()


async def test_decisions_reach_the_desktop_the_event_log_and_the_approval_service(
    backend: Backend, tmp_path: Path
) -> None:
    config = BackendConfig.from_environment(
        {"COWORK_BACKEND_URL": backend.url, "COWORK_BACKEND_TOKEN": backend.token}
    )
    async with BackendClient(config) as client:
        created = await client.create_session(
            CreateSessionRequest(
                client_info=ClientInfo(
                    desktop_app_version="0.1.0", local_agent_host_version="0.1.0", os_family=OsFamily.LINUX
                ),
                supported_capabilities=[Capability.SHELL_EXEC, Capability.LLM_CALL],
            )
        )
        assert created.compatibility_status is CompatibilityStatus.COMPATIBLE
        assert created.session_id is not None
        assert created.workspace_id is not None
        session_id = created.session_id
        desktop = Desktop()
        log_path = tmp_path / "logs" / f"{session_id}.events.jsonl"
        emitter = EventEmitter(
            workspace_id=created.workspace_id, session_id=session_id, notify=desktop.notify, log_path=log_path
        )
        gate = ApprovalGate(
            session_id=session_id, emit=emitter.emit, persist=client.record_approval, timeout_s=30
        )

        first = ask(gate, "pytest -q")
        shown = await desktop.next_request()
        assert gate.decide(
            ApproveActionParams(
                session_id=session_id,
                approval_id=shown.payload["approvalId"],
                decision=ApprovalDecision.APPROVED,
                scope=ApprovalScope.SESSION,
            )
        ).accepted
        approved = await asyncio.wait_for(first, WAIT_S)
        covered = await asyncio.wait_for(ask(gate, "pytest -q"), WAIT_S)
        refused = ask(gate, "rm -rf build")
        shown = await desktop.next_request()
        gate.decide(
            ApproveActionParams(
                session_id=session_id,
                approval_id=shown.payload["approvalId"],
                decision=ApprovalDecision.DENIED,
                reason="not that",
            )
        )
        denied = await asyncio.wait_for(refused, WAIT_S)

        await asyncio.wait_for(gate.aclose(), WAIT_S)
        await asyncio.wait_for(emitter.aclose(), WAIT_S)

    assert gate.persister is not None
    assert gate.persister.persisted == 3
    async with backend.http() as http:
        listed = await http.get("/approvals", params={"sessionId": session_id})
    assert listed.status_code == 200, listed.text
    stored = ApprovalList.model_validate_json(listed.text).approvals
    assert [(a.approval_id, a.decision, a.scope) for a in stored] == [
        (approved.approval_id, ApprovalDecision.APPROVED, ApprovalScope.SESSION),
        (covered.approval_id, ApprovalDecision.APPROVED, ApprovalScope.SESSION),
        (denied.approval_id, ApprovalDecision.DENIED, ApprovalScope.ONCE),
    ]
    assert stored[2].reason == "not that"

    kinds = [event.event_type.value for event in desktop.events]
    assert kinds == [
        "approval_requested",
        "approval_resolved",
        "approval_resolved",
        "approval_requested",
        "approval_resolved",
    ]
    assert all(event.step_id == "step_1" and event.task_id == "task_1" for event in desktop.events)
    logged = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert [line["eventType"] for line in logged] == kinds
