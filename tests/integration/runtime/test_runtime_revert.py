"""Reverting the agent's file changes through the real runtime (``RevertChanges``): per file and per
task, back to before the task; refused for a file changed since the agent's last write and for a path
the policy in force does not let the session write; a past conversation's changes reviewed and
reverted from a new session; each revert in the session's events and the audit trail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.ipc.client_core import RpcCallError
from contracts.jsonrpc import RpcErrorCode
from tests.integration.runtime.harness import Backend, Launch, Runtime, eventually, rpc_error, tool_call
from tests.integration.runtime.test_runtime_observability import admin_token, audit_events


def changing_script(workspace: Path) -> list[dict[str, Any]]:
    """One task: reads a file, then creates a file, edits the one read and rewrites another."""
    return [
        {"toolCalls": [tool_call("ReadFile", "c_read", path=str(workspace / "a.txt"))]},
        {
            "toolCalls": [
                tool_call("WriteFile", "c_new", path=str(workspace / "created.txt"), content="new\n"),
                tool_call(
                    "EditFile", "c_edit", path=str(workspace / "a.txt"), oldString="hello", newString="hi"
                ),
                tool_call("WriteFile", "c_b", path=str(workspace / "b.txt"), content="rewritten\n"),
                tool_call("DeleteFile", "c_gone", path=str(workspace / "gone.txt")),
            ]
        },
        {"text": "Done."},
        {"text": "Noted."},
    ]


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("hello\n")
    (workspace / "b.txt").write_text("original b\n")
    (workspace / "gone.txt").write_text("deleted by the agent\n")
    return workspace


async def change_files(rt: Runtime) -> dict[str, Any]:
    """Run the changing script's task; the deletion asks (the policy requires it) and is approved."""
    await rt.start_task("Change the files")
    asked = await rt.event("approval_requested", timeout=20)
    assert asked["payload"]["details"]["toolName"] == "DeleteFile"
    await rt.approve(asked["payload"]["approvalId"])
    return await rt.task_end("task_1", timeout=30)


async def revert(rt: Runtime, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await rt.call("RevertChanges", {"sessionId": rt.session_id, **params})
    return result


async def refused(rt: Runtime, **params: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(RpcCallError) as caught:
        await rt.call("RevertChanges", {"sessionId": rt.session_id, **params})
    error = rpc_error(caught.value)
    assert error.data is not None
    return error.rpc_code, error.data.to_wire()


async def test_revert_per_file_and_per_task_refuses_a_file_changed_since_and_is_audited(
    launch: Launch, backend: Backend, project: Path
) -> None:
    token = admin_token(backend)
    a, b, created = project / "a.txt", project / "b.txt", project / "created.txt"
    async with ScriptedGateway(changing_script(project)) as gateway:
        rt = await launch(gateway.url)
        await rt.create_session(backend, project)
        end = await change_files(rt)
        assert end["eventType"] == "task_completed", end
        assert (a.read_text(), b.read_text(), created.read_text()) == ("hi\n", "rewritten\n", "new\n")

        preview = await rt.call("GetPatchPreview", {"sessionId": rt.session_id})
        files = {f["path"]: f for f in preview["files"]}
        assert set(files) == {str(a), str(b), str(created), str(project / "gone.txt")}
        assert all(f["revertible"] and f["taskIds"] == ["task_1"] for f in files.values())

        # One file, over the whole conversation.
        assert (await revert(rt, paths=[str(b)]))["files"] == [{"path": str(b), "action": "restored"}]
        assert b.read_text() == "original b\n"
        shown = await rt.event("changes_reverted", timeout=10)
        assert shown["payload"]["files"] == [{"path": str(b), "action": "restored"}]

        # The user edits a.txt meanwhile: the task's revert is refused, and nothing of it happens.
        a.write_text("hi, edited by the user\n")
        preview = await rt.call("GetPatchPreview", {"sessionId": rt.session_id})
        note = {f["path"]: f for f in preview["files"]}[str(a)]
        assert note["revertible"] is False
        assert "changed after the agent's last write" in note["revertNote"]
        code, shape = await refused(rt, taskId="task_1")
        # a state conflict: the same revert succeeds once the file is back as the agent left it
        assert code == RpcErrorCode.STATE_CONFLICT
        assert shape["code"] == "INVALID_REQUEST"
        assert shape["details"] == {"reason": "changedOnDisk", "path": str(a)}
        assert str(a) in shape["message"]
        assert shape["retryable"] is False
        assert created.exists()
        assert a.read_text() == "hi, edited by the user\n"

        # Back to what the agent wrote: the whole task reverts (b.txt was already reverted).
        a.write_text("hi\n")
        result = await revert(rt, taskId="task_1")
        assert sorted((f["path"], f["action"]) for f in result["files"]) == [
            (str(a), "restored"),
            (str(created), "removed"),
            (str(project / "gone.txt"), "restored"),
        ]
        assert a.read_text() == "hello\n"
        assert not created.exists()
        assert b.read_text() == "original b\n"
        assert (project / "gone.txt").read_text() == "deleted by the agent\n"
        assert (await rt.call("GetPatchPreview", {"sessionId": rt.session_id}))["files"] == []

        # The model hears of it before its next turn.
        assert (await rt.run_task("What changed?", task_id="task_2", timeout=30))[
            "eventType"
        ] == "task_completed"
        assert "The user reverted these files" in json.dumps(gateway.requests[-1].body)

        # Nothing left to revert: a clear refusal, not an internal error.
        code, shape = await refused(rt, taskId="task_1")
        assert code == RpcErrorCode.APPLICATION_ERROR
        assert shape["code"] == "FILE_NOT_FOUND"
        await rt.shutdown()
        assert await rt.wait_exit(timeout=30) == 0
    session_id = rt.session_id or ""

    async def reverts() -> list[dict[str, Any]] | None:
        found = await audit_events(backend, token, session_id)
        done = [e for e in found if e["eventType"] == "changes_reverted"]
        return done if len(done) == 2 and any(e["eventType"] == "session_completed" for e in found) else None

    audited = await eventually(reverts, timeout=20, what="the reverts in the audit trail")
    assert audited[0]["payload"]["files"] == [{"path": str(b), "action": "restored"}]
    assert audited[1]["payload"]["revertedTaskId"] == "task_1"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "taskId"),
        ({"paths": []}, "paths"),
        ({"paths": ["relative.txt"]}, "paths[0]"),
        ({"paths": [""]}, "paths"),
        ({"taskId": "task_1", "changeSessionId": "../../etc"}, "changeSessionId"),
        ({"taskId": 7}, "taskId"),
        ({"taskId": "task_1", "surprise": True}, "surprise"),
    ],
)
async def test_bad_params_are_invalid_params_never_internal_errors(
    launch: Launch, backend: Backend, project: Path, params: dict[str, Any], field: str
) -> None:
    async with ScriptedGateway([{"text": "Nothing."}]) as gateway:
        rt = await launch(gateway.url)
        await rt.create_session(backend, project)
        code, shape = await refused(rt, **params)
    assert code == RpcErrorCode.INVALID_PARAMS, shape
    assert shape["code"] == "INVALID_REQUEST"
    assert field.split("[")[0] in shape["message"] + str(shape["details"])


