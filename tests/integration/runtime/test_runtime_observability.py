"""Audit and telemetry from the real runtime to the real local backend (seed 001 §6.3, Phase 3): a scripted
task leaves the audit trail an auditor expects — every policy decision, every approval, every tool
execution, the session's lifecycle — in a hash chain that verifies, and its telemetry; envelopes survive a
kill -9 and the next runtime sends them; with the featureFlags off nothing is sent; with the services down
nothing is lost and the steps do not wait.

The audit log is read as an operator does (``GET /audit/events`` with an administrator's token from
``cowork-backend token --admin``); telemetry, which has no read route, from the store's database."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.events import PAYLOADS, EventEnvelope
from tests.integration.runtime.harness import Backend, Launch, Runtime, eventually, start_backend, tool_call
from tests.support.peers import REPO_ROOT

Scope = dict[str, Any]


# ------------------------------------------------------------------------------------------- reading


def admin_token(backend: Backend) -> str:
    """``cowork-backend token --admin`` for the backend's own tenant and user."""
    command = [sys.executable, "-m", "backend.cli", "token", "--data-dir", str(backend.data_dir)]
    command += ["--tenant", backend.tenant_id, "--user", backend.user_id, "--admin"]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


async def audit_events(backend: Backend, token: str, session_id: str) -> list[dict[str, Any]]:
    """The session's audit records, oldest first (every page)."""
    found: list[dict[str, Any]] = []
    params: dict[str, str] = {"sessionId": session_id, "order": "asc", "limit": "500"}
    async with httpx.AsyncClient(
        base_url=backend.url, headers={"authorization": f"Bearer {token}"}, timeout=10
    ) as http:
        while True:
            response = await http.get("/audit/events", params=params)
            assert response.status_code == 200, response.text[:500]
            page = response.json()
            found += [record["event"] for record in page["events"]]
            if not page["hasMore"]:
                return found
            params["cursor"] = page["nextCursor"]


async def verify_chain(backend: Backend, token: str) -> dict[str, Any]:
    async with httpx.AsyncClient(
        base_url=backend.url, headers={"authorization": f"Bearer {token}"}, timeout=30
    ) as http:
        response = await http.get("/audit/verify")
    assert response.status_code == 200, response.text[:500]
    verdict: dict[str, Any] = response.json()
    return verdict


def telemetry_events(backend: Backend, session_id: str) -> list[dict[str, Any]]:
    """The session's telemetry as the local store holds it (read-only: the backend is running)."""
    database = backend.data_dir / "backend.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)) as db:
        rows = db.execute("SELECT document FROM telemetry").fetchall()
    events = [json.loads(row[0])["event"] for row in rows]
    return sorted((e for e in events if e["sessionId"] == session_id), key=lambda e: e["timestamp"])


def fits_the_contract(envelope: dict[str, Any]) -> None:
    model = EventEnvelope.model_validate_json(json.dumps(envelope))
    PAYLOADS[model.event_type].model_validate_json(json.dumps(envelope["payload"]))


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["eventType"] for event in events]


# ------------------------------------------------------------------------------------------- script


def governed_script(workspace: Path) -> list[dict[str, Any]]:
    """One task, one call per step: allowed, denied by the policy, approved, denied by the user."""
    return [
        {"toolCalls": [tool_call("ReadFile", "c_read", path=str(workspace / "a.txt"))]},
        {
            "toolCalls": [
                tool_call("WriteFile", "c_git", path=str(workspace / ".git" / "config"), content="x")
            ]
        },
        {"toolCalls": [tool_call("RunCommand", "c_yes", command=f"echo yes > {workspace / 'yes.txt'}")]},
        {"toolCalls": [tool_call("RunCommand", "c_no", command=f"echo no > {workspace / 'no.txt'}")]},
        {"text": "Done."},
    ]


async def run_governed_task(rt: Runtime) -> None:
    await rt.start_task("Read, write, run twice", maxSteps=10)
    first = await rt.event("approval_requested", timeout=30)
    await rt.approve(first["payload"]["approvalId"])
    second = await rt.event("approval_requested", count=2, timeout=30)
    await rt.approve(second["payload"]["approvalId"], "denied", reason="not this one")
    end = await rt.task_end("task_1", timeout=30)
    assert end["eventType"] == "task_completed", end


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("hello\n")
    (workspace / ".git").mkdir()
    return workspace


# ------------------------------------------------------------------------------------------- tests


