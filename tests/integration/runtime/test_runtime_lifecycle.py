"""Every way a session ends, ends right (seed 000 §3.3–§3.4, §8.6, §12; seed 004 state machine).

Most tests drive ``python -m agent_runtime --stdio`` as a headless client does (JSON-RPC on its
stdin/stdout, stdin kept open until the runtime exits on its own); the others use the desktop's socket
through the shared ``launch`` fixture.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from agent_runtime.agent_host.state.store import CheckpointStore
from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client import ChildProcess, JsonRpcClient
from contracts.ipc.client_core import RpcCallError
from contracts.ipc.framing import FrameDecoder, decode, encode
from contracts.jsonrpc import RpcErrorCode
from contracts.methods import SESSION_EVENT
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.integration.runtime.harness import (
    ALL_CAPABILITIES,
    SHORT_BUNDLE_TTL_S,
    Backend,
    Launch,
    open_session,
    runtime_environment,
    start_backend,
    tool_call,
)
from tests.integration.runtime.legacy import legacy_checkpoint
from tests.support.peers import REPO_ROOT

EXIT_SESSION_FAILED = 5
"""The runtime's exit status after its session failed (README, "The agent runtime program")."""

GATEWAY_DOWN = [{"kind": "error", "status": 503, "message": "upstream unavailable"}] * 4
"""One try and three retries (seed 000 §11), all 5xx: the session pauses with ``llm_unreachable``."""


# ------------------------------------------------------------------------------------ --stdio runtime


@dataclass
class StdioRuntime:
    """``python -m agent_runtime --stdio`` and its JSON-RPC client; stdin stays open until the end."""

    client: JsonRpcClient
    child: ChildProcess
    log: list[bytes]
    events: list[dict[str, Any]] = field(default_factory=list)
    session_id: str = ""
    workspace_id: str = ""
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def on_notification(self, method: str, params: Any) -> None:
        if method == SESSION_EVENT:
            self.events.append(params)
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    def find(self, event_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("eventType") == event_type]

    def types(self) -> list[str]:
        return [str(event.get("eventType")) for event in self.events]

    async def event(self, event_type: str, *, timeout: float = 20.0) -> dict[str, Any]:
        """The first ``event_type`` event, waiting (bounded) for notifications until it arrives."""
        deadline = time.monotonic() + timeout
        while not self.find(event_type):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {event_type} within {timeout:g} s; events: {self.types()}")
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, 0.5)):
                    await changed.wait()
        return self.find(event_type)[0]

    async def call(self, method: str, params: dict[str, Any], *, timeout: float = 30.0) -> Any:
        return await self.client.call(method, params, timeout=timeout)

    async def create_session(self, backend: Backend, workspace: Path) -> dict[str, Any]:
        request = create_session_request(0, backend, workspace)
        created: dict[str, Any] = await self.call("CreateSession", request["params"])
        self.session_id, self.workspace_id = created["sessionId"], created["workspaceId"]
        return created

    async def exit_status(self, timeout: float = 15.0) -> int:
        """The exit status, once the runtime has exited by itself (bounded)."""
        async with asyncio.timeout(timeout):
            return await self.child.wait()


StdioLaunch = Callable[..., Awaitable[StdioRuntime]]


@pytest.fixture
async def stdio_launch(data_dir: Path) -> AsyncIterator[StdioLaunch]:
    started: list[StdioRuntime] = []

    async def _launch(backend: Backend, gateway_url: str) -> StdioRuntime:
        log: list[bytes] = []
        box: list[StdioRuntime] = []

        def on_notification(method: str, params: Any) -> None:
            box[0].on_notification(method, params)

        client, child = await ChildProcess.spawn(
            [sys.executable, "-m", "agent_runtime", "--stdio"],
            env=runtime_environment(backend, gateway_url, data_dir),
            cwd=str(REPO_ROOT),
            on_notification=on_notification,
            on_stderr=log.append,
        )
        runtime = StdioRuntime(client, child, log)
        box.append(runtime)
        started.append(runtime)
        return runtime

    yield _launch
    for runtime in started:
        with contextlib.suppress(ProcessLookupError):
            runtime.child.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(runtime.child.wait(), timeout=10)
        await runtime.client.close()
        print(f"----- stdio runtime events: {runtime.types()}")
        print(b"".join(runtime.log).decode("utf-8", "replace")[-20_000:])


def checkpoint_path(data_dir: Path, session_id: str) -> Path:
    return data_dir / "checkpoints" / f"{session_id}.json"


async def backend_status(backend: Backend, session_id: str) -> str:
    status: str = (await backend.get_json(f"/sessions/{session_id}"))["status"]
    return status


# ------------------------------------------------------------------------- Shutdown over --stdio


