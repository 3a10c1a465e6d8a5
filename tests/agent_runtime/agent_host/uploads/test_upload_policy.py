"""Every upload passes ``Workspace.Upload`` and its size limit (seed 001 §5), and UploadArtifact (seed 000
§7.2) uploads a file the model names through the session's upload queue.

The real upload queue and spool, the real tool runtime behind a real dispatch, and an in-memory
Workspace Service that stores what it is sent (or is down, or refuses)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.agent_host.policy import PolicyEnforcer
from agent_runtime.agent_host.routing import ToolDispatch
from agent_runtime.agent_host.services import BackendRejected, BackendUnreachable
from agent_runtime.agent_host.uploads import SENT, PolicyAdmission, UploadQueue, UploadSpool
from agent_runtime.agent_host.uploads.artifact_tool import UploadArtifactTool
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType, Capability, ToolStatus
from contracts.errors import ErrorCode, ErrorShape
from contracts.events import EventType, check_payload
from tests.agent_runtime.agent_host.policy.bundles import enforcer
from tests.agent_runtime.agent_host.routing.support import IDS, FakeUploader, tool_call

UPLOAD_LIMIT = 64


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[EventType, dict[str, Any], str | None, str | None]] = []

    def emit(
        self,
        event_type: EventType,
        payload: dict[str, Any],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
    ) -> None:
        # Checked like the emitter checks it: the payload fits its type's contract.
        self.seen.append((event_type, check_payload(event_type, payload), task_id, step_id))


class Session:
    """What the host wires for one session: the bundle in force, the queue, the dispatch."""

    def __init__(self, tmp_path: Path, workspace: Path, *grants: dict[str, Any]) -> None:
        self.policy: PolicyEnforcer = enforcer(*grants)
        self.events = Events()
        self.service = FakeUploader()
        self.failed: list[tuple[str, str]] = []
        self.queue = UploadQueue(
            UploadSpool(tmp_path / "uploads"),
            self.service,
            origin="http://127.0.0.1:1",
            on_failed=lambda name, reason: self.failed.append((name, reason)),
            admit=PolicyAdmission(lambda: self.policy, self.events.emit),
        )
        self.dispatch = ToolDispatch(
            LocalToolRouter(workspace_root=workspace),
            workspace_roots=[str(workspace)],
            uploader=None,
            artifact_queue=self.queue,
        )
        self.dispatch.attach_upload_tool(UploadArtifactTool(self.queue, workspace_id="ws_1"))

    async def upload(self, **arguments: Any) -> Any:
        prepared = self.dispatch.prepare(tool_call("UploadArtifact", **arguments), **IDS)
        assert prepared.failure is None, prepared.failure
        return await self.dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)


READ = {"name": "File.Read"}
UPLOAD = {"name": "Workspace.Upload", "maxFileSizeBytes": UPLOAD_LIMIT}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = (tmp_path / "project").resolve()
    folder.mkdir()
    return folder


@pytest.fixture
async def session(tmp_path: Path, workspace: Path) -> AsyncIterator[Session]:
    made = Session(tmp_path, workspace, READ, UPLOAD)
    made.queue.start()
    yield made
    await made.queue.aclose()
    await made.dispatch.aclose()


async def put(
    queue: UploadQueue, name: str, content: bytes, kind: ArtifactType = ArtifactType.TOOL_OUTPUT
) -> str:
    history = kind is ArtifactType.SESSION_HISTORY
    ticket = await queue.put(
        workspace_id="ws_1",
        session_id="sess-1",
        task_id="task-1",
        step_id=None if history else "step-1",
        artifact_type=kind,
        artifact_name=name,
        content_type="application/json" if history else "text/plain",
        content=content,
        durable=history,
    )
    outcome = await queue.settle(ticket, timeout_s=10)
    assert outcome is not None
    return outcome


# ------------------------------------------------------------------ the queue's admission


async def test_an_upload_over_the_size_limit_is_skipped_with_an_event_and_never_spooled(
    session: Session, tmp_path: Path
) -> None:
    assert await put(session.queue, "small.txt", b"x" * UPLOAD_LIMIT) == SENT
    reason = await put(session.queue, "big.txt", b"x" * (UPLOAD_LIMIT + 1))
    assert "size limit of 64 bytes" in reason
    assert [request.artifact_name for request, _ in session.service.uploads] == ["small.txt"]
    assert list((tmp_path / "uploads").glob("*.upload")) == []
    assert session.failed == []  # skipped by the policy, not a failed upload
    ((event, payload, task_id, step_id),) = session.events.seen
    assert event is EventType.UPLOAD_SKIPPED
    assert payload == {
        "artifactName": "big.txt",
        "artifactType": "tool_output",
        "sizeBytes": UPLOAD_LIMIT + 1,
        "reason": reason,
        "code": "FILE_TOO_LARGE",
    }
    assert (task_id, step_id) == ("task-1", "step-1")


async def test_without_workspace_upload_not_even_the_history_is_sent(tmp_path: Path, workspace: Path) -> None:
    session = Session(tmp_path, workspace, READ)
    session.queue.start()
    try:
        reason = await put(session.queue, "session_history.json", b"{}", ArtifactType.SESSION_HISTORY)
    finally:
        await session.queue.aclose()
        await session.dispatch.aclose()
    assert reason == "Capability not granted: Workspace.Upload"
    assert session.service.uploads == []
    ((event, payload, _, step_id),) = session.events.seen
    assert (event, payload["artifactType"], payload["code"], step_id) == (
        EventType.UPLOAD_SKIPPED,
        "session_history",
        "CAPABILITY_DENIED",
        None,
    )


async def test_the_bundle_in_force_decides_each_upload(session: Session) -> None:
    """A bundle swapped in mid-session (a refresh, an administrator's change) decides the next upload."""
    assert await put(session.queue, "a.txt", b"a") == SENT
    session.policy = enforcer(READ)
    assert await put(session.queue, "b.txt", b"b") == "Capability not granted: Workspace.Upload"
    session.policy = enforcer(READ, {"name": "Workspace.Upload"})
    assert await put(session.queue, "c.txt", b"c" * 1000) == SENT
    assert [request.artifact_name for request, _ in session.service.uploads] == ["a.txt", "c.txt"]


async def test_a_tools_artifact_over_the_limit_is_skipped_and_the_tool_result_stands(
    session: Session, workspace: Path
) -> None:
    prepared = session.dispatch.prepare(
        tool_call("WriteFile", path=str(workspace / "big.txt"), content="y" * 500), **IDS
    )
    result = await session.dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)
    assert result.status is ToolStatus.SUCCEEDED
    assert (workspace / "big.txt").read_text() == "y" * 500
    (skipped,) = [
        payload for event, payload, _, _ in session.events.seen if event is EventType.UPLOAD_SKIPPED
    ]
    assert skipped["artifactType"] == "file_diff"
    assert session.service.uploads == []