async def test_a_scripted_task_leaves_the_whole_audit_trail_in_a_verified_chain_and_its_telemetry(
    launch: Launch, backend: Backend, project: Path
) -> None:
    token = admin_token(backend)
    async with ScriptedGateway(governed_script(project)) as gateway:
        rt = await launch(gateway.url)
        created = await rt.create_session(backend, project)
        assert created["featureFlags"]["auditService"] is True
        await run_governed_task(rt)
        await rt.shutdown()
        assert await rt.wait_exit(timeout=30) == 0
    session_id = rt.session_id or ""

    async def trail() -> list[dict[str, Any]] | None:
        found = await audit_events(backend, token, session_id)
        return found if "session_completed" in types(found) else None

    audit = await eventually(trail, timeout=20, what="the session's audit trail")
    for envelope in audit:
        fits_the_contract(envelope)
        # The full ID chain, the caller's own tenant and user.
        assert (envelope["tenantId"], envelope["userId"]) == (backend.tenant_id, backend.user_id)
        assert (envelope["workspaceId"], envelope["sessionId"]) == (rt.workspace_id, session_id)
    for envelope in audit:
        if envelope["eventType"] in ("policy_decision", "tool_completed", "approval_requested"):
            assert envelope["taskId"] == "task_1"
            assert envelope["stepId"]

    kinds = types(audit)
    assert kinds[0] == "policy_loaded"
    assert kinds[-1] == "session_completed"
    for kind in ("session_started", "task_started", "task_completed"):
        assert kinds.count(kind) == 1, kinds

    decisions = {
        e["payload"]["toolCallId"]: e["payload"] for e in audit if e["eventType"] == "policy_decision"
    }
    assert decisions["c_read"]["decision"] == "allowed"
    assert decisions["c_read"]["capability"] == "File.Read"
    assert decisions["c_read"]["target"] == str(project / "a.txt")
    assert decisions["c_git"]["decision"] == "denied"
    assert decisions["c_git"]["capability"] == "File.Write"
    assert decisions["c_git"]["target"] == str(project / ".git" / "config")
    assert "blocked" in decisions["c_git"]["reason"]
    for call in ("c_yes", "c_no"):
        assert decisions[call]["decision"] == "approval_required"
        assert decisions[call]["capability"] == "Shell.Exec"
        assert decisions[call]["rule"] == "shell-exec"
        assert decisions[call]["target"].startswith("echo ")

    asked = [e["payload"] for e in audit if e["eventType"] == "approval_requested"]
    resolved = {
        e["payload"]["approvalId"]: e["payload"]["decision"]
        for e in audit
        if e["eventType"] == "approval_resolved"
    }
    assert sorted(resolved.values()) == ["approved", "denied"]
    assert {a["approvalId"] for a in asked} == set(resolved)

    executed = {
        e["payload"]["toolCallId"]: e["payload"]["status"]
        for e in audit
        if e["eventType"] == "tool_completed"
    }
    assert executed == {"c_read": "succeeded", "c_git": "denied", "c_yes": "succeeded", "c_no": "denied"}
    assert all("outputPreview" not in e["payload"] for e in audit)
    assert all("prompt" not in e["payload"] for e in audit)

    verdict = await verify_chain(backend, token)
    assert verdict["ok"] is True, verdict
    assert verdict["checked"] >= len(audit)

    telemetry = telemetry_events(backend, session_id)
    for envelope in telemetry:
        fits_the_contract(envelope)
    llm = [e["payload"] for e in telemetry if e["eventType"] == "llm_request_completed"]
    assert len(llm) == 5
    assert all(call["latencyMs"] >= 0 and call["retries"] == 0 for call in llm)
    assert all("timeToFirstTokenMs" in call for call in llm)
    assert all(call["inputTokens"] > 0 for call in llm)
    steps = [e["payload"] for e in telemetry if e["eventType"] == "step_completed"]
    assert len(steps) == 5
    assert all(step["durationMs"] >= step["overheadMs"] >= 0 for step in steps)
    tools = [e["payload"] for e in telemetry if e["eventType"] == "tool_completed"]
    assert sorted(t["toolCallId"] for t in tools) == ["c_git", "c_no", "c_read", "c_yes"]
    (started,) = [e["payload"] for e in telemetry if e["eventType"] == "runtime_started"]
    assert started["startupMs"] > 0


async def test_envelopes_survive_a_kill_9_and_the_next_runtime_sends_them(
    launch: Launch, backend: Backend, project: Path, data_dir: Path
) -> None:
    token = admin_token(backend)
    script = [
        {"toolCalls": [tool_call("ReadFile", "c_read", path=str(project / "a.txt"))]},
        {"text": "Read."},
    ]
    # A long flush interval: nothing is sent before the kill, every envelope is in the spool.
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, extra={"COWORK_EVENTS_FLUSH_S": "60"})
        await rt.create_session(backend, project)
        end = await rt.run_task("Read a file", timeout=30)
        assert end["eventType"] == "task_completed"
        await rt.kill()
    first_session = rt.session_id or ""
    assert await audit_events(backend, token, first_session) == []
    assert list((data_dir / "events").rglob("*.seg"))

    async with ScriptedGateway([{"text": "Hello."}]) as gateway:
        later = await launch(gateway.url, label="the next runtime")
        await later.create_session(backend, project)

        async def delivered() -> list[dict[str, Any]] | None:
            found = await audit_events(backend, token, first_session)
            return found if "task_completed" in types(found) else None

        audit = await eventually(delivered, timeout=20, what="the killed runtime's audit events")
    kinds = types(audit)
    for kind in ("policy_loaded", "session_started", "task_started", "policy_decision", "tool_completed"):
        assert kind in kinds, kinds
    telemetry = telemetry_events(backend, first_session)
    assert "llm_request_completed" in types(telemetry)
    assert (await verify_chain(backend, token))["ok"] is True