async def test_shutdown_over_stdio_exits_zero_while_stdin_stays_open(
    backend: Backend, workspace: Path, data_dir: Path
) -> None:
    """A headless client that answers nothing more after ``Shutdown`` and never closes the runtime's
    stdin: the runtime still exits, with status 0 (the client's pipes are plain, so nothing closes
    stdin behind the test's back)."""
    async with ScriptedGateway([]) as gateway:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agent_runtime",
            "--stdio",
            cwd=REPO_ROOT,
            env=runtime_environment(backend, gateway.url, data_dir),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        decoder = FrameDecoder()
        frames: list[bytes] = []

        async def reply(request_id: int) -> dict[str, Any]:
            assert process.stdout is not None
            async with asyncio.timeout(30):
                while True:
                    for frame in frames:
                        message = decode(frame)
                        if message.get("id") == request_id:
                            return cast(dict[str, Any], message)
                    data = await process.stdout.read(65536)
                    assert data, "the runtime closed stdout before answering"
                    frames.extend(decoder.feed(data))

        try:
            process.stdin.write(encode(create_session_request(1, backend, workspace)))
            session_id = (await reply(1))["result"]["sessionId"]
            shutdown = {"jsonrpc": "2.0", "id": 2, "method": "Shutdown", "params": {"sessionId": session_id}}
            process.stdin.write(encode(shutdown))
            answered = await reply(2)
            assert not process.stdin.is_closing()  # and it stays open: only the runtime ends this
            async with asyncio.timeout(15):
                status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert answered["result"] == {"sessionStatus": "SESSION_COMPLETED"}
    assert status == 0


def create_session_request(request_id: int, backend: Backend, workspace: Path) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "CreateSession",
        "params": {
            "userId": backend.user_id,
            "tenantId": backend.tenant_id,
            "clientInfo": {
                "desktopAppVersion": "0.1.0",
                "localAgentHostVersion": "0.1.0",
                "osFamily": "Linux",
            },
            "supportedCapabilities": ALL_CAPABILITIES,
            "workspaceHint": {"localPaths": [str(workspace)]},
        },
    }


# ------------------------------------------------------------------ paused, cancelled, shut down


