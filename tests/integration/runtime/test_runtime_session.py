"""The session methods of the real runtime over its real socket (seed 000 §3.1–§3.4).

Each test starts ``python -m agent_runtime --connect NAME`` against the shared local backend and a
scripted gateway, exactly as the desktop does, and speaks JSON-RPC to it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from contracts.methods import CreateSessionResult, PatchPreview, SessionState
from tests.integration.runtime.harness import Backend, Launch, Runtime, open_session, tool_call

INVALID_PARAMS = -32602


async def test_only_create_resume_or_shutdown_is_accepted_before_a_session_exists(
    launch: Launch, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        for method, params in [
            ("StartTask", {"sessionId": "sess_nope", "taskId": "t1", "prompt": "hi"}),
            ("GetSessionState", {"sessionId": "sess_nope"}),
            ("CancelTask", {"sessionId": "sess_nope", "taskId": "t1"}),
            ("GetPatchPreview", {"sessionId": "sess_nope"}),
            ("ApproveAction", {"sessionId": "sess_nope", "approvalId": "a", "decision": "approved"}),
        ]:
            with pytest.raises(RpcCallError) as refused:
                await rt.call(method, params)
            assert refused.value.error_code is ErrorCode.SESSION_NOT_FOUND, method
        assert rt.alive
        assert gateway.requests == []


async def test_create_session_answers_running_with_the_backends_ids_and_policy_version(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        created = CreateSessionResult.model_validate_json(
            json.dumps(await rt.create_session(backend, workspace))
        )
        state = SessionState.model_validate_json(json.dumps(await rt.state()))
        started = await rt.event("session_started")
        stored = await backend.get_json(f"/sessions/{created.session_id}")

    assert created.session_status == "SESSION_RUNNING"
    assert created.compatibility_status == "compatible"
    assert created.session_id.startswith("sess_")
    assert stored["workspaceId"] == created.workspace_id
    assert state.session_status == "SESSION_RUNNING"
    assert state.task is None
    assert started["sessionId"] == created.session_id
    assert started["workspaceId"] == created.workspace_id
    assert rt.id_chain_problems() == []


async def refusal_in_a_session(
    launch: Launch, backend: Backend, workspace: Path, call: Callable[[Runtime], Awaitable[object]]
) -> RpcCallError:
    """The error ``call`` fails with, made on a runtime with a session open (it must fail)."""
    async with ScriptedGateway([]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        with pytest.raises(RpcCallError) as refused:
            await call(rt)
    return refused.value


async def test_a_second_create_session_in_the_same_process_is_refused(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    refused = await refusal_in_a_session(
        launch, backend, workspace, lambda rt: rt.create_session(backend, workspace)
    )
    assert refused.error_code is ErrorCode.INVALID_REQUEST


async def test_an_incompatible_client_is_refused_with_the_compatibility_verdict(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        with pytest.raises(RpcCallError) as refused:
            await rt.create_session(
                backend,
                workspace,
                clientInfo={
                    "desktopAppVersion": "0.1.0",
                    "localAgentHostVersion": "99.0.0",
                    "osFamily": "Linux",
                },
            )
        assert rt.alive
        # The process stays usable: a compatible CreateSession afterwards succeeds (§3.2 step 4 "do
        # not proceed" ends that attempt, not the process).
        created = await rt.create_session(backend, workspace)
    assert refused.value.error_code is ErrorCode.INVALID_REQUEST
    assert refused.value.data is not None
    assert refused.value.data.details.get("compatibilityStatus") == "incompatible"
    assert created["sessionStatus"] == "SESSION_RUNNING"


BAD_START_TASK_PARAMS: list[tuple[dict[str, object], str]] = [
    ({"taskOptions": {"maxSteps": "many"}}, "taskOptions.maxSteps"),
    ({"taskOptions": {"maxSteps": 0}}, "taskOptions.maxSteps"),
    ({"prompt": ""}, "prompt"),
    ({"taskOptions": {"approvalMode": "sometimes"}}, "taskOptions.approvalMode"),
    ({"taskOptions": {"maxSteps": 5, "surprise": True}}, "taskOptions.surprise"),
]


async def test_bad_start_task_params_are_invalid_params_naming_the_field(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        for params, field in BAD_START_TASK_PARAMS:
            with pytest.raises(RpcCallError) as refused:
                await rt.call(
                    "StartTask", {"sessionId": rt.session_id, "taskId": "t1", "prompt": "hi", **params}
                )
            assert refused.value.rpc_code == INVALID_PARAMS, params
            assert refused.value.error_code is ErrorCode.INVALID_REQUEST, params
            assert refused.value.data is not None
            assert field in refused.value.data.message, (params, refused.value.data.message)
            assert "pydantic" not in refused.value.data.message.lower()
        assert gateway.requests == []
        assert (await rt.state())["sessionStatus"] == "SESSION_RUNNING"


async def test_a_call_naming_another_session_is_refused(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    refused = await refusal_in_a_session(
        launch, backend, workspace, lambda rt: rt.call("GetSessionState", {"sessionId": "sess_someone_else"})
    )
    assert refused.error_code is ErrorCode.SESSION_NOT_FOUND


async def test_start_task_answers_at_once_and_a_second_one_while_it_runs_is_refused(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    # The first turn holds the stream open until released: the task is certainly running.
    script = [{"text": "Working on it", "chunkSize": 4, "holdAfterChunks": 1}, {"text": "unused"}]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        started = await rt.start_task("First job", task_id="task_a")
        await rt.event("text_chunk")
        with pytest.raises(RpcCallError) as refused:
            await rt.start_task("Second job", task_id="task_b")
        state = await rt.state()
        gateway.release()
        end = await rt.task_end("task_a")
        assert len(gateway.requests) == 1
    assert started == {"taskId": "task_a", "status": "TASK_RUNNING"}
    assert refused.value.error_code is ErrorCode.INVALID_REQUEST
    assert state["task"]["taskId"] == "task_a"
    assert state["task"]["status"] not in ("TASK_COMPLETED", "TASK_FAILED", "TASK_CANCELLED", "IDLE")
    assert end["eventType"] == "task_completed"


async def test_patch_preview_lists_the_files_the_task_wrote(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("one\n")
    script = [
        {
            "toolCalls": [
                tool_call("WriteFile", "call_new", path=str(workspace / "new.txt"), content="hello\n"),
                tool_call("WriteFile", "call_old", path=str(workspace / "old.txt"), content="two\n"),
            ]
        },
        {"text": "Both written."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        assert (await rt.run_task("Write the files"))["eventType"] == "task_completed"
        preview = PatchPreview.model_validate_json(
            json.dumps(await rt.call("GetPatchPreview", {"sessionId": rt.session_id}))
        )
    files = {Path(entry.path).name: entry for entry in preview.files}
    assert set(files) == {"new.txt", "old.txt"}
    assert files["new.txt"].status == "created"
    assert files["old.txt"].status == "modified"
    assert "+hello" in files["new.txt"].diff
    assert "-one" in files["old.txt"].diff
    assert "+two" in files["old.txt"].diff
    assert files["new.txt"].size_bytes == len("hello\n")


async def test_shutdown_completes_the_session_exits_zero_and_removes_the_checkpoint(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    script = [
        {"toolCalls": [tool_call("WriteFile", "c1", path=str(workspace / "a.txt"), content="a")]},
        {"text": "Done."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await open_session(launch, gateway.url, backend, workspace)
        assert (await rt.run_task("Write a"))["eventType"] == "task_completed"
        checkpoint = data_dir / "checkpoints" / f"{rt.session_id}.json"
        result = await rt.shutdown()
        status = await rt.wait_exit()
    assert result == {"sessionStatus": "SESSION_COMPLETED"}
    assert status == 0
    assert not checkpoint.exists()
    assert "session_completed" in rt.types()
    stored = await backend.get_json(f"/sessions/{rt.session_id}")
    assert stored["status"] != "SESSION_RUNNING"


async def test_shutdown_before_any_session_exits_cleanly(launch: Launch) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        await rt.shutdown()
        assert await rt.wait_exit() == 0


async def test_a_past_conversation_continues_in_a_new_session_from_its_history(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([{"text": "The answer is 42."}, {"text": "Still 42."}]) as gateway:
        first = await open_session(launch, gateway.url, backend, workspace)
        assert (await first.run_task("What is the answer?"))["eventType"] == "task_completed"
        await first.shutdown()
        assert first.session_id is not None
        assert first.workspace_id is not None
        history = await backend.session_history(first.workspace_id, first.session_id)
        assert history is not None

        second = await launch(gateway.url)
        created = await second.create_session(backend, workspace, history=history.to_wire())
        assert (await second.run_task("Are you sure?", task_id="task_2"))["eventType"] == "task_completed"
        state = SessionState.model_validate_json(json.dumps(await second.state()))
        sent = gateway.requests[-1].body["messages"]
        completed = await second.event("llm_request_completed")

    # The same project's workspace, a new session whose model call carried the earlier turns.
    assert created["workspaceId"] == first.workspace_id
    assert created["sessionId"] != first.session_id
    spoken = json.dumps(sent)
    assert "What is the answer?" in spoken
    assert "The answer is 42." in spoken
    assert "Are you sure?" in spoken
    assert state.max_session_tokens is not None
    assert state.max_session_tokens > 0
    assert state.session_tokens_used == completed["payload"]["sessionTokensUsed"] > 0
    assert completed["payload"]["maxSessionTokens"] == state.max_session_tokens
    continued = await backend.session_history(second.workspace_id or "", second.session_id or "")
    assert continued is not None
    assert [m.session_id for m in continued.messages] == [first.session_id] * 2 + [second.session_id] * 2


async def test_a_history_that_does_not_fit_is_refused_and_no_session_is_left_running(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        rt = await launch(gateway.url)
        foreign = {
            "workspaceId": "ws_x",
            "sessionId": "sess_a",
            "snapshotAfterTaskId": "task_1",
            "snapshotAt": "2026-01-01T00:00:00Z",
            "messages": [
                {
                    "messageId": "m1",
                    "sessionId": "sess_b",
                    "role": "user",
                    "content": "hi",
                    "timestamp": "2026-01-01T00:00:00Z",
                }
            ],
        }
        with pytest.raises(RpcCallError) as refused:
            await rt.create_session(backend, workspace, history=foreign)
        assert refused.value.error_code is ErrorCode.INVALID_REQUEST
        # The runtime holds no session and takes a good CreateSession next.
        await rt.create_session(backend, workspace)