# ------------------------------------------------------------------ UploadArtifact


def test_upload_artifact_is_offered_only_with_uploads_and_reads_granted(session: Session) -> None:
    def offered(*granted: Capability) -> bool:
        return "UploadArtifact" in {tool.tool_name for tool in session.dispatch.available_tools(set(granted))}

    assert offered(Capability.WORKSPACE_UPLOAD, Capability.FILE_READ)
    assert not offered(Capability.WORKSPACE_UPLOAD)
    assert not offered(Capability.FILE_READ)
    assert session.dispatch.capability_of("UploadArtifact") is Capability.WORKSPACE_UPLOAD


async def test_upload_artifact_sends_the_file_as_a_tool_output_of_the_step(
    session: Session, workspace: Path
) -> None:
    (workspace / "notes").mkdir()
    (workspace / "notes" / "summary.md").write_text("# Done\n")
    prepared = session.dispatch.prepare(tool_call("UploadArtifact", path="notes/summary.md"), **IDS)
    assert prepared.target == str(workspace / "notes" / "summary.md")
    assert prepared.facts.file_size == 7
    result = await session.dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert result.output_text is not None
    assert result.output_text.startswith("Uploaded summary.md (7 bytes, ")
    ((request, content),) = session.service.uploads
    assert content == b"# Done\n"
    assert (request.artifact_type, request.artifact_name) == (ArtifactType.TOOL_OUTPUT, "summary.md")
    assert (request.session_id, request.task_id, request.step_id) == ("sess-1", "task-1", "step-1")


