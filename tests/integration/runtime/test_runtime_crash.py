"""Crash recovery (seed 000 §9): the runtime is killed with SIGKILL and a new process resumes the
session from its checkpoint; a corrupt or stale checkpoint is deleted and reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from contracts.session_runtime import SessionRuntimeSnapshot
from tests.integration.runtime.harness import (
    Backend,
    Launch,
    held_command,
    open_session,
    result_text,
    start_held_command,
    tool_call,
    tool_results,
)


def checkpoint_path(data_dir: Path, session_id: str | None) -> Path:
    return data_dir / "checkpoints" / f"{session_id}.json"


def write_a_script(workspace: Path, *more_turns: dict[str, Any]) -> list[dict[str, Any]]:
    """The model writes ``a.txt`` and says so; then ``more_turns``."""
    return [
        {"toolCalls": [tool_call("WriteFile", "w", path=str(workspace / "a.txt"), content="a")]},
        {"text": "Wrote a."},
        *more_turns,
    ]


async def crash_after_one_task(launch: Launch, gateway_url: str, backend: Backend, workspace: Path) -> str:
    """A runtime that ran task_1 ("Write a", played by :func:`write_a_script`) to completion and was
    then SIGKILLed; returns its session's id."""
    rt = await open_session(launch, gateway_url, backend, workspace)
    assert (await rt.run_task("Write a"))["eventType"] == "task_completed"
    await rt.kill()
    return rt.session_id or ""


async def test_a_tool_in_flight_at_a_kill_becomes_interrupted_and_the_resumed_task_completes(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    started, go = workspace / "started", workspace / "go"
    command = held_command(started, go, then=f"echo done > {workspace / 'side.txt'}")
    script = [
        {"text": "Running it.", "toolCalls": [tool_call("RunCommand", "call_slow", command=command)]},
        {"text": "It was interrupted; I will leave it."},
    ]
    async with ScriptedGateway(script) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace, label="before the crash")
        session_id = first.session_id or ""
        await start_held_command(first, "Run the slow thing", started)
        await first.kill()
        go.touch()  # let the orphaned command end
        saved = SessionRuntimeSnapshot.model_validate_json(checkpoint_path(data_dir, session_id).read_bytes())

        second = await launch(gateway.url, label="after the crash")
        resumed = await second.resume(session_id)
        end = await second.task_end("task_1", timeout=30)
        gateway.assert_done()
        (result,) = tool_results(gateway.requests[1].body)

    assert saved.loop.task is not None
    assert saved.loop.task.task_id == "task_1"
    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert resumed["task"]["taskId"] == "task_1"
    assert end["eventType"] == "task_completed", end
    assert result["tool_use_id"] == "call_slow"
    assert result.get("is_error") is True
    assert "Interrupted" in result_text(result)
    assert second.id_chain_problems() == []


async def test_an_idle_session_resumes_in_a_new_process_with_its_thread(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway(write_a_script(workspace, {"text": "Still here."})) as gateway:
        session_id = await crash_after_one_task(launch, gateway.url, backend, workspace)
        second = await launch(gateway.url)
        resumed = await second.resume(session_id)
        end = await second.run_task("And now?", task_id="task_2")
        replayed = str(gateway.requests[2].body["messages"])
    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert resumed["task"]["status"] == "TASK_COMPLETED"
    assert end["eventType"] == "task_completed"
    assert "Wrote a." in replayed
    assert "Write a" in replayed


CORRUPT_CHECKPOINTS = {
    "garbage": b"\x00\xff not json at all",
    "truncated": b'{"checkpointVersion": "1.0", "sessionId": "sess_x", "thread": [',
    "unknown version": b'{"checkpointVersion": "7.3"}',
    "invalid field": b'{"checkpointVersion": "1.0", "sessionId": 5}',
}


async def test_a_corrupt_checkpoint_is_deleted_and_recovery_fails_clearly(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway(write_a_script(workspace)) as gateway:
        session_id = await crash_after_one_task(launch, gateway.url, backend, workspace)
        path = checkpoint_path(data_dir, session_id)
        assert path.exists()
        second = await launch(gateway.url)
        # One process tries each corruption in turn: a failed recovery leaves it able to try again.
        for kind, content in CORRUPT_CHECKPOINTS.items():
            path.write_bytes(content)
            with pytest.raises(RpcCallError) as failed:
                await second.resume(session_id)
            assert failed.value.error_code is ErrorCode.SESSION_NOT_FOUND, kind
            assert failed.value.data is not None
            assert "crash recovery failed" in failed.value.data.message.lower(), kind
            assert not path.exists(), kind
            assert second.alive, kind


async def test_resuming_a_session_without_a_checkpoint_is_session_not_found(
    launch: Launch, backend: Backend
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        with pytest.raises(RpcCallError) as failed:
            await rt.resume("sess_never_existed")
    assert failed.value.error_code is ErrorCode.SESSION_NOT_FOUND


async def test_a_hostile_session_id_never_reaches_the_file_system(launch: Launch, data_dir: Path) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        for session_id in ["../../etc/passwd", "sess_\u0000x", "a" * 5000, "/tmp/x", "sess/../../y"]:
            with pytest.raises(RpcCallError) as failed:
                await rt.resume(session_id)
            assert failed.value.error_code in (ErrorCode.SESSION_NOT_FOUND, ErrorCode.INVALID_REQUEST), (
                session_id
            )
            assert rt.alive
    assert not data_dir.exists() or sorted(p.name for p in data_dir.rglob("*") if p.is_file()) == []


async def test_a_session_the_backend_cancelled_is_not_resumed_and_its_checkpoint_is_removed(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway(write_a_script(workspace)) as gateway:
        session_id = await crash_after_one_task(launch, gateway.url, backend, workspace)
        async with backend.http() as http:
            cancelled = await http.post(f"/sessions/{session_id}/cancel", json={"reason": "user closed it"})
        assert cancelled.status_code == 200, cancelled.text
        second = await launch(gateway.url)
        with pytest.raises(RpcCallError) as failed:
            await second.resume(session_id)
    assert failed.value.error_code is ErrorCode.SESSION_EXPIRED
    assert not checkpoint_path(data_dir, session_id).exists()
