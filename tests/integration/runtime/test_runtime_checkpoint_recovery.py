"""Checkpoints that parse but cannot be used (seed 000 §9.7): every one is corrupt.

A real runtime creates a session and is killed; its checkpoint is then edited by hand into one
inconsistency at a time and a second runtime is asked to resume it. Whatever the inconsistency, the
answer is the same: a ``checkpoint_recovery_failed`` event, a ``SESSION_NOT_FOUND`` error that says
crash recovery failed (never "invalid params" or an internal error: the desktop sent nothing wrong),
and the file moved aside beside the checkpoints for diagnosis, so the next attempt does not trip on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.errors import ErrorCode
from contracts.ipc.client_core import RpcCallError
from contracts.jsonrpc import RpcErrorCode
from tests.integration.runtime.harness import Backend, Launch, open_session
from tests.integration.runtime.legacy import legacy_checkpoint

Document = dict[str, Any]
Edit = Callable[[Document], None]

STAMP = "2026-02-21T15:00:00Z"


def message(document: Document, message_id: str, role: str, **fields: Any) -> Document:
    """One thread message of the checkpoint's session, in wire form."""
    return {
        "messageId": message_id,
        "sessionId": document["sessionId"],
        "taskId": "task_1",
        "stepId": "step_1",
        "role": role,
        "content": fields.pop("content", f"{role} text"),
        "timestamp": STAMP,
        **fields,
    }


def call(call_id: str, tool: str = "ReadFile") -> Document:
    return {"toolCallId": call_id, "toolName": tool, "arguments": {"path": "a.txt"}}


def result(document: Document, message_id: str, call_id: str, tool: str = "ReadFile") -> Document:
    return message(
        document, message_id, "tool", toolCallId=call_id, toolName=tool, toolStatus="succeeded", content="ok"
    )


def with_task(document: Document, *, step_count: int = 1, max_steps: int = 10) -> None:
    document["task"] = {
        "taskId": "task_1",
        "prompt": "Read a",
        "status": "completed",
        "stepCount": step_count,
        "maxSteps": max_steps,
    }
    document["stepCursor"] = "step_1"


def thread(*build: Callable[[Document], Document]) -> Edit:
    def edit(document: Document) -> None:
        with_task(document)
        document["thread"] = [make(document) for make in build]

    return edit


def user(message_id: str) -> Callable[[Document], Document]:
    return lambda d: message(d, message_id, "user", content="Read a")


def assistant(message_id: str, *call_ids: str) -> Callable[[Document], Document]:
    calls = [call(call_id) for call_id in call_ids]
    return lambda d: message(d, message_id, "assistant", **({"toolCalls": calls} if calls else {}))


def answer(message_id: str, call_id: str) -> Callable[[Document], Document]:
    return lambda d: result(d, message_id, call_id)


def too_many_steps(document: Document) -> None:
    with_task(document, step_count=11, max_steps=10)


def set_field(name: str, value: str) -> Edit:
    def edit(document: Document) -> None:
        document[name] = value

    return edit


# Seed 000 §9.2 (what a checkpoint holds) and §9.5 (what a resume sends and checks), one row per way a
# well-formed file can still be unusable.
INCONSISTENT: dict[str, Edit] = {
    "two messages with one messageId": thread(user("m1"), assistant("m1")),
    "a tool result for an unknown call": thread(user("m1"), assistant("m2", "c1"), answer("m3", "c9")),
    "a tool result before its call": thread(user("m1"), answer("m2", "c1"), assistant("m3", "c1")),
    "an unanswered call outside the in-flight step": thread(
        user("m1"), assistant("m2", "c1"), assistant("m3"), user("m4")
    ),
    "stepCount above maxSteps": too_many_steps,
    "a policyBundleVersion longer than a resume request allows": set_field("policyBundleVersion", "v" * 200),
    "a stepCursor longer than a resume request allows": set_field("stepCursor", "s" * 200),
    "a tenantId other than the backend's session": set_field("tenantId", "tenant_someone_else"),
    "a workspaceId other than the backend's session": set_field("workspaceId", "ws_someone_else"),
    "a userId other than the backend's session": set_field("userId", "user_someone_else"),
}


async def crashed_session(
    launch: Launch, gateway_url: str, backend: Backend, workspace: Path
) -> tuple[str, str]:
    """A runtime that created a session (which writes the first checkpoint) and was SIGKILLed: the
    session's id and workspace id."""
    rt = await open_session(launch, gateway_url, backend, workspace, label="before the crash")
    await rt.kill()
    return rt.session_id or "", rt.workspace_id or ""


def moved_aside(checkpoints: Path, session_id: str) -> list[Path]:
    return sorted(checkpoints.glob(f"{session_id}.json.corrupt-*"))