async def test_upload_artifact_takes_a_name_and_a_media_type(session: Session, workspace: Path) -> None:
    (workspace / "out.bin").write_bytes(b"\x00\x01")
    result = await session.upload(
        path="out.bin", artifactName="Build output", contentType="application/x-thing"
    )
    assert result.status is ToolStatus.SUCCEEDED, result.error
    ((request, _),) = session.service.uploads
    assert (request.artifact_name, request.content_type) == ("Build output", "application/x-thing")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"artifactName": "a\nb"}, "arguments.artifactName"),
        ({"contentType": "not a type"}, "arguments.contentType"),
    ],
)
async def test_upload_artifact_refuses_a_name_or_type_the_service_would_refuse(
    session: Session, workspace: Path, arguments: dict[str, Any], field: str
) -> None:
    (workspace / "a.txt").write_text("a")
    result = await session.upload(path="a.txt", **arguments)
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.INVALID_REQUEST
    assert result.error.message.startswith(field)
    assert session.service.uploads == []


async def test_upload_artifact_of_a_missing_file_or_a_folder_fails_clearly(
    session: Session, workspace: Path
) -> None:
    missing = await session.upload(path="nope.txt")
    assert missing.error is not None
    assert missing.error.code is ErrorCode.FILE_NOT_FOUND
    (workspace / "folder").mkdir()
    folder = await session.upload(path="folder")
    assert folder.error is not None
    assert folder.error.code is ErrorCode.INVALID_REQUEST


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes of this kind are POSIX")
async def test_upload_artifact_of_a_named_pipe_is_refused_without_waiting_for_a_writer(
    session: Session, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    result = await session.upload(path="pipe")
    assert result.error is not None
    assert result.error.code is ErrorCode.INVALID_REQUEST


async def test_upload_artifact_over_the_limit_at_send_time_fails_with_the_policys_reason(
    session: Session, workspace: Path
) -> None:
    """The file grew between the policy check and the read: the queue's admission still refuses it."""
    small = workspace / "grows.log"
    small.write_text("short")
    prepared = session.dispatch.prepare(tool_call("UploadArtifact", path=str(small)), **IDS)
    small.write_text("x" * (UPLOAD_LIMIT + 10))
    result = await session.dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.WORKSPACE_UPLOAD_FAILED
    assert "size limit" in result.error.message
    assert session.service.uploads == []


async def test_upload_artifact_refused_by_the_service_fails(session: Session, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    session.service.fail_with = BackendRejected(
        ErrorShape(code=ErrorCode.RATE_LIMITED, message="artifact storage quota reached"), status=429
    )
    result = await session.upload(path="a.txt")
    assert result.status is ToolStatus.FAILED
    assert result.error is not None
    assert result.error.code is ErrorCode.WORKSPACE_UPLOAD_FAILED
    assert "artifact storage quota reached" in result.error.message


async def test_upload_artifact_while_the_service_is_down_is_kept_for_later(
    session: Session, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    session.service.fail_with = BackendUnreachable(
        ErrorCode.WORKSPACE_UPLOAD_FAILED, "The Workspace Service could not be reached", details={}
    )
    result = await session.upload(path="a.txt")
    assert result.status is ToolStatus.SUCCEEDED
    assert result.output_text is not None
    assert "will be uploaded to the workspace when the Workspace Service can be reached" in result.output_text
    assert session.queue.pending == 1


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
async def test_upload_artifact_refuses_a_path_that_moved_after_the_policy_check(
    session: Session, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    (workspace / "dir").mkdir()
    (workspace / "dir" / "a.txt").write_text("fine")
    prepared = session.dispatch.prepare(tool_call("UploadArtifact", path="dir/a.txt"), **IDS)
    (workspace / "dir" / "a.txt").unlink()
    (workspace / "dir").rmdir()
    (workspace / "dir").symlink_to(tmp_path)
    os.replace(secret, tmp_path / "a.txt")
    result = await session.dispatch.execute(prepared, workspace_id="ws_1", scope=None, **IDS)
    assert result.status is ToolStatus.FAILED
    assert session.service.uploads == []


async def test_a_history_over_the_size_limit_is_skipped_like_any_upload(session: Session) -> None:
    reason = await put(
        session.queue, "session_history.json", b"{" + b" " * UPLOAD_LIMIT + b"}", ArtifactType.SESSION_HISTORY
    )
    assert "size limit" in reason
    assert session.service.uploads == []
    ((event, payload, task_id, step_id),) = session.events.seen
    assert (event, payload["artifactType"], payload["code"]) == (
        EventType.UPLOAD_SKIPPED,
        "session_history",
        "FILE_TOO_LARGE",
    )
    assert (task_id, step_id) == ("task-1", None)