async def test_a_past_conversation_is_reviewed_and_reverted_from_a_new_session_within_the_policy(
    launch: Launch, backend: Backend, project: Path, tmp_path: Path
) -> None:
    a, created = project / "a.txt", project / "created.txt"
    async with ScriptedGateway(changing_script(project)) as gateway:
        first = await launch(gateway.url)
        await first.create_session(backend, project)
        assert (await change_files(first))["eventType"] == "task_completed"
        await first.shutdown()
        assert await first.wait_exit(timeout=30) == 0
    old = first.session_id

    # Opened again from history on another project folder: the policy lets it write only there.
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    async with ScriptedGateway([{"text": "Nothing."}]) as gateway:
        other = await launch(gateway.url)
        await other.create_session(backend, elsewhere)
        code, shape = await refused(other, changeSessionId=old, taskId="task_1")
        assert code == RpcErrorCode.APPLICATION_ERROR, shape
        assert shape["code"] == "CAPABILITY_DENIED", shape
        assert shape["details"]["path"].startswith(str(project))
        assert created.exists()
        assert a.read_text() == "hi\n"

    async with ScriptedGateway([{"text": "Nothing."}]) as gateway:
        rt = await launch(gateway.url)
        await rt.create_session(backend, project)
        preview = await rt.call("GetPatchPreview", {"sessionId": rt.session_id, "earlierSessionIds": [old]})
        files = {f["path"]: f for f in preview["files"]}
        assert set(files) == {str(a), str(project / "b.txt"), str(created), str(project / "gone.txt")}
        assert all(f["sessionId"] == old and f["revertible"] for f in files.values())
        assert "+hi" in files[str(a)]["diff"]
        assert files[str(created)]["status"] == "created"
        result = await revert(rt, changeSessionId=old, paths=[str(created), str(a)])
        assert [f["action"] for f in result["files"]] == ["removed", "restored"]
        assert not created.exists()
        assert a.read_text() == "hello\n"
        shown = await rt.event("changes_reverted", timeout=10)
        assert shown["payload"]["changeSessionId"] == old
