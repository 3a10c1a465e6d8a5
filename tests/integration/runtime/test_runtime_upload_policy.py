"""Uploads under ``Workspace.Upload`` through the real runtime (seed 001 §5; issue "Artifacts"): the
model's ``UploadArtifact`` sends a project file, and is refused outside the File.Read paths or over the
size limit; without the grant nothing is uploaded — tool artifacts and the session history alike — each
skipped upload is an ``upload_skipped`` event, and the task completes all the same.

Real ``cowork-backend serve`` processes whose tenant policy an administrator set; the test reads the
Workspace Service directly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import ScriptedGateway
from tests.integration.runtime.governed import CAPABILITIES, UPLOAD_LIMIT, governed_backend, offered, policy
from tests.integration.runtime.harness import Backend, Launch, Runtime, result_text, tool_call, tool_results


@pytest.fixture(scope="module")
def upload_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    document = policy(remote_tools=["WorkspaceSearch"], uploads=True)
    yield from governed_backend(tmp_path_factory.mktemp("upload-backend"), document)


@pytest.fixture(scope="module")
def no_upload_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    document = policy(remote_tools=["WorkspaceSearch"], uploads=False)
    yield from governed_backend(tmp_path_factory.mktemp("no-upload-backend"), document)


async def artifacts(backend: Backend, rt: Runtime, kind: str) -> list[dict[str, Any]]:
    listing = await backend.get_json(
        f"/workspaces/{rt.workspace_id}/artifacts", sessionId=rt.session_id or "", artifactType=kind
    )
    found: list[dict[str, Any]] = listing["artifacts"]
    return found


async def content(backend: Backend, rt: Runtime, artifact: dict[str, Any]) -> bytes:
    async with backend.http() as http:
        response = await http.get(f"/workspaces/{rt.workspace_id}/artifacts/{artifact['artifactId']}/content")
    assert response.status_code == 200, response.text[:300]
    return response.content


async def test_upload_artifact_sends_a_project_file_and_refuses_others_or_oversized_ones(
    launch: Launch, upload_backend: Backend, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "report.md").write_text("# Findings\n\nAll green.\n")
    (workspace / "huge.log").write_bytes(b"x" * (UPLOAD_LIMIT + 1))
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not part of the project")
    script = [
        {
            "toolCalls": [
                tool_call("UploadArtifact", "call_report", path="report.md", artifactName="Findings"),
                tool_call("UploadArtifact", "call_outside", path=str(outside)),
                tool_call("UploadArtifact", "call_huge", path="huge.log"),
            ]
        },
        {"text": "The report is saved."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=upload_backend)
        await rt.create_session(upload_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await rt.run_task("Save the report to the workspace", timeout=60)
        gateway.assert_done()
        first, second = (request.body for request in gateway.requests)
        outputs = await artifacts(upload_backend, rt, "tool_output")
        stored = [await content(upload_backend, rt, artifact) for artifact in outputs]
        history = await upload_backend.session_history(rt.workspace_id or "", rt.session_id or "")

    assert end["eventType"] == "task_completed", end
    assert "UploadArtifact" in offered(first)
    report, elsewhere, huge = tool_results(second)
    assert not report.get("is_error"), result_text(report)
    assert "Uploaded Findings" in result_text(report)
    assert elsewhere.get("is_error")
    assert f"Path not in allowed paths: {outside}" in result_text(elsewhere)
    assert huge.get("is_error")
    assert "size limit" in result_text(huge)
    assert [artifact["artifactName"] for artifact in outputs] == ["Findings"]
    assert stored == [b"# Findings\n\nAll green.\n"]
    completed = {e["payload"]["toolCallId"]: e["payload"]["status"] for e in rt.find("tool_completed")}
    assert completed == {"call_report": "succeeded", "call_outside": "denied", "call_huge": "denied"}
    assert history is not None  # the history fits the limit and went as usual
    assert rt.find("upload_skipped") == []


async def test_without_workspace_upload_nothing_is_uploaded_and_the_task_completes(
    launch: Launch, no_upload_backend: Backend, workspace: Path
) -> None:
    (workspace / "report.md").write_text("# Findings\n")
    script = [
        {
            "toolCalls": [
                tool_call("WriteFile", "call_write", path=str(workspace / "notes.txt"), content="remember\n"),
                tool_call("UploadArtifact", "call_upload", path="report.md"),
            ]
        },
        {"text": "Notes written."},
    ]
    async with ScriptedGateway(script) as gateway:
        rt = await launch(gateway.url, backend=no_upload_backend)
        await rt.create_session(no_upload_backend, workspace, supportedCapabilities=CAPABILITIES)
        end = await rt.run_task("Write the notes", timeout=60)
        gateway.assert_done()
        first, second = (request.body for request in gateway.requests)
        diffs = await artifacts(no_upload_backend, rt, "file_diff")
        outputs = await artifacts(no_upload_backend, rt, "tool_output")
        history = await no_upload_backend.session_history(rt.workspace_id or "", rt.session_id or "")
        await rt.shutdown()
        status = await rt.wait_exit(timeout=30)

    assert end["eventType"] == "task_completed", end
    assert status == 0
    assert (workspace / "notes.txt").read_text() == "remember\n"
    assert "UploadArtifact" not in offered(first)
    write, upload = tool_results(second)
    assert not write.get("is_error"), result_text(write)
    assert upload.get("is_error")
    assert "Capability not granted: Workspace.Upload" in result_text(upload)
    # Nothing reached the Workspace Service: not the diff, not the history.
    assert (diffs, outputs, history) == ([], [], None)
    skipped = rt.find("upload_skipped")
    kinds = [event["payload"]["artifactType"] for event in skipped]
    assert kinds[:2] == ["file_diff", "session_history"], kinds
    for event in skipped:
        assert event["payload"]["code"] == "CAPABILITY_DENIED"
        assert event["payload"]["reason"] == "Capability not granted: Workspace.Upload"
    diff_skipped = skipped[0]
    write_completed = rt.find("tool_completed", where=lambda e: e["payload"]["toolCallId"] == "call_write")
    assert diff_skipped["stepId"] == write_completed[0]["stepId"]
    # The task's end did not wait for or fail on the history: it was skipped, not "unreachable".
    assert rt.find("artifact_upload_failed") == []