@pytest.mark.parametrize("edit", INCONSISTENT.values(), ids=list(INCONSISTENT))
async def test_an_inconsistent_checkpoint_is_reported_moved_aside_and_recovery_fails_clearly(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path, edit: Edit
) -> None:
    async with ScriptedGateway([]) as gateway:
        session_id, workspace_id = await crashed_session(launch, gateway.url, backend, workspace)
        checkpoints = data_dir / "checkpoints"
        path = checkpoints / f"{session_id}.json"
        # The table is about the legacy "1.0" form, which a resume still reads (seed 002): that file
        # alone, no event log with a newer snapshot.
        document = legacy_checkpoint(json.loads(path.read_bytes()))
        (data_dir / "logs" / f"{session_id}.events.jsonl").unlink()
        edit(document)
        written = json.dumps(document).encode()
        path.write_bytes(written)

        second = await launch(gateway.url, label="after the crash")
        with pytest.raises(RpcCallError) as failed:
            await second.resume(session_id)
        event = await second.event("checkpoint_recovery_failed", timeout=10)
        assert second.alive

    error = failed.value
    assert error.rpc_code == RpcErrorCode.APPLICATION_ERROR, error.rpc_code
    assert error.error_code is ErrorCode.SESSION_NOT_FOUND
    assert error.data is not None
    assert "crash recovery failed" in error.data.message.lower()
    assert error.data.details.get("recovery") == "failed"
    assert event["sessionId"] == session_id
    assert event["workspaceId"] == workspace_id
    assert event["payload"]["reason"]
    # Kept for diagnosis, byte for byte, beside where it was; the checkpoint itself is gone.
    assert not path.exists()
    (kept,) = moved_aside(checkpoints, session_id)
    assert kept.read_bytes() == written
    assert error.data.details.get("movedTo") == kept.name


async def test_a_second_resume_after_a_failed_recovery_finds_no_checkpoint(
    launch: Launch, backend: Backend, workspace: Path, data_dir: Path
) -> None:
    async with ScriptedGateway([]) as gateway:
        session_id, _ = await crashed_session(launch, gateway.url, backend, workspace)
        path = data_dir / "checkpoints" / f"{session_id}.json"
        path.write_bytes(b'{"checkpointVersion": "1.0", "sessionId": "truncated')
        second = await launch(gateway.url)
        with pytest.raises(RpcCallError) as first:
            await second.resume(session_id)
        with pytest.raises(RpcCallError) as again:
            await second.resume(session_id)
        await second.event("checkpoint_recovery_failed", timeout=10)

    assert first.value.data is not None
    assert first.value.data.details.get("recovery") == "failed"
    assert again.value.error_code is ErrorCode.SESSION_NOT_FOUND
    assert again.value.data is not None
    assert "no checkpoint" in again.value.data.message.lower()
    assert len(second.find("checkpoint_recovery_failed")) == 1
    assert len(moved_aside(data_dir / "checkpoints", session_id)) == 1


async def test_a_continued_conversation_resumes_with_the_earlier_sessions_messages(
    launch: Launch, backend: Backend, workspace: Path
) -> None:
    """A session that continues an earlier one (seed 004 scenario B) holds that session's messages
    under their own sessionId: its checkpoint is consistent and resumes, it is not corrupt."""
    earlier = "sess_earlier_one"
    history = {
        "workspaceId": "ws_earlier",
        "sessionId": earlier,
        "snapshotAfterTaskId": "task_1",
        "snapshotAt": STAMP,
        "messages": [
            {
                "messageId": "e1",
                "sessionId": earlier,
                "taskId": "task_1",
                "role": "user",
                "content": "What is in a.txt?",
                "timestamp": STAMP,
            },
            {
                "messageId": "e2",
                "sessionId": earlier,
                "taskId": "task_1",
                "stepId": "step_1",
                "role": "assistant",
                "content": "It says hello.",
                "timestamp": STAMP,
            },
        ],
    }
    async with ScriptedGateway([{"text": "Still here."}]) as gateway:
        first = await launch(gateway.url, label="before the crash")
        await first.create_session(backend, workspace, history=history)
        session_id = first.session_id or ""
        await first.kill()
        second = await launch(gateway.url, label="after the crash")
        resumed = await second.resume(session_id)
        end = await second.run_task("And now?", task_id="task_2")
        replayed = str(gateway.requests[0].body["messages"])

    assert resumed["sessionStatus"] == "SESSION_RUNNING"
    assert end["eventType"] == "task_completed", end
    assert "It says hello." in replayed
    assert second.find("checkpoint_recovery_failed") == []
