"""``ToolDispatch.execute`` (seed 000 §7.3 step 6, §7.4 timeouts, §7.5 artifact upload) with the real
tool runtime, real processes and real files; a small fake router only where the real one cannot
misbehave on purpose."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_runtime.agent_host.routing import DEFAULT_TIMEOUTS, PreparedCall, ToolDispatch, ToolTimeouts
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ArtifactType, Capability, ToolStatus
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact, ToolDefinition, ToolRequest, ToolResult
from contracts.urls import RedirectCheck
from tests.agent_runtime.agent_host.routing.support import IDS, FakeUploader, Unreachable, tool_call
from tests.agent_runtime.tool_runtime.support import failed_with, wait_gone

WORKSPACE_ID = "ws-1"


async def run(dispatch: ToolDispatch, name: str, **arguments: Any) -> ToolResult:
    prepared = dispatch.prepare(tool_call(name, **arguments), **IDS)
    return await execute(dispatch, prepared)


async def execute(dispatch: ToolDispatch, prepared: PreparedCall) -> ToolResult:
    return await dispatch.execute(prepared, workspace_id=WORKSPACE_ID, scope=None, **IDS)


def spooled(spool_dir: Path) -> list[Path]:
    return sorted(spool_dir.iterdir()) if spool_dir.exists() else []


def processes_with(marker: str) -> list[int]:
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        if marker in (process.info["cmdline"] or []):
            found.append(process.info["pid"])
    return found


# ------------------------------------------------------------------ running and timeouts


async def test_a_relative_write_lands_in_the_workspace_and_its_diff_is_uploaded(
    dispatch: ToolDispatch, workspace: Path, uploader: FakeUploader
) -> None:
    result = await run(dispatch, "WriteFile", path="src/app.py", content="print('hi')\n")
    assert result.status is ToolStatus.SUCCEEDED, result.error
    assert (workspace / "src" / "app.py").read_text() == "print('hi')\n"
    assert result.tool_call_id == "call-1"
    ((request, content),) = uploader.uploads
    assert request.artifact_type is ArtifactType.FILE_DIFF
    assert (request.workspace_id, request.session_id, request.task_id, request.step_id) == (
        WORKSPACE_ID,
        "sess-1",
        "task-1",
        "step-1",
    )
    assert b"+print('hi')" in content
    assert result.artifact_uris == [f"cowork://workspaces/{WORKSPACE_ID}/artifacts/art_1"]
    assert result.artifacts == []


async def test_a_command_past_its_category_timeout_fails_with_timeout_and_leaves_no_process(
    router: LocalToolRouter, workspace: Path
) -> None:
    dispatch = ToolDispatch(
        router, workspace_roots=[str(workspace)], uploader=None, timeouts=ToolTimeouts(shell_s=0.2)
    )
    marker = "5.0137"  # a unique sleep argument to find the process by
    started = time.monotonic()
    result = await run(dispatch, "RunCommand", command=f"sleep {marker}")
    elapsed = time.monotonic() - started
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)
    assert result.error is not None
    assert "0.2 seconds" in result.error.message
    assert elapsed < 4.0
    assert wait_gone(processes_with(marker), timeout=5) == []


async def test_the_commands_own_timeout_argument_wins_over_the_category_default(
    router: LocalToolRouter, workspace: Path
) -> None:
    dispatch = ToolDispatch(
        router,
        workspace_roots=[str(workspace)],
        uploader=None,
        timeouts=ToolTimeouts(shell_s=0.1, grace_s=10),
    )
    result = await run(dispatch, "RunCommand", command="echo before; sleep 3", timeout=1)
    # The tool's own timeout answered (with the output so far), not the host's 0.1 s backstop.
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_TIMEOUT)
    assert result.output_text is not None
    assert "before" in result.output_text


def test_timeouts_follow_the_category_and_a_valid_own_timeout() -> None:
    timeouts = ToolTimeouts()
    assert timeouts.for_call(Capability.FILE_WRITE, {"timeout": 500}) == 30
    assert timeouts.for_call(Capability.SHELL_EXEC, {}) == 300
    assert timeouts.for_call(Capability.SHELL_EXEC, {"timeout": 5}) == 5 + timeouts.grace_s
    assert timeouts.for_call(Capability.SHELL_EXEC, {"timeout": 600}) == 600 + timeouts.grace_s
    for bad in (601, 0, -3, "5", 2.5, True, None):
        assert timeouts.for_call(Capability.SHELL_EXEC, {"timeout": bad}) == 300
    assert timeouts.for_call(Capability.NETWORK_HTTP, {}) == 60
    assert timeouts.for_call(Capability.NETWORK_HTTP, {"timeout": 90}) == 90 + timeouts.grace_s
    assert timeouts.for_call(Capability.BACKEND_TOOL_INVOKE, {}) == 120


async def test_cancelling_execute_kills_the_command_and_propagates(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    marker = "30.0173"
    fifo = workspace / "started"
    os.mkfifo(fifo)
    task = asyncio.ensure_future(run(dispatch, "RunCommand", command=f"echo go > {fifo}; sleep {marker}"))
    await asyncio.wait_for(asyncio.to_thread(fifo.read_text), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_gone(processes_with(marker), timeout=5) == []


async def test_a_prepared_failure_is_returned_without_running_anything(
    dispatch: ToolDispatch, workspace: Path
) -> None:
    prepared = dispatch.prepare(tool_call("DeleteFile", path="../escape"), **IDS)
    result = await execute(dispatch, prepared)
    assert result is prepared.failure


async def test_a_path_swapped_for_a_symlink_after_the_policy_check_is_refused(
    dispatch: ToolDispatch, workspace: Path, outside: Path
) -> None:
    (workspace / "sub").mkdir()
    prepared = dispatch.prepare(tool_call("WriteFile", path="sub/file.txt", content="pwned"), **IDS)
    assert prepared.facts.resolved_path == str(workspace / "sub" / "file.txt")
    # Between the policy check (and a possibly long approval) and the run, "sub" becomes a link out.
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    result = await execute(dispatch, prepared)
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert not (outside / "file.txt").exists()


# ------------------------------------------------------------------ a router that misbehaves


class ScriptedRouter:
    """A ToolRouter whose ``execute`` does what the test says; records releases."""

    def __init__(self, *, result: ToolResult | None = None, raises: BaseException | None = None) -> None:
        self.result = result
        self.raises = raises
        self.released: list[ToolArtifact] = []
        self.requests: list[ToolRequest] = []
        self.closed = False

    def get_available_tools(self) -> list[ToolDefinition]:
        schema = {"type": "object", "properties": {}}
        return [
            ToolDefinition(tool_name=name, description=name, input_schema=schema)
            for name in ("ReadFile", "WriteFile", "DeleteFile", "RunCommand", "HttpRequest", "Mystery")
        ]

    async def execute(
        self, request: ToolRequest, *, check_redirect: RedirectCheck | None = None
    ) -> ToolResult:
        self.requests.append(request)
        if self.raises is not None:
            raise self.raises
        assert self.result is not None
        return self.result

    def release_artifacts(self, artifacts: Sequence[ToolArtifact]) -> None:
        self.released.extend(artifacts)

    async def aclose(self) -> None:
        self.closed = True


async def run_reporting_upload_failures(
    router: ScriptedRouter,
    workspace: Path,
    uploader: FakeUploader,
    timeouts: ToolTimeouts = DEFAULT_TIMEOUTS,
) -> tuple[ToolResult, list[tuple[str, str]]]:
    """``RunCommand ls`` through a dispatch on ``router``: its result and the upload failures it reported."""
    failures: list[tuple[str, str]] = []
    dispatch = ToolDispatch(
        router,
        workspace_roots=[str(workspace)],
        uploader=uploader,
        on_upload_failed=lambda name, reason: failures.append((name, reason)),
        timeouts=timeouts,
    )
    return await run(dispatch, "RunCommand", command="ls"), failures


def command_result(*artifacts: ToolArtifact) -> ToolResult:
    return ToolResult(
        tool_name="RunCommand",
        status=ToolStatus.SUCCEEDED,
        output_text="Exit code: 0",
        artifacts=list(artifacts),
        session_id=IDS["session_id"],
        task_id=IDS["task_id"],
        step_id=IDS["step_id"],
    )


@pytest.mark.parametrize("error", [RuntimeError("boom"), TimeoutError(), ValueError("x")])
async def test_a_router_that_raises_yields_tool_execution_failed(
    workspace: Path, error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    dispatch = ToolDispatch(ScriptedRouter(raises=error), workspace_roots=[str(workspace)], uploader=None)
    with caplog.at_level(logging.ERROR):
        result = await run(dispatch, "RunCommand", command="ls")
    assert failed_with(result, ErrorCode.TOOL_EXECUTION_FAILED)
    assert result.error is not None
    assert "boom" not in result.error.message
    assert result.tool_call_id == "call-1"


async def test_a_tool_the_policy_cannot_map_is_not_offered_nor_run(workspace: Path) -> None:
    router = ScriptedRouter(result=command_result())
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=None)
    assert "Mystery" not in [d.tool_name for d in dispatch.available_tools(set(Capability))]
    result = await run(dispatch, "Mystery")
    assert failed_with(result, ErrorCode.TOOL_NOT_FOUND)
    assert router.requests == []


async def test_the_request_carries_the_ids_capability_and_a_default_workspace_scope(workspace: Path) -> None:
    router = ScriptedRouter(result=command_result())
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=None)
    await run(dispatch, "RunCommand", command="ls")
    (request,) = router.requests
    assert request.capability is Capability.SHELL_EXEC
    assert request.scope is not None
    assert request.scope.workspace_root == str(workspace)
    assert request.arguments == {"command": "ls", "cwd": str(workspace)}
    assert (request.session_id, request.task_id, request.step_id) == ("sess-1", "task-1", "step-1")


async def test_an_unreadable_spool_file_is_reported_and_still_released(
    workspace: Path, uploader: FakeUploader, tmp_path: Path
) -> None:
    missing = ToolArtifact(
        artifact_type=ArtifactType.TOOL_OUTPUT, artifact_name="stdout", data_path=str(tmp_path / "gone")
    )
    inline = ToolArtifact(artifact_type=ArtifactType.FILE_DIFF, artifact_name="a.diff", text="+x\n")
    router = ScriptedRouter(result=command_result(missing, inline))
    result, failures = await run_reporting_upload_failures(router, workspace, uploader)
    assert result.status is ToolStatus.SUCCEEDED
    assert [name for name, _ in failures] == ["stdout"]
    assert len(result.artifact_uris) == 1  # the inline one still went up
    assert router.released == [missing, inline]
    assert result.artifacts == []


async def test_an_artifact_the_service_would_refuse_is_reported_not_sent(
    workspace: Path, uploader: FakeUploader
) -> None:
    odd = ToolArtifact(
        artifact_type=ArtifactType.TOOL_OUTPUT,
        artifact_name="out\nput",
        content_type="text/plain\r\nX-Injected: 1",
        text="x",
    )
    router = ScriptedRouter(result=command_result(odd))
    result, failures = await run_reporting_upload_failures(router, workspace, uploader)
    assert result.status is ToolStatus.SUCCEEDED
    assert uploader.uploads == []
    assert len(failures) == 1
    assert router.released == [odd]


async def test_an_uploader_that_hangs_is_given_up_on_within_the_upload_timeout(workspace: Path) -> None:
    class Hanging(FakeUploader):
        async def upload_artifact(self, request: Any, *, idempotency_key: str | None = None) -> Any:
            await asyncio.Event().wait()

    artifact = ToolArtifact(artifact_type=ArtifactType.TOOL_OUTPUT, artifact_name="stdout", text="x")
    router = ScriptedRouter(result=command_result(artifact))
    result, failures = await asyncio.wait_for(
        run_reporting_upload_failures(router, workspace, Hanging(), ToolTimeouts(upload_s=0.1)), 10
    )
    assert result.status is ToolStatus.SUCCEEDED
    assert failures
    assert "did not answer" in failures[0][1]
    assert router.released == [artifact]


async def test_a_failure_callback_that_raises_does_not_cost_the_result(workspace: Path) -> None:
    artifact = ToolArtifact(artifact_type=ArtifactType.TOOL_OUTPUT, artifact_name="stdout", text="x")

    def explode(name: str, reason: str) -> None:
        raise RuntimeError("callback bug")

    dispatch = ToolDispatch(
        ScriptedRouter(result=command_result(artifact)),
        workspace_roots=[str(workspace)],
        uploader=FakeUploader(fail_with=Unreachable()),
        on_upload_failed=explode,
    )
    result = await run(dispatch, "RunCommand", command="ls")
    assert result.status is ToolStatus.SUCCEEDED


async def test_aclose_closes_the_router(workspace: Path) -> None:
    router = ScriptedRouter(result=command_result())
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=None)
    await dispatch.aclose()
    assert router.closed
