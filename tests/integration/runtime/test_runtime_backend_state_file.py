"""A runtime started before its backend is up (``cowork exec`` spawns it while the embedded backend
starts): ``COWORK_BACKEND_STATE_FILE`` names the backend's state file instead of its URL and token,
and the runtime reads it when ``CreateSession`` arrives — the session is created, its policy bundle
verified with the keys the file pins, and a task runs. Without the file, CreateSession says which
variable points nowhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from tests.integration.runtime.harness import Runtime, start_backend, tool_call


def environment(state_file: Path, gateway_url: str, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "LLM_GATEWAY_"))}
    env.update(
        {
            "COWORK_BACKEND_STATE_FILE": str(state_file),
            "LLM_GATEWAY_ENDPOINT": gateway_url,
            "LLM_GATEWAY_MODEL": "demo-model",
            "COWORK_RUNTIME_DATA_DIR": str(data_dir),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


async def test_a_runtime_started_before_its_backend_creates_the_session_once_the_backend_is_up(
    tmp_path: Path, workspace: Path
) -> None:
    backend_dir = tmp_path / "backend"
    (workspace / "notes.txt").write_text("state file notes\n")
    turns = [
        {"toolCalls": [tool_call("ReadFile", "c1", path=str(workspace / "notes.txt"))]},
        {"text": "Read it."},
    ]
    async with ScriptedGateway({"turns": turns}) as gateway:
        runtime = await Runtime.launch(
            environment(backend_dir / "backend.json", gateway.url, tmp_path / "data"), label="early"
        )
        try:
            assert not (backend_dir / "backend.json").exists(), "the runtime is up before the backend"
            with start_backend(backend_dir) as backend:
                await runtime.create_session(backend, workspace)
                end = await runtime.run_task("Read the notes")
                await runtime.shutdown()
                assert await runtime.wait_exit() == 0
        finally:
            await runtime.aclose()
    assert end["eventType"] == "task_completed", runtime.output_text()
    assert "state file notes" in str(gateway.requests[1].body)


async def test_a_state_file_that_does_not_exist_is_an_invalid_request_naming_the_variable(
    tmp_path: Path, workspace: Path
) -> None:
    async with ScriptedGateway({"turns": []}) as gateway:
        runtime = await Runtime.launch(
            environment(tmp_path / "nowhere" / "backend.json", gateway.url, tmp_path / "data"), label="none"
        )
        try:
            # Another backend only for the caller's tenant and user ids.
            with start_backend(tmp_path / "other") as backend, pytest.raises(RpcCallError) as refused:
                await runtime.create_session(backend, workspace)
        finally:
            await runtime.aclose()
    assert refused.value.error_code is ErrorCode.INVALID_REQUEST
    assert refused.value.data is not None
    assert "COWORK_BACKEND_STATE_FILE" in refused.value.data.message