async def test_a_paused_session_whose_task_was_cancelled_shuts_down_and_leaves_nothing_behind(
    stdio_launch: StdioLaunch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway(GATEWAY_DOWN) as gateway:
        rt = await stdio_launch(backend, gateway.url)
        await rt.create_session(backend, workspace)
        await rt.call("StartTask", {"sessionId": rt.session_id, "taskId": "task_1", "prompt": "Hello"})
        paused = await rt.event("session_paused")
        assert checkpoint_path(data_dir, rt.session_id).exists()
        cancel = await rt.call("CancelTask", {"sessionId": rt.session_id, "taskId": "task_1"})
        await rt.event("task_cancelled")
        result = await rt.call("Shutdown", {"sessionId": rt.session_id})
        status = await rt.exit_status()
        stored = await backend_status(backend, rt.session_id)
        history = await backend.session_history(rt.workspace_id, rt.session_id)

    assert paused["payload"]["reason"] == "llm_unreachable"
    assert cancel == {"taskId": "task_1", "cancellationRequested": True}
    # Seed 000 §3.3 "PAUSED → CANCELLED: user cancels — clean up, upload history", and §3.4 step 4
    # "session_cancelled if a task was cancelled".
    assert result == {"sessionStatus": "SESSION_CANCELLED"}
    assert rt.find("session_cancelled")
    assert not rt.find("session_completed")
    assert status == 0
    assert not checkpoint_path(data_dir, rt.session_id).exists()
    assert stored == "SESSION_CANCELLED"
    assert history is not None
    assert history.messages[0].content == "Hello"


# ------------------------------------------------------------------------------ RUNNING → FAILED

GRACE_S = 1


@pytest.fixture(scope="module")
def expiring_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """Bundles that last :data:`SHORT_BUNDLE_TTL_S`, resumable for :data:`GRACE_S` after that."""
    config = tmp_path_factory.mktemp("expiring-config")
    (config / "backend.toml").write_text(
        f"[sessions]\nbundleTtlSeconds = {SHORT_BUNDLE_TTL_S}\nresumeGraceSeconds = {GRACE_S}\n"
    )
    with start_backend(tmp_path_factory.mktemp("expiring-backend"), config_dir=config) as running:
        yield running


async def until(moment: datetime) -> None:
    """Let wall-clock time pass ``moment``: expiry is decided by the clock, nothing to wait on. Bounded:
    the moments are seconds away (the short TTLs)."""
    left = (moment - datetime.now(UTC)).total_seconds()
    assert left < 15, left
    await asyncio.sleep(max(left, 0.0) + 0.3)


async def test_a_session_that_cannot_resume_fails_uploads_its_history_ends_remotely_and_exits(
    stdio_launch: StdioLaunch, expiring_backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway(GATEWAY_DOWN) as gateway:
        rt = await stdio_launch(expiring_backend, gateway.url)
        created = await rt.create_session(expiring_backend, workspace)
        await rt.call("StartTask", {"sessionId": rt.session_id, "taskId": "task_1", "prompt": "Hello"})
        await rt.event("session_paused")
        # Past the bundle's expiry and the resume grace: the Session Service refuses the resume.
        await until(datetime.fromisoformat(created["policyExpiresAt"]) + timedelta(seconds=GRACE_S))
        with pytest.raises(RpcCallError) as refused:
            await rt.call("ResumeSession", {"sessionId": rt.session_id})
        status = await rt.exit_status()
        stored = await backend_status(expiring_backend, rt.session_id)
        history = await expiring_backend.session_history(rt.workspace_id, rt.session_id)

    assert refused.value.error_code is ErrorCode.SESSION_EXPIRED
    failed = rt.find("session_failed")
    assert len(failed) == 1, rt.types()
    assert failed[0]["payload"]["reason"]
    assert status == EXIT_SESSION_FAILED
    assert stored == "SESSION_FAILED"
    assert history is not None
    assert [m.content for m in history.messages if m.role == "user"] == ["Hello"]
    assert not checkpoint_path(data_dir, rt.session_id).exists()


# ------------------------------------------------------------------------ policy expiry (§8.6)


async def test_an_approval_given_after_the_policy_expired_does_not_run_the_tool(
    launch: Launch, short_policy_backend: Backend, workspace: Path
) -> None:
    target = workspace / "approved-late.txt"
    script = [
        {"toolCalls": [tool_call("RunCommand", "call_late", command=f"echo ran > {target}")]},
        {"text": "Resumed."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=short_policy_backend)
        created = await rt.create_session(short_policy_backend, workspace)
        await rt.start_task("Run it", approvalMode="always")
        asked = await rt.event("approval_requested")
        await until(datetime.fromisoformat(created["policyExpiresAt"]))
        await rt.approve(asked["payload"]["approvalId"])
        expired = await rt.event("policy_expired")
        paused = await rt.event("session_paused")
        (completed,) = rt.find("tool_completed")
        state = await rt.state()

    assert not target.exists()
    assert completed["payload"]["status"] == "denied"
    assert completed["payload"]["error"]["code"] == "POLICY_EXPIRED"
    assert expired["taskId"] == "task_1"
    assert paused["payload"]["reason"] == "policy_expired"
    assert state["sessionStatus"] == "SESSION_PAUSED"
    assert len(gateway.requests) == 1


# ------------------------------------------------------------------- state conflicts on the wire

STATE_CONFLICT = -32001


def conflict(exc: BaseException) -> RpcCallError:
    assert isinstance(exc, RpcCallError), exc
    assert exc.rpc_code == STATE_CONFLICT == int(RpcErrorCode.STATE_CONFLICT), exc.rpc_code
    assert exc.data is not None
    assert exc.data.message
    return exc


async def test_state_conflicts_are_server_errors_not_invalid_params(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    script = [
        {"text": "Working on it", "chunkSize": 4, "holdAfterChunks": 1},
        *GATEWAY_DOWN,
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url)
        with pytest.raises(RpcCallError) as incompatible:
            await rt.create_session(
                backend,
                workspace,
                clientInfo={
                    "desktopAppVersion": "0.1.0",
                    "localAgentHostVersion": "99.0.0",
                    "osFamily": "Linux",
                },
            )
        await rt.create_session(backend, workspace)
        with pytest.raises(RpcCallError) as second_session:
            await rt.create_session(backend, workspace)
        await rt.start_task("First job", task_id="task_a")
        await rt.event("text_chunk")
        with pytest.raises(RpcCallError) as running:
            await rt.start_task("Second job", task_id="task_b")
        gateway.release()
        await rt.task_end("task_a")
        with pytest.raises(RpcCallError) as reused:
            await rt.start_task("Same id again", task_id="task_a")
        await rt.start_task("Gateway goes down", task_id="task_c")
        await rt.event("session_paused")
        with pytest.raises(RpcCallError) as paused:
            await rt.start_task("While paused", task_id="task_d")
        # Bad params stay "Invalid params".
        with pytest.raises(RpcCallError) as bad:
            await rt.call("StartTask", {"sessionId": rt.session_id, "taskId": "t", "prompt": ""})

    assert conflict(incompatible.value).data.details["compatibilityStatus"] == "incompatible"  # type: ignore[union-attr]
    assert conflict(second_session.value).data.details["sessionId"] == rt.session_id  # type: ignore[union-attr]
    assert conflict(running.value).data.details["taskId"] == "task_a"  # type: ignore[union-attr]
    conflict(reused.value)
    assert conflict(paused.value).data.details["sessionStatus"] == "SESSION_PAUSED"  # type: ignore[union-attr]
    assert bad.value.rpc_code == int(RpcErrorCode.INVALID_PARAMS)
    assert bad.value.error_code is ErrorCode.INVALID_REQUEST


# ------------------------------------------------------------- counters that survive a kill -9


async def test_the_step_limit_warning_task_count_and_duration_survive_a_kill(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    for k in range(1, 6):
        (workspace / f"r{k}.txt").write_text(f"{k}\n")

    def read(k: int) -> dict[str, Any]:
        return {"toolCalls": [tool_call("ReadFile", f"call_r{k}", path=str(workspace / f"r{k}.txt"))]}

    script = [
        {"text": "First task done."},  # task_1
        *(read(k) for k in range(1, 5)),  # task_2, steps 1–4: the warning at 80 % of 6 steps
        {"text": "…", "chunkSize": 1, "holdAfterChunks": 0},  # step 5, killed while streaming
        read(5),  # step 5 again, in the resumed process
        {"text": "Second task done."},  # step 6
    ]
    async with ScriptedGateway(script) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace)
        created_at = time.monotonic()
        session_id = first.session_id or ""
        assert (await first.run_task("One", task_id="task_1"))["eventType"] == "task_completed"
        await first.start_task("Read five files", task_id="task_2", maxSteps=6)
        warning = await first.event("step_limit_approaching")
        await first.event("llm_request_started", count=6)  # task_1's call, four steps, then step 5
        await first.kill()
        gateway.release()
        # As the runtime loads it: the checkpoint brought up to its step journal's last record.
        saved = CheckpointStore(data_dir / "checkpoints").load(session_id)

        second = await launch(gateway.url)
        await second.resume(session_id)
        end = await second.task_end("task_2", timeout=30)
        shutdown_at = time.monotonic()
        await second.shutdown()
        completed = await second.event("session_completed")

    assert warning["payload"] == {"stepCount": 4, "maxSteps": 6}
    assert isinstance(saved, SessionRuntimeSnapshot)
    assert saved.loop.task is not None
    assert saved.loop.task.step_count == 4
    assert end["eventType"] == "task_completed", end
    assert second.find("step_limit_approaching") == []
    assert completed["payload"]["taskCount"] == 2
    # From CreateSession in the first process, not from the second process's start.
    assert completed["payload"]["durationMs"] >= int((shutdown_at - created_at) * 1000) - 50


async def test_a_checkpoint_written_before_the_counters_were_kept_still_resumes(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway([{"text": "Done."}, {"text": "Done again."}]) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace)
        session_id = first.session_id or ""
        assert (await first.run_task("One", task_id="task_1"))["eventType"] == "task_completed"
        await first.kill()
        # The file as a runtime before the counters wrote it: a legacy "1.0" checkpoint without them
        # (and no event log to prefer: seed 002 reads a v2 snapshot event before a legacy checkpoint).
        path = checkpoint_path(data_dir, session_id)
        saved = legacy_checkpoint(json.loads(path.read_bytes()))
        for key in ("taskCount", "sessionStartedAt"):
            saved.pop(key)
        saved["task"].pop("stepLimitWarned")
        path.write_text(json.dumps(saved))
        (data_dir / "logs" / f"{session_id}.events.jsonl").unlink()

        second = await launch(gateway.url)
        resumed = await second.resume(session_id)
        assert (await second.run_task("Two", task_id="task_2"))["eventType"] == "task_completed"
        await second.shutdown()
        completed = await second.event("session_completed")

    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    # The resumed task and the new one: the released file could not say how many came before.
    assert completed["payload"]["taskCount"] == 2


async def test_an_llm_retry_due_after_the_policy_expired_is_not_sent(
    launch: Launch, short_policy_backend: Backend, workspace: Path
) -> None:
    # The gateway asks to be retried after the bundle's lifetime: the retry is an LLM call of its own
    # and must be checked again (§8.6), not sent on the strength of the check before the first attempt.
    script = [
        {"kind": "error", "status": 503, "retryAfter": SHORT_BUNDLE_TTL_S + 1},
        {"text": "Resumed."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=short_policy_backend)
        await rt.create_session(short_policy_backend, workspace)
        await rt.start_task("Say something")
        expired = await rt.event("policy_expired")
        paused = await rt.event("session_paused")
        state = await rt.state()

    assert expired["taskId"] == "task_1"
    assert paused["payload"]["reason"] == "policy_expired"
    assert state["sessionStatus"] == "SESSION_PAUSED"
    assert len(gateway.requests) == 1