@pytest.fixture(scope="module")
def flags_off_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    config = tmp_path_factory.mktemp("flags-off-config")
    (config / "default.toml").write_text(
        "featureFlags = { approvalService = true, auditService = false, telemetryService = false }\n"
    )
    with start_backend(tmp_path_factory.mktemp("flags-off-backend"), config_dir=config) as running:
        yield running


async def test_with_the_flags_off_nothing_is_sent_or_spooled(
    launch: Launch, flags_off_backend: Backend, project: Path, data_dir: Path
) -> None:
    backend = flags_off_backend
    token = admin_token(backend)
    async with ScriptedGateway(governed_script(project)) as gateway:
        rt = await launch(gateway.url, backend=backend)
        created = await rt.create_session(backend, project)
        assert created["featureFlags"] == {
            "approvalService": True,
            "auditService": False,
            "telemetryService": False,
        }
        await run_governed_task(rt)
        await rt.shutdown()
        assert await rt.wait_exit(timeout=30) == 0
    assert await audit_events(backend, token, rt.session_id or "") == []
    assert telemetry_events(backend, rt.session_id or "") == []
    assert not list((data_dir / "events").rglob("*.seg"))


class EventsProxy:
    """Forwards everything to the backend but ``POST /audit/events`` and ``/telemetry/events``, which it
    holds unanswered (a hung service) while ``hold`` is set."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.held = 0
        self.release = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] in ("/audit/events", "/telemetry/events"):
            self.held += 1
            await self.release.wait()
        query = scope["query_string"].decode()
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k.lower() != b"host"]
        async with httpx.AsyncClient(base_url=self.upstream, timeout=30) as http:
            reply = await http.request(
                scope["method"], scope["path"] + (f"?{query}" if query else ""), headers=headers, content=body
            )
        await send(
            {
                "type": "http.response.start",
                "status": reply.status_code,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(reply.content)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": reply.content})


@pytest.fixture
async def proxy(backend: Backend) -> AsyncIterator[tuple[EventsProxy, str]]:
    app = EventsProxy(backend.url)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False, lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(10):
        while not server.started:  # noqa: ASYNC110 - uvicorn has no event for it
            await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        app.release.set()
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(serving, 10)


async def test_with_the_services_hung_the_steps_do_not_wait_and_nothing_is_lost(
    launch: Launch, backend: Backend, project: Path, proxy: tuple[EventsProxy, str]
) -> None:
    hung, url = proxy
    token = admin_token(backend)
    steps = 12
    script: list[dict[str, Any]] = [
        {"toolCalls": [tool_call("ReadFile", f"c_{n}", path=str(project / "a.txt"), limit=n + 1)]}
        for n in range(steps - 1)
    ]
    script.append({"text": "Read them all."})
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, extra={"COWORK_BACKEND_URL": url, "COWORK_EVENTS_FLUSH_S": "0.05"})
        await rt.create_session(backend, project)
        end = await rt.run_task("Read again and again", maxSteps=steps * 2, timeout=60)
        assert end["eventType"] == "task_completed"

        async def both_asked() -> bool:
            return hung.held >= 2

        await eventually(both_asked, timeout=10, what="both services asked (and not answering)")
        started = asyncio.get_running_loop().time()
        await rt.shutdown()
        assert await rt.wait_exit(timeout=30) == 0
        exit_s = asyncio.get_running_loop().time() - started
    # The exit gave the hung services about a second, not the client's 30 s read timeout.
    assert exit_s < 10, exit_s
    session_id = rt.session_id or ""
    assert await audit_events(backend, token, session_id) == []

    # The next runtime, with the backend reachable, sends everything the first one spooled.
    async with ScriptedGateway([{"text": "Hello."}]) as gateway:
        later = await launch(gateway.url, label="the next runtime")
        await later.create_session(backend, project)

        async def delivered() -> list[dict[str, Any]] | None:
            found = await audit_events(backend, token, session_id)
            return found if "session_completed" in types(found) else None

        audit = await eventually(delivered, timeout=20, what="the spooled audit events")
    executed = [e for e in audit if e["eventType"] == "tool_completed"]
    assert len(executed) == steps - 1
    assert len([e for e in audit if e["eventType"] == "policy_decision"]) == steps - 1
    telemetry = telemetry_events(backend, session_id)
    step_times = [e["payload"] for e in telemetry if e["eventType"] == "step_completed"]
    assert len(step_times) == steps
    # The loop's own time per step while both services hung: far below the 30 s a blocking send waits.
    assert statistics.median(step["overheadMs"] for step in step_times) < 100
    assert max(step["durationMs"] for step in step_times) < 5_000
